"""VS Code ``state.vscdb``: key/value rows of ``ItemTable`` and Cursor's ``cursorDiskKV``, by key or key prefix.

Both tables have the shape ``(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``;
values are UTF-8 text (often JSON) written into the BLOB column. ItemTable holds
VS Code's own keys and every extension's globalState row; Cursor keeps its
conversations in ``cursorDiskKV`` as ``composerData:<composerId>`` and
``bubbleId:<composerId>:<bubbleId>`` rows. On a clean close VS Code copies the
database whole to ``state.vscdb.backup``, which can keep rows deleted since.

Rules kept here so no caller can get them wrong:

- ``secret://`` rows (encrypted SecretStorage) are excluded in the SQL itself
  and again in Python: never fetched, never returned, whatever the query asks;
- only a real table with stored ``key`` and ``value`` columns is read
  (sqlite_safe: a VIEW or virtual table of that name could compute anything);
  ``has_table`` lets the caller say "no such table" once;
- rows are streamed in table order within sqlite_safe's instruction budget; a
  value longer than MAX_VALUE_BYTES is an ``Oversize`` (the caller writes one
  ``parser:`` row and goes on); text is fetched losslessly as bytes, so a value
  that is not UTF-8 cannot stop the stream;
- ``scan_prefix`` asks the key's UNIQUE index for a key range (``key >= prefix AND
  key < next``), in key order, optionally keys only: reading one composer's
  bubbles costs what they hold, not the table; ``extension_row`` finds an
  extension's globalState row by its id (exact key first, then any case);
- locators follow docs/timeline.md: ``sqlite:<table>:<rowid>``, a JSON pointer
  into the value appended as ``/a/0`` (e.g. ``sqlite:ItemTable:1/taskHistory/0``).

Whether the live database or its backup wins is the caller's decision
(``backup_of`` and ``live_of`` find the other copy in the same directory).

References: research/formats-vscode-family.md 1.3 (ItemTable schema, backup; voideditor/void@b3166e7e
src/vs/base/parts/storage/node/storage.ts:L188-194, L329-331), 1.6 (secrets; mainThreadSecretState.ts:L76-78),
3.2 (cursorDiskKV keys; third-party: tony/agentgrep@51dbe540 src/agentgrep/adapters/cursor_ide.py,
michaeldhood/chatrxiv@d28513a8 docs/cursor/storage-reference.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.sqlite_safe import Oversize

ITEM_TABLE = "ItemTable"
CURSOR_TABLE = "cursorDiskKV"
TABLES = (ITEM_TABLE, CURSOR_TABLE)
SECRET_PREFIX = "secret://"
BACKUP_SUFFIX = ".backup"
# applied in SQL before any value is fetched; the Python check in _row is the second guard
_NOT_SECRET = f"substr(CAST(key AS BLOB), 1, {len(SECRET_PREFIX)}) <> CAST('{SECRET_PREFIX}' AS BLOB)"


def pointer_suffix(*parts: object) -> str:
    """``/a/b~1c/0``: RFC 6901 reference tokens, to append to a row's locator."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


