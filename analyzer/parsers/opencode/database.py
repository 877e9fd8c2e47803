"""opencode.db (v1.2.0+): sessions, their messages and parts, todos and stored approvals.

Sessions come first (by creation time, then id); then every message with its
parts in one query (``message LEFT JOIN part``, ordered by session, message time
and id, part id; ids ascend with time), so a session's rows come out together
and a model change is seen where it happens, and the time stays O(n log n)
whatever indexes the file has (SQLite indexes the join itself where the file
has none); then the todos, the parts whose message row is gone and the stored
approvals. A message whose session row is gone is read with its own session id.
The database is a read-only copy with its -wal applied (``ctx.sqlite()``), so
the newest rows, not yet checkpointed, are read.

Only the columns named here are selected: ``session_share.secret`` and the
account and credential tables are never read.

What is held while the file is read: each session's directory and version (for its
messages and todos) within SESSIONS_HELD_BYTES, the running session's open tool calls
(a BoundedLedger, formats/call_budget.py; a new one per session) and one message's
columns; every row is streamed from its cursor.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

from . import joined
from .render import MessageInfo, message_info, message_rows, model_row, part_rows, text_of
from .sessions import is_native, session_text, todo_text

SESSION_COLUMNS = ("id", "project_id", "parent_id", "slug", "directory", "title", "version", "share_url",
                   "summary_additions", "summary_deletions", "summary_files", "permission", "time_created",
                   "time_updated", "time_archived")
ROW_COLUMNS = ("id", "session_id", "message_id", "time_created", "time_updated", "data")
TODO_COLUMNS = ("session_id", "id", "content", "status", "priority", "position", "time_created", "time_updated")
PERMISSION_COLUMNS = ("project_id", "time_created", "time_updated", "data")
# The sessions' ids and directories held for their messages and todos, each session counted as
# its characters plus SESSION_ENTRY_BYTES (the entry's own objects). A real database has
# hundreds or thousands of sessions, about 300 bytes each; a value can be 64 MiB
# (sqlite_safe.MAX_VALUE_BYTES), and rows are unbounded.
SESSIONS_HELD_BYTES = 64 * 1024 * 1024
SESSION_ENTRY_BYTES = 200


def parse_database(ctx: ParseContext) -> Iterator[Draft]:
    """opencode.db: a ``session metadata:`` row per session, then its messages' part rows, todos and rules."""
    yield from each_database_row(ctx, lambda connection: _database_rows(ctx, connection))


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    tables = {name: sqlite_safe.is_real_table(connection, name) for name in ("session", "message", "part", "todo",
                                                                             "permission")}
    if not tables["session"] and not tables["message"]:
        yield bad_file(f"{ctx.source.name}: no session or message table")
        return
    sessions = _Sessions()
    if tables["session"]:
        for session in _rows(connection, "session", SESSION_COLUMNS, "1 ORDER BY time_created, id"):
            yield from _session(ctx, session, sessions)
        yield from sessions.over_limit_rows()
    if tables["message"]:
        yield from _messages(connection, sessions, tables["part"])
    if tables["todo"]:
        for todo in _rows(connection, "todo", TODO_COLUMNS, "1 ORDER BY session_id, position"):
            yield from _todo(todo, sessions)
    if tables["part"] and tables["message"]:
        yield from _lost_parts(connection)
    if tables["permission"]:
        for row in _rows(connection, "permission", PERMISSION_COLUMNS, "1 ORDER BY project_id"):
            yield from _approvals(ctx, row)


def _rows(connection: sqlite3.Connection, table: str, names: tuple, where: str,
          parameters: tuple = ()) -> Iterator[dict]:
    return sqlite_safe.table_rows(connection, table, f"{table} rows", names, where, parameters)


def _json(row: dict, column: str, locator: str) -> tuple[object, Draft | None]:
    value = row.get(column)
    if value is None:
        return None, None
    try:
        return decode_json(value if isinstance(value, str) else bytes(value).decode("utf-8")), None
    except (ValueError, UnicodeDecodeError, TypeError) as exc:
        return None, bad_record(f"{locator}/{column}", f"not JSON: {exc}", text_of(value)[:2000])


