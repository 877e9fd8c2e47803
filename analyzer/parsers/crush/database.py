"""crush.db: sessions, their messages' parts, the file history, files read, and sessions known only as parents.

The database is read as a read-only copy with its -wal applied
(``ctx.sqlite()``), so the rows Crush wrote since the last checkpoint are
read. Order of the rows given: every session (``session metadata:``,
``subagent:``, ``task:``), then every message by session, creation time
(seconds) and rowid (insertion order: many messages share one second), each
session's totals after its messages, then the ``files`` and ``read_files``
rows, then one ``session deleted:`` row per parent id no session row holds.

Only the columns named here are read; ``files.content`` (every version of every
edited file) is measured with ``length()``, never fetched.

What is held while the file is read: the SessionBook (sessions.py), the
running session's open tool calls (a BoundedLedger, a new one per session) and
one message's columns; rows are streamed from their cursors.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .parts import Message, part_rows, text_of
from .sessions import SessionBook, Totals, session_rows, totals_of, totals_row
from .times import crush_ns

SESSION_COLUMNS = ("id", "parent_session_id", "title", "message_count", "prompt_tokens", "completion_tokens", "cost",
                   "updated_at", "created_at", "summary_message_id", "todos")
MESSAGE_COLUMNS = ("id", "session_id", "role", "parts", "model", "provider", "created_at", "finished_at",
                   "is_summary_message")
READ_COLUMNS = ("session_id", "path", "read_at")
WITHOUT_ROWID = re.compile(r"\bWITHOUT\s+ROWID\b", re.IGNORECASE)
TEXT_CAP = 65536  # characters of an id or path read by the queries written here (table_rows caps the others)


def parse_database(ctx: ParseContext) -> Iterator[Draft]:
    """crush.db: sessions, messages, file history and reads (see the module docstring for the order)."""
    yield from each_database_row(ctx, lambda connection: _rows(ctx, connection))


def _rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    tables = {name: sqlite_safe.is_real_table(connection, name)
              for name in ("sessions", "messages", "files", "read_files")}
    if not tables["sessions"] and not tables["messages"]:
        yield bad_file(f"{ctx.source.name}: no sessions or messages table")
        return
    book = SessionBook()
    if tables["sessions"]:
        order = _order(connection, "sessions", ("created_at", "id"))
        for row in sqlite_safe.table_rows(connection, "sessions", "sessions rows", SESSION_COLUMNS, order):
            locator = f"sqlite:sessions:{row.get('_rowid')}"
            yield from oversize_rows(row, locator)
            yield from session_rows(row, locator)
            book.hold(text_of(row.get("id")), totals_of(row, locator), locator)
        yield from book.full_rows()
    if tables["messages"]:
        yield from _messages(connection, book)
    yield from _unread_totals(book)
    if tables["files"]:
        yield from _file_versions(connection)
    if tables["read_files"]:
        yield from _reads(connection)
    if tables["sessions"]:
        yield from _deleted_parents(connection)


def _order(connection: sqlite3.Connection, table: str, wanted: tuple[str, ...], tail: str = "") -> str:
    """``1 ORDER BY`` the wanted columns the table stores (then ``tail``): a hostile schema can lack any of them."""
    stored = set(sqlite_safe.stored_columns(connection, table))
    keys = [f'"{name}"' for name in wanted if name in stored] + ([tail] if tail else [])
    return "1 ORDER BY " + ", ".join(keys) if keys else ""


def _has_rowid(connection: sqlite3.Connection, table: str) -> bool:
    """False for a table declared WITHOUT ROWID (its CREATE text says so), whose rowid no query may name."""
    declared = connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                                  (table,)).fetchone()
    return not (declared and WITHOUT_ROWID.search(str(declared[0] or "")))


class _Running:
    """The session whose messages are streaming by: its open calls and its last model."""

    def __init__(self, session_id: str, book: SessionBook):
        self.session_id = session_id
        self.totals: Totals | None = book.entries.get(session_id)
        self.child = book.is_child(session_id)
        self.calls = BoundedLedger()
        self.model = ""

    def close(self) -> Iterator[Draft]:
        """A ``no result recorded`` row per call left open, the ledger's limit row, and the session's totals."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()
        if self.totals is not None:
            self.totals.read = True
            row = totals_row(self.session_id, self.totals, self.model)
            if row is not None:
                yield row


def _messages(connection: sqlite3.Connection, book: SessionBook) -> Iterator[Draft]:
    tail = "rowid" if _has_rowid(connection, "messages") else ""
    order = _order(connection, "messages", ("session_id", "created_at"), tail)
    running: _Running | None = None
    for row in sqlite_safe.table_rows(connection, "messages", "messages rows", MESSAGE_COLUMNS, order):
        session_id = text_of(row.get("session_id"))
        if running is None or running.session_id != session_id:
            if running is not None:
                yield from running.close()
            running = _Running(session_id, book)
        yield from _message(row, running)
    if running is not None:
        yield from running.close()