@dataclass(frozen=True)
class KeyRow:
    """One row of a key/value table: ``value`` is the stored bytes, or Oversize (its length only)."""

    table: str
    rowid: int | None
    key: str
    value: bytes | Oversize

    def locator(self, *pointer: object) -> str:
        """``sqlite:<table>:<rowid>``, with a JSON pointer into the value when parts are given."""
        return f"sqlite:{self.table}:{self.rowid}{pointer_suffix(*pointer)}"

    def text(self) -> str:
        """The value as text (invalid UTF-8 replaced); ValueError for an Oversize value."""
        if isinstance(self.value, Oversize):
            raise ValueError(f"value too long to read ({self.value.describe()})")
        return self.value.decode("utf-8", "replace")

    def json(self) -> object:
        """The value decoded as JSON through decode_json; ValueError if it is not JSON, or too deep or large."""
        if isinstance(self.value, Oversize):
            raise ValueError(f"value too long to read ({self.value.describe()})")
        try:
            return decode_json(self.value.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8: {exc}") from exc


def has_table(connection: sqlite3.Connection, table: str) -> bool:
    """True when ``table`` is a real table with stored ``key`` and ``value`` columns (not a view, not virtual)."""
    try:
        if not sqlite_safe.is_real_table(connection, table):
            return False
        return {"key", "value"} <= set(sqlite_safe.stored_columns(connection, table))
    except sqlite3.Error:
        return False


def missing_table(table: str) -> str:
    """The reason for the caller's row when ``has_table`` is False, in docs/timeline.md's wording."""
    return f"cannot query {table}: no such table: {table}"


def _lossless_text(raw: bytes) -> str:
    # as text_factory: invalid UTF-8 is kept byte for byte (surrogateescape) instead of aborting the query
    return raw.decode("utf-8", "surrogateescape")


def _as_bytes(value: object) -> bytes | Oversize:
    if isinstance(value, (bytes, Oversize)):
        return value
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")  # the stored bytes exactly
    return str(value).encode("utf-8")  # an INTEGER or REAL stored in the column


def _key_text(key: object) -> str | None:
    if isinstance(key, bytes):
        return key.decode("utf-8", "replace")
    if isinstance(key, str):
        return key.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return None if key is None or isinstance(key, Oversize) else str(key)


def _stream(connection: sqlite3.Connection, table: str, purpose: str, where: str, parameters: tuple,
            matched: str, columns: tuple[str, ...] = ("key", "value")) -> Iterator[KeyRow]:
    if not has_table(connection, table):
        return
    previous = connection.text_factory
    connection.text_factory = _lossless_text  # a value that is not UTF-8 must not abort the whole query
    try:
        for row in sqlite_safe.table_rows(connection, table, purpose, columns,
                                          f"{_NOT_SECRET} AND {where}", parameters):
            stored = row.get("key")
            if isinstance(stored, Oversize):  # matched in SQL but too long to fetch: still reported, as Oversize
                yield KeyRow(table, row["_rowid"], matched, stored)
                continue
            key = _key_text(stored)
            if key is None or key.startswith(SECRET_PREFIX):
                continue  # a NULL key matches no prefix; secrets never leave this module
            yield KeyRow(table, row["_rowid"], key, _as_bytes(row.get("value")))
    finally:
        connection.text_factory = previous


def rows_by_key(connection: sqlite3.Connection, key: str, table: str = ITEM_TABLE) -> Iterator[KeyRow]:
    """The row (normally one; UNIQUE may be missing in a crafted file) whose key is exactly ``key``.

    Raises:
        sqlite_safe.QueryAborted: the query ran out of budget or heap (the message names the key).
    """
    if key.startswith(SECRET_PREFIX):
        return
    yield from _stream(connection, table, f"{table} row {key!r}", "CAST(key AS BLOB) = CAST(? AS BLOB)", (key,), key)


def rows_by_prefix(connection: sqlite3.Connection, prefix: str, table: str = ITEM_TABLE) -> Iterator[KeyRow]:
    """Every row whose key starts with ``prefix`` (``composerData:``, ``bubbleId:<composer>:``), in table order.

    The match is on the key's UTF-8 bytes (case-sensitive whatever collation the
    schema declares); an empty prefix gives every row but the secrets. A key
    itself too long to fetch comes as ``prefix`` with an Oversize value (its
    key's length), so the row is still reported.

    Raises:
        sqlite_safe.QueryAborted: the query ran out of budget or heap (the message names the prefix).
    """
    encoded = prefix.encode("utf-8")
    yield from _stream(connection, table, f"{table} rows {prefix!r}*",
                       "substr(CAST(key AS BLOB), 1, ?) = ?", (len(encoded), encoded), prefix)


def _prefix_end(prefix: str) -> str:
    """The least text above every text that starts with ``prefix`` (its last character incremented)."""
    for position in range(len(prefix) - 1, -1, -1):
        if ord(prefix[position]) < 0x10FFFF:
            return prefix[:position] + chr(ord(prefix[position]) + 1)
    return ""


def scan_prefix(connection: sqlite3.Connection, prefix: str, table: str = ITEM_TABLE,
                keys_only: bool = False, after: str | None = None) -> Iterator[KeyRow]:
    """Every row whose key starts with ``prefix``, found through the key's index, in key order.

    ``rows_by_prefix`` reads the whole table; this one asks the UNIQUE index for
    the key range first, so reading one composer's ``bubbleId:<composer>:`` rows
    costs what they hold, not the table (one range per composer keeps a whole
    database linear). The exact byte match still applies. A key stored as a BLOB
    rather than text lies outside a text range: only the whole-table functions
    see it. ``keys_only`` fetches no value (``value`` is then ``b""``); ``after``
    starts the range past that key (the rest of a range read in part, in the
    order and collation SQLite gave it).

    Raises:
        sqlite_safe.QueryAborted: the query ran out of budget or heap (the message names the prefix).
    """
    if not prefix:
        yield from rows_by_prefix(connection, prefix, table)
        return
    encoded, end = prefix.encode("utf-8"), _prefix_end(prefix)
    low = ("key > ?", after) if after is not None else ("key >= ?", prefix)
    bounds = (f"{low[0]} AND key < ?", (low[1], end)) if end else (low[0], (low[1],))
    where = f"{bounds[0]} AND substr(CAST(key AS BLOB), 1, ?) = ?"
    columns = ("key",) if keys_only else ("key", "value")
    yield from _stream(connection, table, f"{table} rows {prefix!r}*", where,
                       (*bounds[1], len(encoded), encoded), prefix, columns)


def row_at_key(connection: sqlite3.Connection, key: str, table: str = ITEM_TABLE,
               keys_only: bool = False) -> KeyRow | None:
    """The row whose key is exactly ``key`` (its bytes), found through the key's index; None if there is none.

    ``rows_by_key`` compares bytes over the whole table; this one asks the index
    first (``key = ?``), so a lookup costs one probe, not a scan of every key that
    begins with ``key``. A key stored as a BLOB is not found, as in ``scan_prefix``.

    Raises:
        sqlite_safe.QueryAborted: the query ran out of budget or heap (the message names the key).
    """
    if key.startswith(SECRET_PREFIX):
        return None
    columns = ("key",) if keys_only else ("key", "value")
    return next(_stream(connection, table, f"{table} row {key!r}", "key = ? AND CAST(key AS BLOB) = CAST(? AS BLOB)",
                        (key, key), key, columns), None)


def extension_row(connection: sqlite3.Connection, extension_id: str) -> KeyRow | None:
    """An extension's globalState (or workspaceState) row: ItemTable key ``<publisher>.<name>``.

    The key has the manifest's casing (``GitHub.copilot-chat``); VS Code matches
    identifiers without regard to case, so an exact key wins and otherwise the
    first key equal to ``extension_id`` ignoring ASCII case is taken.

    Raises:
        sqlite_safe.QueryAborted: the query ran out of budget or heap.
    """
    exact = next(rows_by_key(connection, extension_id), None)
    if exact is not None or extension_id.startswith(SECRET_PREFIX):
        return exact
    return next(_stream(connection, ITEM_TABLE, f"ItemTable row {extension_id!r} (any case)",
                        "lower(CAST(key AS TEXT)) = lower(?)", (extension_id,), extension_id), None)


def open_state(ctx: ParseContext, source: Source | None = None) -> sqlite3.Connection:
    """A read-only guarded connection to ``source`` (default: the context's own); the caller closes it.

    Raises:
        sqlite3.Error: the copy cannot be opened as a database.
    """
    return ctx.sqlite(source)


def read_prefix(ctx: ParseContext, prefix: str, table: str = ITEM_TABLE,
                source: Source | None = None) -> Iterator[KeyRow]:
    """``rows_by_prefix`` on ``source`` (default the context's), opening and closing the database around it.

    Raises:
        sqlite3.Error: the database cannot be opened or read (QueryAborted among them).
    """
    connection = open_state(ctx, source)
    try:
        yield from rows_by_prefix(connection, prefix, table)
    finally:
        connection.close()


def read_key(ctx: ParseContext, key: str, table: str = ITEM_TABLE, source: Source | None = None) -> KeyRow | None:
    """The row with exactly ``key`` in ``source`` (default the context's), or None.

    Raises:
        sqlite3.Error: the database cannot be opened or read (QueryAborted among them).
    """
    connection = open_state(ctx, source)
    try:
        return next(rows_by_key(connection, key, table), None)
    finally:
        connection.close()


def is_backup(source: Source) -> bool:
    """True for ``state.vscdb.backup`` (the copy VS Code takes at each clean close)."""
    return source.name.endswith(BACKUP_SUFFIX)


def backup_of(ctx: ParseContext) -> Source | None:
    """The ``<name>.backup`` beside the context's live database, when it was collected (same store)."""
    if is_backup(ctx.source):
        return None
    return ctx.sibling(ctx.source.name + BACKUP_SUFFIX, ctx.source.store)


def live_of(ctx: ParseContext) -> Source | None:
    """The live database beside the context's ``.backup``, when it was collected (same store)."""
    if not is_backup(ctx.source):
        return None
    return ctx.sibling(ctx.source.name[:-len(BACKUP_SUFFIX)], ctx.source.store)


def keys_in(ctx: ParseContext, source: Source, prefix: str, table: str = ITEM_TABLE) -> set[str]:
    """The keys under ``prefix`` in another copy (for the caller's live/backup dedup), cached per worker.

    A copy that cannot be read gives an empty set: the caller then keeps its
    own rows, which is the safe side (a repeat, never a loss).
    """
    def compute() -> frozenset[str]:
        try:
            return frozenset(row.key for row in read_prefix(ctx, prefix, table, source))
        except sqlite3.Error:
            return frozenset()

    return set(ctx.cached(("vscode_db.keys", source.member, table, prefix), compute))  # type: ignore[arg-type]