class _Sessions:
    """Session id -> (directory, written by 1.2+), within SESSIONS_HELD_BYTES; the sessions past it are counted."""

    def __init__(self) -> None:
        self.held: dict[str, tuple[str, bool]] = {}
        self.spent = 0
        self.first_over = ""  # the locator of the first session not held
        self.not_held = 0

    def add(self, session_id: str, directory: str, native: bool, locator: str) -> None:
        """Hold a session's directory and version, unless the sessions held would pass the limit."""
        cost = len(session_id) + len(directory) + SESSION_ENTRY_BYTES
        if self.spent + cost > SESSIONS_HELD_BYTES:
            self.first_over = self.first_over or locator
            self.not_held += 1
            return
        self.spent += cost
        self.held[session_id] = (directory, native)

    def get(self, session_id: str) -> tuple[str, bool]:
        """(directory, native) of a session held; a session not read (or not held) has none, and counts as 1.2+."""
        return self.held.get(session_id, ("", True))

    def over_limit_rows(self) -> Iterator[Draft]:
        """One ``parser:`` row when sessions were not held, at the first of them."""
        if self.not_held:
            yield over_limit("sessions", f"{SESSIONS_HELD_BYTES} bytes of session ids and directories held for their "
                             "messages and todos", f"the sessions from here on were not held ({self.not_held} in "
                             "all): their messages and todos are read without the session's directory and version",
                             self.first_over)


def _session(ctx: ParseContext, session: dict, sessions: _Sessions) -> Iterator[Draft]:
    locator = f"sqlite:session:{session.get('_rowid')}"
    yield from oversize_rows(session, locator)
    session_id, directory = text_of(session.get("id")), text_of(session.get("directory"))
    sessions.add(session_id, directory, is_native(session.get("version")), locator)
    base = {"timestamp_ns": ns_from_ms(session.get("time_created")), "timestamp_source": "record",
            "session_id": session_id, "project_path": directory}
    info = {key: session.get(key) for key in SESSION_COLUMNS}
    yield Draft("system", session_text(info, ctx.source.name), locator, **base)
    rules, problem = _json(session, "permission", locator)
    if problem:
        yield problem
    elif rules is not None:
        yield Draft("system", f"permission setting: session.permission={setting_value(rules)} "
                              f"(from {ctx.source.name} session {session_id})", f"{locator}/permission", **base)


def _todo(todo: dict, sessions: _Sessions) -> Iterator[Draft]:
    where = f"sqlite:todo:{todo.get('_rowid')}"
    yield from oversize_rows(todo, where)
    session_id = text_of(todo.get("session_id"))
    directory, native = sessions.get(session_id)
    # a todo copied by the migration carries the migration's time, not its own: left untimed
    when = ns_from_ms(todo.get("time_updated")) if native else None
    yield Draft("system", todo_text(todo), where, timestamp_ns=when, session_id=session_id, project_path=directory)


class _Session:
    """The running state of one session while its messages stream by: open calls, the last model."""

    def __init__(self, session_id: str, sessions: _Sessions):
        self.session_id = session_id
        self.directory, self.native = sessions.get(session_id)
        self.calls, self.previous = BoundedLedger(), ""  # freed at the next session: a budget per session

    def finish(self) -> Iterator[Draft]:
        """A ``no result recorded`` row per call left open, and the ledger's limit row if it was reached."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()


def _messages(connection: sqlite3.Connection, sessions: _Sessions, with_parts: bool) -> Iterator[Draft]:
    """Every message, then its parts; at each change of session, that session's open tool calls."""
    current: _Session | None = None
    message_key, message_id, info, found = None, "", MessageInfo(), True
    for message, part in joined.message_parts(connection, with_parts):
        key = (message["_rowid"], text_of(message.get("id")))  # a WITHOUT ROWID table has no rowid: the id too
        if key != message_key:
            if not found:
                yield _no_parts(message_key, message_id, info)
            session_id = text_of(message.get("session_id"))
            if current is None or current.session_id != session_id:
                if current is not None:
                    yield from current.finish()
                current = _Session(session_id, sessions)
            message_key, message_id, found = key, key[1], False
            info, rows = _message(message, current)
            yield from rows
        if part is not None:
            found = True
            yield from _part(part, info, current.native, current.calls)
    if message_key is not None and not found:
        yield _no_parts(message_key, message_id, info)
    if current is not None:
        yield from current.finish()


def _no_parts(key: tuple, message_id: str, info: MessageInfo) -> Draft:
    return Draft("system", f"message without parts: {message_id} ({info.role or 'no role'})",
                 f"sqlite:message:{key[0]}", **_base(info))


