"""A SQLite chat store walked session by session: a sessions table, then its messages in order.

Several agents keep every conversation in one SQLite database of the same
shape (Goose's ``sessions.db``, Hermes Agent's ``state.db``): a ``sessions``
table whose rows carry a conversation's project, branch and model, and a
``messages`` table whose rows name their session and are read in the order the
agent itself reads them back. ``walk_chat_store`` does what is common:

* opens the read-only copy with its -wal applied (``formats/database.py``), so
  the newest rows, not yet checkpointed, are read; only real tables are read
  (``view/sqlite_safe.py``: a view or virtual table of that name is not, and
  FTS5 tables, which repeat message text, are never selected);
* gives each session row to the agent's ``session_rows`` and holds what it
  returns (``SessionFacts``: the columns every row of the session repeats)
  within SESSIONS_HELD_BYTES; past it one ``parser:`` row names the sessions
  not held, whose messages then carry only their session id;
* streams the messages ordered by session, then by the agent's own order, and
  gives each to ``message_rows`` with the session's facts and a call ledger
  (``formats/call_budget.py``) that lives for one session: when the session
  changes, its calls never answered get their ``parser: no result recorded``
  rows and the ledger is new;
* turns a value over the length limit into a ``parser:`` row (the rest of the
  row is read) and a database that cannot be opened or read into one.

Times: ``ns_from_sqlite_text`` reads SQLite's ``CURRENT_TIMESTAMP`` /
``datetime('now')`` text (``YYYY-MM-DD HH:MM:SS``, UTC by SQLite's definition)
and RFC 3339 text with a zone; anything else is not a time.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, over_limit

# The facts of each session held for its messages, each session counted as its characters plus
# SESSION_ENTRY_BYTES (the entry's own objects). A user's whole history is hundreds or thousands
# of sessions of a few hundred bytes each; a value can be 64 MiB and rows are unbounded.
SESSIONS_HELD_BYTES = 32 * 1024 * 1024
SESSION_ENTRY_BYTES = 200

_SQLITE_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})?$")


@dataclass(frozen=True)
class ChatTables:
    """Where one agent's store keeps its conversations (table and column names, read orders).

    ``message_order`` must begin with ``message_session``: the walk closes a
    session's calls when the session changes.
    """

    sessions: str
    session_id: str
    session_order: str
    messages: str
    message_session: str
    message_order: str


@dataclass(frozen=True)
class SessionFacts:
    """What every row of one session repeats: its id, project, branch and model."""

    session_id: str
    project_path: str = ""
    git_branch: str = ""
    model: str = ""

    def columns(self) -> dict:
        """The facts as Draft keyword arguments."""
        return {"session_id": self.session_id, "project_path": self.project_path, "git_branch": self.git_branch,
                "model": self.model}

    def cost(self) -> int:
        """Characters held for this session, plus its entry's own objects."""
        return (len(self.session_id) + len(self.project_path) + len(self.git_branch) + len(self.model)
                + SESSION_ENTRY_BYTES)


SessionRows = Callable[[dict, str], tuple[SessionFacts, Iterable[Draft]]]
MessageRows = Callable[[dict, str, SessionFacts, BoundedLedger], Iterable[Draft]]


def as_text(value) -> str:
    """A SQLite value as text: None as '', a BLOB decoded (invalid bytes replaced), numbers as written."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def ns_from_sqlite_text(value) -> int | None:
    """SQLite ``CURRENT_TIMESTAMP`` text (UTC, no zone written) or RFC 3339 with a zone, to ns; else None."""
    if not isinstance(value, str):
        return None
    if _SQLITE_UTC.match(value):
        return ns_from_iso(value.replace(" ", "T", 1) + "Z")
    return ns_from_iso(value)


class HeldSessions:
    """Session id -> SessionFacts within SESSIONS_HELD_BYTES; the sessions past it are counted."""

    def __init__(self) -> None:
        self.held: dict[str, SessionFacts] = {}
        self.spent = 0
        self.first_over = ""
        self.not_held = 0

    def add(self, facts: SessionFacts, locator: str) -> None:
        """Hold a session's facts (a later row of the same id replaces them), unless past the limit."""
        if facts.session_id in self.held:
            self.spent -= self.held[facts.session_id].cost()  # a later row of the same id replaces it
        elif self.spent + facts.cost() > SESSIONS_HELD_BYTES:
            self.first_over = self.first_over or locator
            self.not_held += 1
            return
        self.spent += facts.cost()
        self.held[facts.session_id] = facts

    def get(self, session_id: str) -> SessionFacts:
        """The facts held for a session; a session not held has its id only."""
        return self.held.get(session_id) or SessionFacts(session_id)

    def over_limit_rows(self) -> Iterator[Draft]:
        """One ``parser:`` row when sessions were not held, at the first of them."""
        if self.not_held:
            yield over_limit("sessions", f"{SESSIONS_HELD_BYTES} bytes of session facts held for their messages",
                             f"the sessions from here on were not held ({self.not_held} in all): their messages "
                             "carry only their session id", self.first_over)


