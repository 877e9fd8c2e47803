"""An OpenCode-schema SQLite database: sessions, their messages and parts, todos and stored approvals.

OpenCode's opencode.db (v1.2.0+) and the kilo.db of its fork Kilo CLI (7.x) share
the schema of tables ``session``, ``message``, ``part``, ``todo`` and ``permission``
(message and part objects as JSON in ``data``, times Unix ms). The walk:

Sessions come first (by creation time, then id); then every message with its
parts in one query (``message LEFT JOIN part``, ordered by session, message time
and id, part id; ids ascend with time), so a session's rows come out together
and a model change is seen where it happens, and the time stays O(n log n)
whatever indexes the file has (SQLite indexes the join itself where the file
has none); then the todos, the parts whose message row is gone and the stored
approvals. A message whose session row is gone is read with its own session id.
The database is a read-only copy with its -wal applied (``ctx.sqlite()``), so
the newest rows, not yet checkpointed, are read.

Two shapes of ``permission`` are read, told apart by their columns: a JSON ruleset
per project (``project_id, data``: OpenCode 1.2) and one saved "always" approval per
row (``id, project_id, action, resource``: the later PermissionSaved table).

Only the columns named here are selected: ``session_share.secret`` and the
account and credential tables are never read.

What is held while the file is read: each session's directory and version (for its
messages and todos) within the caller's ``held_bytes`` (SESSIONS_HELD_BYTES unless
given), the running session's open tool calls (a BoundedLedger, formats/call_budget.py;
a new one per session) and one message's columns; every row is streamed from its cursor.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import opencode_join, opencode_parts
from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.opencode_parts import MessageInfo, text_of
from aitrail.analyzer.formats.opencode_sessions import is_native, session_text, todo_text
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

# agent and model: columns of later schemas (Kilo CLI 7.x); a column a file lacks is not selected
SESSION_COLUMNS = ("id", "project_id", "parent_id", "slug", "directory", "title", "version", "share_url",
                   "summary_additions", "summary_deletions", "summary_files", "permission", "time_created",
                   "time_updated", "time_archived", "agent", "model")
ROW_COLUMNS = ("id", "session_id", "message_id", "time_created", "time_updated", "data")
TODO_COLUMNS = ("session_id", "id", "content", "status", "priority", "position", "time_created", "time_updated")
PERMISSION_COLUMNS = ("id", "project_id", "action", "resource", "time_created", "time_updated", "data")
# The sessions' ids and directories held for their messages and todos, each session counted as
# its characters plus SESSION_ENTRY_BYTES (the entry's own objects). A real database has
# hundreds or thousands of sessions, about 300 bytes each; a value can be 64 MiB
# (sqlite_safe.MAX_VALUE_BYTES), and rows are unbounded.
SESSIONS_HELD_BYTES = 64 * 1024 * 1024
SESSION_ENTRY_BYTES = 200


def database_rows(ctx: ParseContext, connection: sqlite3.Connection,
                  held_bytes: int = SESSIONS_HELD_BYTES) -> Iterator[Draft]:
    """A ``session metadata:`` row per session, then its messages' part rows, todos, lost parts and approvals."""
    allow_json_indexes(connection)
    tables = {name: sqlite_safe.is_real_table(connection, name) for name in ("session", "message", "part", "todo",
                                                                             "permission")}
    if not tables["session"] and not tables["message"]:
        yield bad_file(f"{ctx.source.name}: no session or message table")
        return
    sessions = _Sessions(held_bytes)
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


def allow_json_indexes(connection: sqlite3.Connection) -> None:
    """Let a schema whose indexes use JSON functions load, or raise the refusal (an sqlite3.DatabaseError).

    kilo 7.7.9 creates ``part_session_step_finish_idx ON part (session_id) WHERE
    json_valid("part"."data") AND json_extract(...)`` (migration 20260907102000). With
    ``trusted_schema`` off (sqlite_safe.open_copy) SQLite 3.40 refuses to load such a schema
    at all: every query fails with "unsafe use of json_valid()". Reading does not evaluate an
    index's expressions (they run when rows are written, and the copy is query_only), views
    and generated columns are never read (sqlite_safe), and the step and heap budgets still
    hold; so for this one refusal, and only when no view or trigger exists and every index
    calls nothing but JSON functions and the pure core functions of INDEX_FUNCTIONS, the
    schema is trusted. Otherwise the refusal is raised, and the caller's ``cannot read``
    row names it; the schema, once loaded, is never queried.
    """
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return
    except sqlite3.DatabaseError as exc:
        refusal = exc
    named = _UNSAFE.search(str(refusal))
    if named is None or named.group(1).lower() not in INDEX_FUNCTIONS:
        raise refusal
    connection.execute("PRAGMA trusted_schema = ON")
    try:
        allowed = _only_pure_indexes(connection)
    except sqlite3.DatabaseError:
        allowed = False
    if not allowed:
        connection.execute("PRAGMA trusted_schema = OFF")
        raise refusal


