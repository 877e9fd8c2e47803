"""state.vscdb of a workspace or of the application / a profile: Copilot Chat's ItemTable keys.

* ``interactive.sessions`` (generation A): the sessions array, each session
  rendered as the files are. Migration to files leaves it in place, so a
  session that also has a ``chatSessions`` file gives a ``superseded:`` row and
  only the requests the file lacks.
* ``chat.ChatSessionStore.index``: one ``session: <title> (...)`` row per entry
  whose session is in no file of the bundle (deleted, or never collected); an
  entry with its file gives none (the file's rows are the session).
* ``chat/autoconfirm``: the tools the user chose to always allow, one
  ``permission setting:`` row at the file's mtime.

The database is read with its -wal (``ctx.sqlite()``): the newest rows of a
running VS Code are often only there. ``secret://`` rows are never selected
(formats/vscode_db.py). The ``.backup`` copies are secondary stores read by the
same parsers, so their rows equal to the live ones are dropped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.formats.vscode_chat import ChatSession, session_from_document, session_index, sessions_from_array
from aitrail.analyzer.formats.vscode_db import ITEM_TABLE, KeyRow, has_table, missing_table, rows_by_key
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .project import Project, project_of, storage_folder
from .render import session_rows, superseded_row
from .sessions import JSON_STORE, log_request_ids, newer_log

SESSIONS_KEY, INDEX_KEY, AUTOCONFIRM_KEY = "interactive.sessions", "chat.ChatSessionStore.index", "chat/autoconfirm"
KEYS = (SESSIONS_KEY, INDEX_KEY, AUTOCONFIRM_KEY)


def read_keys(ctx: ParseContext, keys: tuple[str, ...]) -> tuple[dict[str, KeyRow], str]:
    """The rows of ``keys`` (never a ``secret://`` one), or ({}, the reason the database cannot be read)."""
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        return {}, f"{ctx.source.name}: cannot open: {exc}"
    try:
        if not has_table(connection, ITEM_TABLE):
            return {}, f"{ctx.source.name}: {missing_table(ITEM_TABLE)}"
        found = {}
        for key in keys:
            row = next(rows_by_key(connection, key), None)
            if row is not None:
                found[key] = row
        return found, ""
    except (sqlite3.Error, MemoryError) as exc:
        return {}, f"{ctx.source.name}: cannot read: {exc}"
    finally:
        connection.close()


def session_folders(ctx: ParseContext) -> tuple[str, ...]:
    """Where this database's sessions are kept as files (workspace chatSessions, or the empty-window folder)."""
    folder = storage_folder(ctx.source.path)
    if folder:
        return (f"{folder}/chatSessions",)
    return (f"{ctx.source.directory}/emptyWindowChatSessions", f"{ctx.source.directory}/transferredChatSessions")


def session_file(ctx: ParseContext, session_id: str) -> Source | None:
    """The ``.jsonl`` (else ``.json``) of ``session_id`` beside this database, when the bundle holds one."""
    for folder in session_folders(ctx):
        found = newer_log(ctx, session_id, folder) or ctx.bundle.at(
            ctx.source.location, f"{folder}/{session_id}.json", f"{ctx.source.agent}.{JSON_STORE}")
        if found is not None:
            return found
    return None


def decoded_value(row: KeyRow) -> tuple[object, Draft | None]:
    """The row's JSON value, or (None, the ``parser:`` row saying why it has none)."""
    try:
        return row.json(), None
    except ValueError as exc:
        return None, bad_record(row.locator(), f"{row.key} is not JSON: {exc}")


def _array_sessions(ctx: ParseContext, row: KeyRow, project: Project) -> Iterator[Draft]:
    value, problem = decoded_value(row)
    if problem is not None:
        yield problem
        return
    if not isinstance(value, list):
        yield bad_record(row.locator(), f"{SESSIONS_KEY} is a JSON {type(value).__name__}, not an array")
        return
    for position, session in enumerate(sessions_from_array(value, row.locator())):
        yield from _array_session(ctx, session, f"{row.locator()}/{position}", project)


def _array_session(ctx: ParseContext, session: ChatSession, locator: str, project: Project) -> Iterator[Draft]:
    newer = session_file(ctx, session.session_id) if session.session_id else None
    skip = frozenset()
    if newer is not None:
        ids = log_request_ids(ctx, newer) if newer.name.endswith(".jsonl") else _json_ids(ctx, newer)
        skip = ids or frozenset()
        kept = sum(1 for request in session.requests if request.request_id not in skip)
        yield superseded_row(session, session.session_id, project, newer.name, kept, locator)
    yield from session_rows(session, session.session_id, project, skip=skip)


def _json_ids(ctx: ParseContext, source: Source) -> frozenset[str]:
    """The request ids of a ``.json`` session file, once per worker (empty when it cannot be read)."""
    def compute() -> frozenset[str]:
        try:
            session, _ = session_from_document(ctx.read(source))
        except MemberUnreadable:
            return frozenset()
        return frozenset(item.request_id for item in session.requests if item.request_id) if session else frozenset()

    return ctx.cached(("vscode_copilot_chat.json_ids", source.member), compute)


def _index_rows(ctx: ParseContext, row: KeyRow, array_ids: set[str], project: Project) -> Iterator[Draft]:
    value, problem = decoded_value(row)
    if problem is not None:
        yield problem
        return
    if not isinstance(value, dict) or not isinstance(value.get("entries"), dict):
        yield bad_record(row.locator(), f"{INDEX_KEY} has no entries object")
        return
    for entry in session_index(value):
        if entry.session_id in array_ids or session_file(ctx, entry.session_id) is not None:
            continue
        details = ["empty"] if entry.is_empty else []
        text = f"session: {entry.title or '(untitled)'} ({', '.join(details + ['no session file in the bundle'])})"
        yield Draft("system", text, row.locator() + entry.pointer, timestamp_ns=entry.last_message_ns,
                    timestamp_source="index" if entry.last_message_ns is not None else "none",
                    session_id=entry.session_id, project_path=project.path)


def _autoconfirm(ctx: ParseContext, row: KeyRow) -> Iterator[Draft]:
    value, problem = decoded_value(row)
    if problem is not None:
        yield problem
        return
    yield Draft("system", f"permission setting: {AUTOCONFIRM_KEY}={setting_value(value)} (from state.vscdb, "
                          "file mtime)", row.locator(), **file_mtime(ctx))


def parse_state(ctx: ParseContext) -> Iterator[Draft]:
    """A state.vscdb (or its .backup): generation A sessions, orphaned index entries, always-allowed tools."""
    rows, reason = read_keys(ctx, KEYS)
    if reason:
        yield bad_file(reason)
        return
    project = project_of(ctx)
    array_ids: set[str] = set()
    if SESSIONS_KEY in rows:
        sessions, _ = decoded_value(rows[SESSIONS_KEY])
        array_ids = {item.get("sessionId") for item in sessions if isinstance(item, dict)} \
            if isinstance(sessions, list) else set()
        yield from _array_sessions(ctx, rows[SESSIONS_KEY], project)
    if INDEX_KEY in rows:
        yield from _index_rows(ctx, rows[INDEX_KEY], array_ids, project)
    if AUTOCONFIRM_KEY in rows:
        yield from _autoconfirm(ctx, rows[AUTOCONFIRM_KEY])


def parse_workspace_state(ctx: ParseContext) -> Iterator[Draft]:
    """A workspace's state.vscdb: rows for interactive.sessions, the session index and chat/autoconfirm."""
    yield from parse_state(ctx)


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """The application's or a profile's state.vscdb: empty-window sessions, their index, chat/autoconfirm."""
    yield from parse_state(ctx)
