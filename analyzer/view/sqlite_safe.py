"""SQLite opened so that no query from an untrusted database can run unbounded.

A collected database is the subject's file: its schema can make a name that
a parser expects as a table be a VIEW over an infinite recursive CTE, or over
``zeroblob(900000000)``; a table can carry a generated column computing the
same; a real table can hold millions of rows. Against each:

- every connection has a progress handler with an instruction budget
  (STEP_BUDGET VM instructions per query, and again per row when rows are
  streamed through ``rows``): past it the query stops with QueryAborted, which
  names what the query was for;
- SQLite's heap is capped (``PRAGMA hard_heap_limit``, MAX_HEAP_BYTES; it is
  process-wide in SQLite, and the analyzer's processes use SQLite only here):
  an allocation past it fails as QueryAborted rather than taking the machine;
- where a table is expected, only a real table is read (``sqlite_master``
  type 'table', not a virtual table), and only its stored columns (``PRAGMA
  table_xinfo`` hidden 0: generated columns, hidden 2 and 3, are never read);
- values are fetched only when ``length()`` is at most MAX_VALUE_BYTES
  (characters for text, bytes for blobs); a longer one comes back as
  Oversize, which the parser reports as a ``parser:`` row;
- rows are streamed from the cursor, never fetched all at once.

The limits are listed in docs/timeline.md, "Limits of parsing".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

STEP_BUDGET = 50_000_000  # VM instructions for one query (and for each further row it streams)
PROGRESS_EVERY = 1000  # instructions between progress handler calls
MAX_HEAP_BYTES = 256 * 1024 * 1024
MAX_VALUE_BYTES = 64 * 1024 * 1024  # the same as a whole document (context.MAX_DOCUMENT_BYTES)


class QueryAborted(sqlite3.DatabaseError):
    """A query stopped by its budget or the heap limit; the message names its purpose."""


@dataclass(frozen=True)
class Oversize:
    """A value longer than MAX_VALUE_BYTES: its length, not its content."""

    length: int

    def describe(self) -> str:
        """What to say of the value instead of its content: its length and the limit it exceeds."""
        return f"{self.length} long, limit {MAX_VALUE_BYTES}"


class GuardedConnection(sqlite3.Connection):
    """A connection whose queries run within STEP_BUDGET instructions (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ticks = 0
        self.set_progress_handler(self._tick, PROGRESS_EVERY)

    def _tick(self) -> int:
        self.ticks += 1
        return 1 if self.ticks * PROGRESS_EVERY > STEP_BUDGET else 0  # nonzero interrupts the query

    def execute(self, sql: str, parameters: Sequence = ()) -> sqlite3.Cursor:  # type: ignore[override]
        """Run one statement with a fresh budget."""
        self.ticks = 0
        return super().execute(sql, parameters)


def connect(path: str, uri: bool = False) -> GuardedConnection:
    """Open ``path`` as a GuardedConnection, with the heap limit set and untrusted schema features off."""
    connection = sqlite3.connect(path, uri=uri, factory=GuardedConnection)
    connection.execute(f"PRAGMA hard_heap_limit = {MAX_HEAP_BYTES}")
    return connection


def open_copy(database: str) -> GuardedConnection:
    """Open the analyzer's copy of a database: read-only where SQLite allows it.

    A WAL database without a usable -shm cannot be opened read-only; the copy
    is then opened read-write so SQLite can recover it (the evidence itself is
    untouched). Either way no query can change the copy (query_only).
    """
    try:
        connection = connect(f"file:{database}?mode=ro", uri=True)
        connection.execute("PRAGMA schema_version").fetchone()
    except sqlite3.Error:
        connection = connect(database)
    connection.execute("PRAGMA trusted_schema = OFF")
    connection.execute("PRAGMA query_only = ON")
    return connection


def _aborted(purpose: str, exc: BaseException) -> QueryAborted:
    if isinstance(exc, MemoryError):
        return QueryAborted(f"{purpose}: stopped at SQLite's heap limit ({MAX_HEAP_BYTES} bytes)")
    if "interrupted" in str(exc):
        return QueryAborted(f"{purpose}: stopped after {STEP_BUDGET} SQLite instructions without a result")
    return QueryAborted(f"{purpose}: {exc}")


def rows(connection: sqlite3.Connection, sql: str, parameters: Sequence, purpose: str) -> Iterator[tuple]:
    """The rows of one query, streamed, each within the instruction budget; QueryAborted names ``purpose``."""
    try:
        cursor = connection.execute(sql, parameters)
        while True:
            if isinstance(connection, GuardedConnection):
                connection.ticks = 0
            row = cursor.fetchone()
            if row is None:
                return
            yield row
    except (sqlite3.OperationalError, MemoryError) as exc:
        raise _aborted(purpose, exc) from exc


def is_real_table(connection: sqlite3.Connection, name: str) -> bool:
    """True when ``name`` is an ordinary table (not a view, not a virtual table) in the main schema."""
    found = connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return found is not None and not str(found[0] or "").lstrip().upper().startswith("CREATE VIRTUAL")


def stored_columns(connection: sqlite3.Connection, table: str) -> list[str]:
    """The table's stored columns, in order: generated columns (table_xinfo hidden 2, 3) left out."""
    return [row[1] for row in connection.execute(f"PRAGMA table_xinfo({_quote(table)})") if row[6] == 0]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _capped(column: str) -> str:
    quoted = _quote(column)
    return f"length({quoted}), CASE WHEN length({quoted}) <= {MAX_VALUE_BYTES} THEN {quoted} END"


def _uncap(values: tuple) -> list:
    return [value if value is not None or not length or length <= MAX_VALUE_BYTES else Oversize(length)
            for length, value in zip(values[0::2], values[1::2], strict=True)]


def table_rows(connection: sqlite3.Connection, table: str, purpose: str, columns: Sequence[str] | None = None,
               where: str = "", parameters: Sequence = ()) -> Iterator[dict]:
    """Rows of a real table as dicts (``_rowid`` first: None in a WITHOUT ROWID table), streamed.

    Only stored columns are read (``columns`` narrows them; absent ones are
    left out); a value over MAX_VALUE_BYTES is an Oversize. The caller checks
    ``is_real_table`` first. QueryAborted names ``purpose``.
    """
    names = stored_columns(connection, table)
    if columns is not None:
        names = [name for name in names if name in columns]
    selected = ", ".join(_capped(name) for name in names) or "NULL, NULL"
    suffix = f" WHERE {where}" if where else ""
    try:
        connection.execute(f"SELECT rowid FROM {_quote(table)} LIMIT 0")
        rowid = "rowid"
    except sqlite3.OperationalError:  # a WITHOUT ROWID table
        rowid = "NULL"
    sql = f"SELECT {rowid}, {selected} FROM {_quote(table)}{suffix}"
    for values in rows(connection, sql, parameters, purpose):
        # strict=False: with no columns selected, the placeholder "NULL, NULL" yields one value that has no name
        yield dict(zip(["_rowid", *names], [values[0], *_uncap(values[1:])], strict=False))