def _message(row: dict, running: _Running) -> Iterator[Draft]:
    locator = f"sqlite:messages:{row.get('_rowid')}"
    yield from oversize_rows(row, locator)
    role, model = text_of(row.get("role")), text_of(row.get("model"))
    message = Message(text_of(row.get("id")), role, running.session_id, running.child, model,
                      crush_ns(row.get("created_at")), crush_ns(row.get("finished_at")), locator)
    parts = _parts(row.get("parts"), locator)
    if isinstance(parts, Draft):
        yield parts
        return
    if row.get("is_summary_message") not in (None, 0, "0", ""):
        yield Draft("system", f"compaction: message {message.message_id} is the session's summary "
                              "(is_summary_message); the messages before it are no longer sent to the model",
                    locator, **message.columns())
    if role == "assistant" and model and model != running.model:
        provider = text_of(row.get("provider"))
        change = f"{running.model} -> {model}" if running.model else model
        yield Draft("system", f"model: {change}" + (f" (provider {provider})" if provider else ""), locator,
                    **message.columns())
        running.model = model
    yield from part_rows(message, parts, running.calls)


def _parts(value, locator: str) -> list | Draft:
    """The message's parts array, or the ``parser:`` row saying why it cannot be read."""
    if value is None:
        return bad_record(f"{locator}/parts", "no parts")
    try:
        parts = decode_json(value if isinstance(value, (str, bytes)) else text_of(value))
    except (ValueError, UnicodeDecodeError) as exc:
        return bad_record(f"{locator}/parts", f"parts are not JSON: {exc}", text_of(value))
    if not isinstance(parts, list):
        return bad_record(f"{locator}/parts", "parts are not a JSON array", text_of(parts))
    return parts


def _unread_totals(book: SessionBook) -> Iterator[Draft]:
    """The totals rows of sessions with no message rows (their model is not known)."""
    for session_id, totals in book.entries.items():
        if not totals.read:
            row = totals_row(session_id, totals, "")
            if row is not None:
                yield row


def _file_versions(connection: sqlite3.Connection) -> Iterator[Draft]:
    """``file history:`` rows: each version the files table keeps, its size measured, its content not read."""
    stored = set(sqlite_safe.stored_columns(connection, "files"))
    wanted = [name for name in ("session_id", "path", "version", "created_at") if name in stored]
    if "path" not in stored:
        return
    size = 'length("content")' if "content" in stored else "NULL"
    rowid = "rowid" if _has_rowid(connection, "files") else "NULL"
    order = ", ".join(f'"{name}"' for name in ("session_id", "created_at", "path", "version") if name in stored)
    sql = f'SELECT {rowid}, {size}, {", ".join(_capped(name) for name in wanted)} FROM "files" ORDER BY {order}'
    for values in sqlite_safe.rows(connection, sql, (), "files rows"):
        row = dict(zip(wanted, values[2:], strict=True))
        locator = f"sqlite:files:{values[0]}"
        when = crush_ns(row.get("created_at"))
        length = f"{text_of(values[1])} characters" if values[1] is not None else "no content column"
        yield Draft("system", f"file history: {text_of(row.get('path'))} version {text_of(row.get('version'))} "
                              f"({length} kept in the files table, not shown)", locator,
                    session_id=text_of(row.get("session_id")), timestamp_ns=when,
                    timestamp_source="record" if when is not None else "none")


def _capped(column: str) -> str:
    """A column read at most TEXT_CAP characters long (a hostile id or path cannot fill the heap)."""
    return f'substr("{column}", 1, {TEXT_CAP})'


def _reads(connection: sqlite3.Connection) -> Iterator[Draft]:
    """``file read:`` rows: the last time each session read each file."""
    order = _order(connection, "read_files", ("session_id", "read_at", "path"))
    for row in sqlite_safe.table_rows(connection, "read_files", "read_files rows", READ_COLUMNS, order):
        locator = f"sqlite:read_files:{row.get('_rowid')}"
        yield from oversize_rows(row, locator)
        when = crush_ns(row.get("read_at"))
        yield Draft("system", f"file read: {text_of(row.get('path'))} (the session's last read of it)", locator,
                    session_id=text_of(row.get("session_id")), timestamp_ns=when,
                    timestamp_source="record" if when is not None else "none")


def _deleted_parents(connection: sqlite3.Connection) -> Iterator[Draft]:
    """One ``session deleted:`` row per parent id that no sessions row holds (its children survive a delete)."""
    stored = set(sqlite_safe.stored_columns(connection, "sessions"))
    if not {"id", "parent_session_id"} <= stored:
        return
    rowid = "rowid" if _has_rowid(connection, "sessions") else "NULL"
    order = "rowid" if rowid == "rowid" else '"id"'
    sql = (f'SELECT {rowid}, {_capped("id")}, {_capped("parent_session_id")} FROM "sessions" '
           'WHERE "parent_session_id" IS NOT NULL AND "parent_session_id" != \'\' AND "parent_session_id" NOT IN '
           f'(SELECT "id" FROM "sessions" WHERE "id" IS NOT NULL) ORDER BY "parent_session_id", {order}')
    previous = None
    for rowid_value, child, parent in sqlite_safe.rows(connection, sql, (), "sessions whose parent is gone"):
        if parent == previous:
            continue
        previous = parent
        yield Draft("system", f"session deleted: {text_of(parent)} (the parent of session {text_of(child)}, which "
                              "remains; a session delete removes the session's own messages and files, not its "
                              "children, and secure_delete zeroed the pages they freed)",
                    f"sqlite:sessions:{rowid_value}", session_id=text_of(parent), timestamp_source="none")
