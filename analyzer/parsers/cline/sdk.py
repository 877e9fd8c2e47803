"""Cline 4.x (SDK) sessions: ~/.cline/data/sessions/<id>/ and the db/sessions.db index.

* ``<id>.messages.json`` v1: ``{version, updated_at, agent, sessionId, messages[]}``; a
  message is ``{id, role, content[blocks], ts? (assistant only), modelInfo?{id, provider},
  metrics?}`` with ``text``, ``thinking``, ``tool_use`` and ``tool_result`` blocks, read
  by the same walk as a 3.x API history (formats/cline_tasks.py), joined by id; a file
  the prompt @-mentions is a ``file {path, content}`` block of the user message
  (cline/cline@21cb8d2 sdk/packages/core/src/runtime/orchestration/user-input-builder.ts):
  an ``attachment:`` system row, never the user's text;
* ``<id>.json``, the session manifest (source, status, ISO start and end, model, cwd,
  ``metadata.title``): one ``session:`` row, and the columns of its messages' rows;
* sessions.db ``sessions``: a ``session:`` row for each session whose manifest is not in
  the bundle (deleted, or never written), read with its -wal.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, api_rows
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record, json_document
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .tasks import TOOL_NAMES

MESSAGES_SUFFIX = ".messages.json"
SESSION_FIELDS = ("source", "status", "provider", "agent_id", "parent_session_id", "started_at", "ended_at")
FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=lambda ctx: {}, models=True, carry_time=True)


def _text(value) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


def session_text(session: dict, title: str, where: str = "") -> str:
    """``session: <title> (source=… status=… …)``: the fields a manifest or an index row records."""
    fields = [f"{key}={_text(session[key])}" for key in SESSION_FIELDS if session.get(key) not in (None, "")]
    if session.get("is_subagent") in (True, 1):
        fields.append("subagent")
    detail = " ".join(fields + ([where] if where else []))
    return f"session: {title} ({detail})" if detail else f"session: {title}"


def _manifest(ctx: ParseContext, session_id: str) -> dict:
    """The session's manifest beside its messages (``<id>.json``), or {} when absent or unreadable."""
    source = ctx.sibling(f"{session_id}.json", "sdk_manifests")
    if source is None:
        return {}
    try:
        manifest = decode_json(ctx.read(source))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _project(manifest: dict) -> str:
    for key in ("cwd", "workspace_root"):
        if isinstance(manifest.get(key), str) and manifest[key]:
            return manifest[key]
    return ""


def parse_sdk_messages(ctx: ParseContext) -> Iterator[Draft]:
    """<id>.messages.json: the lead's (or a sub-agent's) transcript, tool calls joined to results by id.

    Only assistant messages carry ``ts``; a message without one takes the time of the
    message before it (``index``), the first ones the manifest's ``started_at``.
    """
    document, problem = json_document(ctx.data, "messages.json", dict)
    if problem is not None:
        yield problem
        return
    folder = ctx.source.directory.rsplit("/", 1)[-1]
    session_id = document.get("sessionId") if isinstance(document.get("sessionId"), str) else \
        ctx.source.name[:-len(MESSAGES_SUFFIX)]
    manifest = _manifest(ctx, session_id) or _manifest(ctx, folder)
    base = {"session_id": session_id or folder, "project_path": _project(manifest)}
    started = ns_from_iso(manifest.get("started_at"))
    untimed = {"timestamp_ns": started, "timestamp_source": "index"} if started is not None else {}
    messages = document.get("messages")
    if not isinstance(messages, list):
        yield bad_record("json:/messages", "messages is not an array")
        return
    yield from api_rows(messages, FLAVOUR, base, untimed, "json:/messages")


def parse_sdk_manifest(ctx: ParseContext) -> Iterator[Draft]:
    """<id>.json: one ``session:`` row at ``started_at``, with the session's cwd and model."""
    manifest, problem = json_document(ctx.data, "session manifest", dict)
    if problem is not None:
        yield problem
        return
    session_id = manifest.get("session_id") if isinstance(manifest.get("session_id"), str) else \
        ctx.source.name[:-len(".json")]
    metadata = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
    yield Draft("system", session_text(manifest, _text(metadata.get("title"))), "file",
                timestamp_ns=ns_from_iso(manifest.get("started_at")), session_id=session_id,
                project_path=_project(manifest), model=_text(manifest.get("model")))


def _manifest_ids(ctx: ParseContext) -> frozenset:
    def load() -> frozenset:
        return frozenset(source.name[:-len(".json")] for source in ctx.related("sdk_manifests")
                         if source.directory.rsplit("/", 1)[-1] == source.name[:-len(".json")])

    return ctx.cached(("cline-sdk-manifests",), load)


def parse_sessions_db(ctx: ParseContext) -> Iterator[Draft]:
    """sessions.db (with its -wal): a ``session:`` row per session whose manifest is not in the bundle."""
    known = _manifest_ids(ctx)
    yield from each_database_row(ctx, lambda connection: _stored_sessions(connection, known))


def _stored_sessions(connection: sqlite3.Connection, known: frozenset) -> Iterator[Draft]:
    """The rows of the real ``sessions`` table (a view could compute anything), streamed."""
    if not sqlite_safe.is_real_table(connection, "sessions"):
        yield bad_file("sessions.db: no sessions table")
        return
    for row in sqlite_safe.table_rows(connection, "sessions", "sessions rows"):
        yield from _session_row(row, known)


def _session_row(raw: dict, known: frozenset) -> Iterator[Draft]:
    locator = f"sqlite:sessions:{raw['_rowid']}"
    too_long = {column: value for column, value in raw.items() if isinstance(value, sqlite_safe.Oversize)}
    yield from (bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
                for column, value in too_long.items())
    row = {column: None if column in too_long else value for column, value in raw.items()}
    session_id = _text(row.get("session_id"))
    if not session_id:
        yield bad_record(locator, "session row without a session_id")
        return
    if session_id in known:
        return  # the manifest's row stands for it
    yield Draft("system", session_text(row, _text(row.get("prompt")), "in sessions.db; no session manifest in the "
                                       "bundle"), locator,
                timestamp_ns=ns_from_iso(row.get("started_at")), session_id=session_id,
                project_path=_text(row.get("cwd") or row.get("workspace_root")), model=_text(row.get("model")))