_UNSAFE = re.compile(r"unsafe use of (\w+)\(\)")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_OPERATORS = frozenset({"and", "or", "not", "in"})  # a keyword before a parenthesis, not a call
# JSON functions, and core functions without side effects, that an index may call and still be trusted
INDEX_FUNCTIONS = frozenset({"json_valid", "json_extract", "json_type", "json_array_length", "json", "lower", "upper",
                             "length", "coalesce", "ifnull", "substr", "trim", "abs", "typeof", "instr"})


def _only_pure_indexes(connection: sqlite3.Connection) -> bool:
    """No view or trigger, and no index expression that calls a function outside INDEX_FUNCTIONS."""
    for kind, sql in sqlite_safe.rows(connection, "SELECT type, sql FROM sqlite_master", (), "schema check"):
        if kind in ("view", "trigger"):
            return False
        if kind == "index" and isinstance(sql, str):
            _, _, indexed = sql.partition(" ON ")
            _, _, expressions = indexed.partition("(")  # past the indexed table's name
            if any(name.lower() not in INDEX_FUNCTIONS | _OPERATORS for name in _CALL.findall(expressions)):
                return False
    return True


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
    """Session id -> (directory, written by 1.2+), within the bytes held; the sessions past them are counted."""

    def __init__(self, held_bytes: int) -> None:
        self.held: dict[str, tuple[str, bool]] = {}
        self.limit = held_bytes
        self.spent = 0
        self.first_over = ""  # the locator of the first session not held
        self.not_held = 0

    def add(self, session_id: str, directory: str, native: bool, locator: str) -> None:
        """Hold a session's directory and version, unless the sessions held would pass the limit."""
        cost = len(session_id) + len(directory) + SESSION_ENTRY_BYTES
        if self.spent + cost > self.limit:
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
            yield over_limit("sessions", f"{self.limit} bytes of session ids and directories held for their "
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
    for message, part in opencode_join.message_parts(connection, with_parts):
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
    info = opencode_parts.message_info(data, session.session_id, session.directory)
    if info.created_ns is None:
        info.created_ns = ns_from_ms(message.get("time_created"))
    if info.role == "assistant":
        rows += opencode_parts.model_row(session.previous, info.model, locator, _base(info))
        session.previous = info.model or session.previous
    rows += opencode_parts.message_rows(data, info, locator)
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
    when = fallback if fallback is not None else info.created_ns
    yield from opencode_parts.part_rows(data, info, locator, when, calls)


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
    if "action" in row or "resource" in row:  # the saved-approval table: one approval a row
        yield _saved_approval(ctx, row, locator)
        return
    rules, problem = _json(row, "data", locator)
    if problem:
        yield problem
        return
    yield Draft("system", f"permission setting: approved[{text_of(row.get('project_id'))}]={setting_value(rules)} "
                          f"(from {ctx.source.name} permission table: stored \"always\" approvals)", locator,
                timestamp_ns=ns_from_ms(row.get("time_updated")))


def _saved_approval(ctx: ParseContext, row: dict, locator: str) -> Draft:
    """``permission setting: approved[<project>].<permission>=<pattern>`` for one saved "always" approval."""
    action, resource = text_of(row.get("action")), text_of(row.get("resource"))
    return Draft("system", f"permission setting: approved[{text_of(row.get('project_id'))}].{action}="
                           f"{setting_value(resource)} (from {ctx.source.name} permission table: saved \"always\" "
                           f"approval {text_of(row.get('id'))})", locator, tool_name=action,
                 timestamp_ns=ns_from_ms(row.get("time_created")))