def walk_chat_store(ctx: ParseContext, tables: ChatTables, session_rows: SessionRows,
                    message_rows: MessageRows,
                    more: Callable[[sqlite3.Connection], Iterable[Draft]] | None = None) -> Iterator[Draft]:
    """Every row of a chat store: its sessions, then its messages session by session, then ``more``.

    Args:
        ctx: the database's parse context.
        tables: the store's table and column names and read orders.
        session_rows: (session row, locator) -> (the session's facts, its own rows).
        message_rows: (message row, locator, its session's facts, the session's ledger) -> rows.
        more: further tables of the same database, read last on the same connection.
    """
    ledger_box: list[BoundedLedger] = [BoundedLedger()]
    yield from each_database_row(ctx, lambda connection: _walk(ctx, connection, tables, session_rows,
                                                               message_rows, more, ledger_box))
    # also after a failed read: the calls read before it are still open
    yield from _close(ledger_box[0])


def _close(ledger: BoundedLedger) -> Iterator[Draft]:
    yield from ledger.orphans()
    yield from ledger.over_limit_rows()


def _walk(ctx: ParseContext, connection: sqlite3.Connection, tables: ChatTables, session_rows: SessionRows,
          message_rows: MessageRows, more, ledger_box: list[BoundedLedger]) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, tables.messages):
        yield bad_file(f"{ctx.source.name}: no {tables.messages} table")
        return
    held = HeldSessions()
    if sqlite_safe.is_real_table(connection, tables.sessions):
        for row in _ordered(connection, tables.sessions, tables.session_order):
            locator = f"sqlite:{tables.sessions}:{as_text(row.get('_rowid'))}"
            yield from oversize_rows(row, locator)
            facts, rows = session_rows(row, locator)
            held.add(facts, locator)
            yield from rows
        yield from held.over_limit_rows()
    current: object = None
    for row in _ordered(connection, tables.messages, tables.message_order):
        locator = f"sqlite:{tables.messages}:{as_text(row.get('_rowid'))}"
        yield from oversize_rows(row, locator)
        session = as_text(row.get(tables.message_session))
        if session != current:
            yield from _close(ledger_box[0])
            ledger_box[0], current = BoundedLedger(), session
        yield from message_rows(row, locator, held.get(session), ledger_box[0])
    yield from _close(ledger_box[0])
    ledger_box[0] = BoundedLedger()
    if more is not None:
        yield from more(connection)


def _ordered(connection: sqlite3.Connection, table: str, order: str) -> Iterator[dict]:
    """A real table's stored columns, row by row in ``order`` (streamed; each row within the step budget).

    An order column the table lacks (an older schema, a damaged one) is left out
    of the order rather than failing the whole read; rowid breaks the last ties.
    """
    columns = set(sqlite_safe.stored_columns(connection, table))
    terms = [term.strip() for term in order.split(",") if term.strip().split(" ")[0] in columns]
    clause = ", ".join([*terms, "rowid"]) if _has_rowid(connection, table) else ", ".join(terms) or "1"
    return sqlite_safe.table_rows(connection, table, f"{table} rows", where=f"1 ORDER BY {clause}")


def _has_rowid(connection: sqlite3.Connection, table: str) -> bool:
    try:
        connection.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
    except sqlite3.OperationalError:  # a WITHOUT ROWID table
        return False
    return True


def real_table_rows(connection: sqlite3.Connection, table: str, order: str) -> Iterator[dict]:
    """The rows of ``table`` in ``order`` when it is a real table; none when it is missing, a view or virtual."""
    if not sqlite_safe.is_real_table(connection, table):
        return iter(())
    return _ordered(connection, table, order)