def _message(message: dict, session: _Session) -> tuple[MessageInfo, list[Draft]]:
    locator = f"sqlite:message:{message.get('_rowid')}"
    rows = list(oversize_rows(message, locator))
    data, problem = _json(message, "data", locator)
    if problem or not isinstance(data, dict):
        rows.append(problem or bad_record(f"{locator}/data", "message data is not an object"))
        data = {}
    info = message_info(data, session.session_id, session.directory)
    if info.created_ns is None:
        info.created_ns = ns_from_ms(message.get("time_created"))
    if info.role == "assistant":
        rows += model_row(session.previous, info.model, locator, _base(info))
        session.previous = info.model or session.previous
    rows += message_rows(data, info, locator)
    return info, rows


def _base(info: MessageInfo) -> dict:
    return {"timestamp_ns": info.created_ns, "timestamp_source": "record", "session_id": info.session_id,
            "project_path": info.project_path, "model": info.model}


def _part(part: dict, info: MessageInfo, native: bool, calls: BoundedLedger) -> Iterator[Draft]:
    locator = f"sqlite:part:{part.get('_rowid')}"
    yield from oversize_rows(part, locator)
    data, problem = _json(part, "data", locator)
    if problem or not isinstance(data, dict):
        yield problem or bad_record(f"{locator}/data", "part data is not an object")
        return
    # a part written by 1.2+ has its own insert time; one copied by the migration has the migration's
    fallback = ns_from_ms(part.get("time_created")) if native else None
    yield from part_rows(data, info, locator, fallback if fallback is not None else info.created_ns, calls)


def _lost_parts(connection: sqlite3.Connection) -> Iterator[Draft]:
    """Parts whose message row is gone: read with their own session id, no message columns."""
    calls = BoundedLedger()
    for part in _rows(connection, "part", ROW_COLUMNS, "message_id NOT IN (SELECT id FROM message) "
                                                       "ORDER BY session_id, id"):
        yield from _part(part, MessageInfo(session_id=text_of(part.get("session_id"))), True, calls)
    yield from calls.orphans()
    yield from calls.over_limit_rows()


def _approvals(ctx: ParseContext, row: dict) -> Iterator[Draft]:
    locator = f"sqlite:permission:{row.get('_rowid')}"
    yield from oversize_rows(row, locator)
    rules, problem = _json(row, "data", locator)
    if problem:
        yield problem
        return
    yield Draft("system", f"permission setting: approved[{text_of(row.get('project_id'))}]={setting_value(rules)} "
                          f"(from {ctx.source.name} permission table: stored \"always\" approvals)", locator,
                timestamp_ns=ns_from_ms(row.get("time_updated")))


def database_ids(ctx: ParseContext, among: frozenset[str]) -> frozenset[str]:
    """The ids of ``among`` that the bundle's opencode.db files hold (sessions, messages, parts, permission projects).

    ``among`` is what the storage/ tree names (the callers' files): only those are held,
    not every id of a database, which has no limit on its rows. The storage/ tree's files
    with these ids are copies the 1.2 migration left, so they give no rows of their own. A
    database that cannot be read adds no ids (its own parser reports it).
    """
    ids: set[str] = set()
    if among:
        for source in sorted(ctx.related("opencode_db"), key=lambda found: found.member):
            ids.update(_ids_of(ctx, source, among))
    return frozenset(ids)


def _ids_of(ctx: ParseContext, source, among: frozenset[str]) -> set[str]:
    ids: set[str] = set()
    try:
        connection = ctx.sqlite(source)
    except sqlite3.Error:
        return ids
    try:
        for table, column, prefix in (("session", "id", ""), ("message", "id", ""), ("part", "id", ""),
                                      ("permission", "project_id", "permission:")):
            if sqlite_safe.is_real_table(connection, table):
                for row in sqlite_safe.table_rows(connection, table, f"{table} ids", (column,)):
                    found = prefix + text_of(row.get(column))
                    if found in among:
                        ids.add(found)
    except sqlite3.Error:
        pass  # the ids read so far still count; the database's own rows report the problem
    finally:
        connection.close()
    return ids


def has_database(ctx: ParseContext) -> bool:
    """Whether the bundle holds an opencode.db (so a session missing from it was deleted or never migrated)."""
    return ctx.cached(("opencode-has-db",), lambda: bool(ctx.related("opencode_db")))  # not a list copy per file
