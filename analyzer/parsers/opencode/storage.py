"""The JSON trees of OpenCode up to 1.1.x: storage/ (one file per entity) and the oldest per-project layout.

``storage/``: ``session/<projectID>/<sessionID>.json``, ``message/<sessionID>/<messageID>.json``,
``part/<messageID>/<partID>.json``, ``todo/<sessionID>.json``, ``permission/<projectID>.json``.
The oldest layout (before storage migration 0): ``project/<dir>/storage/session/info/<sessionID>.json``,
``.../message/<sessionID>/<messageID>.json``, ``.../part/<sessionID>/<messageID>/<partID>.json``;
the migration copied these files unchanged into storage/.

Ids are taken from the paths, as the 1.2 migration takes them. The first 1.2 run
copies the tree into opencode.db and leaves it in place, and the old migration
left the oldest layout in place: a file whose id the database (or, for the
oldest layout, storage/) also holds gives no conversation rows, so a migrated
session is counted once; its session file gives one ``legacy copy:`` row saying
so. A session found only here was deleted after the migration (or never
migrated) and is read in full.

A part file needs its message (role, model, time, session): an index of every
message and session file of both layouts is read once per worker (``ctx.cached``).
Both joins are bounded by the bundle, not by a database: the index holds one small
entry per member of the tree (as the bundle's own list of members does), and of the
ids opencode.db holds only those the tree's files name are kept (``database_copies``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.idioms import as_dict, file_mtime, setting_value
from aitrail.analyzer.formats.opencode_parts import (
    MessageInfo,
    message_info,
    message_rows,
    model_row,
    part_rows,
    text_of,
)
from aitrail.analyzer.formats.opencode_sessions import session_columns, session_text, todo_text
from aitrail.analyzer.formats.text import bad_file, bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms

from .database import database_ids, has_database

LEGACY, OLDEST = "storage", "project"
STORES = {LEGACY: "legacy_sessions", OLDEST: "project_storage_sessions"}


@dataclass(frozen=True)
class Entry:
    """What a file's path says: its kind (session, message, part) and the ids it names."""

    kind: str
    session_id: str = ""
    message_id: str = ""
    part_id: str = ""
    project_id: str = ""

    @property
    def own_id(self) -> str:
        """The id of the entity the file itself holds."""
        return {"session": self.session_id, "message": self.message_id, "part": self.part_id,
                "project": f"project:{self.project_id}"}[self.kind]


def entry_of(path: str, layout: str) -> Entry | None:
    """The entry a storage path names, or None when the path is not one of the layout's shapes."""
    parts = path.split("/")
    stem = parts[-1].removesuffix(".json")
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] != "storage":
            continue
        tail = parts[index + 1:-1]
        if layout == LEGACY and tail == ["project"]:
            return Entry("project", project_id=stem)
        if layout == LEGACY and len(tail) == 2:
            kind, owner = tail
            if kind == "session":
                return Entry("session", session_id=stem)
            if kind == "message":
                return Entry("message", session_id=owner, message_id=stem)
            if kind == "part":
                return Entry("part", message_id=owner, part_id=stem)
        if layout == OLDEST and tail[:1] == ["session"]:
            shape = tail[1:]
            if shape == ["info"]:
                return Entry("session", session_id=stem)
            if len(shape) == 2 and shape[0] == "message":
                return Entry("message", session_id=shape[1], message_id=stem)
            if len(shape) == 3 and shape[0] == "part":
                return Entry("part", session_id=shape[1], message_id=shape[2], part_id=stem)
    return None


@dataclass
class Index:
    """Every message and session of both JSON layouts: what a part file's rows need from its message.

    One entry per session, message and part file of the tree (the bundle lists each member
    too); the strings an entry keeps (directory, cwd, model) are read from that one file,
    within MAX_DOCUMENT_BYTES, so the index grows with the tree's members, never with one file.
    """

    messages: dict[str, MessageInfo] = field(default_factory=dict)
    previous_model: dict[str, str] = field(default_factory=dict)  # assistant message id -> the model before it
    directories: dict[str, str] = field(default_factory=dict)  # session id -> directory
    with_parts: set[str] = field(default_factory=set)  # message ids that have a part file
    legacy_ids: set[str] = field(default_factory=set)  # ids present in storage/ (the oldest layout's copies)


def storage_index(ctx: ParseContext) -> Index:
    """The index, built once per worker from the file paths and the session and message files."""
    return ctx.cached(("opencode-storage-index",), lambda: _build_index(ctx))


def _build_index(ctx: ParseContext) -> Index:
    index = Index()
    found: list[tuple[str, Entry, object]] = []
    for layout in (OLDEST, LEGACY):  # storage/ last: where both hold an id, its copy is the one read
        for source in sorted(ctx.related(STORES[layout]), key=lambda item: item.member):
            entry = entry_of(source.path, layout)
            if entry is None:
                continue
            if layout == LEGACY:
                index.legacy_ids.add(entry.own_id)
            if entry.kind == "part":
                index.with_parts.add(entry.message_id)
            elif entry.kind in ("session", "message"):
                found.append((layout, entry, source))
    for _, entry, source in found:
        document = _read(ctx, source)
        if entry.kind == "session":
            index.directories[entry.session_id] = text_of(document.get("directory"))
        elif entry.kind == "message":
            index.messages[entry.message_id] = message_info(document, entry.session_id, "")
    for info in index.messages.values():  # a session file without a directory: its messages' cwd
        if info.project_path and not index.directories.get(info.session_id):
            index.directories[info.session_id] = info.project_path
    for info in index.messages.values():
        info.project_path = index.directories.get(info.session_id) or info.project_path
    _model_changes(index)
    return index


def _read(ctx: ParseContext, source) -> dict:
    try:
        document = decode_json(ctx.read(source))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return {}  # the file's own parse reports it
    return document if isinstance(document, dict) else {}


def _model_changes(index: Index) -> None:
    """For each assistant message, the model its session's previous assistant message used."""
    by_session: dict[str, list[tuple[int, str]]] = {}
    for message_id, info in index.messages.items():
        if info.role == "assistant":
            by_session.setdefault(info.session_id, []).append((info.created_ns or 0, message_id))
    for ordered in by_session.values():
        previous = ""
        for _, message_id in sorted(ordered):
            index.previous_model[message_id] = previous
            previous = index.messages[message_id].model or previous


# -- the per-file parsers ---------------------------------------------------------------------------------


def parse_legacy_storage(ctx: ParseContext) -> Iterator[Draft]:
    """A storage/ session, message or part file; nothing more for ids opencode.db also holds."""
    yield from _storage_file(ctx, LEGACY)


def parse_project_storage(ctx: ParseContext) -> Iterator[Draft]:
    """A file of the oldest layout; nothing more for ids opencode.db or storage/ also holds."""
    yield from _storage_file(ctx, OLDEST)


def _storage_file(ctx: ParseContext, layout: str) -> Iterator[Draft]:
    entry = entry_of(ctx.source.path, layout)
    if entry is None:
        yield bad_file(f"{ctx.source.path}: not a session, message or part file of the storage layout")
        return
    document, problem = json_document(ctx.data, f"{entry.kind} file")
    if problem is not None:
        yield problem
        return
    copy_of = _copy_of(ctx, entry, layout)
    if copy_of:
        if entry.kind == "session":
            yield Draft("system", f"legacy copy: session {entry.session_id} ({text_of(document.get('title'))}) "
                                  f"is also in {copy_of}; its rows are read from there", "file",
                        timestamp_ns=ns_from_ms(as_dict(document.get("time")).get("created")),
                        session_id=entry.session_id, project_path=text_of(document.get("directory")))
        return
    index = storage_index(ctx)
    if entry.kind == "project":
        yield _project_row(document, entry)
    elif entry.kind == "session":
        yield from _session_file(ctx, document, entry)
    elif entry.kind == "message":
        yield from _message_file(document, entry, index)
    else:
        yield from _part_file(document, entry, index)


def database_copies(ctx: ParseContext) -> frozenset[str]:
    """The ids the tree's files name (entities, todo sessions, permission projects) that opencode.db also holds.

    Built once per worker (ctx.cached): the ids named by the members of the tree, then the
    database's ids streamed past them.
    """
    def load() -> frozenset[str]:
        named: set[str] = set()
        for layout in (LEGACY, OLDEST):
            for source in ctx.related(STORES[layout]):
                entry = entry_of(source.path, layout)
                if entry is not None:
                    named.add(entry.own_id)
        named.update(source.name.removesuffix(".json") for source in ctx.related("legacy_todos"))
        named.update("permission:" + source.name.removesuffix(".json") for source in ctx.related("legacy_permissions"))
        return database_ids(ctx, frozenset(named))

    return ctx.cached(("opencode-db-ids",), load)


def _copy_of(ctx: ParseContext, entry: Entry, layout: str) -> str:
    """Where else this file's id is read from ('' if nowhere): opencode.db, or storage/ for the oldest layout."""
    if entry.own_id in database_copies(ctx):
        return "opencode.db"
    if layout == OLDEST and entry.own_id in storage_index(ctx).legacy_ids:
        return "storage/ (copied there by storage migration 0)"
    return ""


def _project_row(document: dict, entry: Entry) -> Draft:
    """``project: <worktree> (id=..., vcs=...)``: the repository a project id (its root commit) stands for."""
    worktree = text_of(document.get("worktree"))
    return Draft("system", f"project: {worktree} (id={entry.project_id}, vcs={text_of(document.get('vcs'))})", "file",
                 timestamp_ns=ns_from_ms(as_dict(document.get("time")).get("created")), project_path=worktree)


def _session_file(ctx: ParseContext, document: dict, entry: Entry) -> Iterator[Draft]:
    columns = session_columns(document)
    columns["id"] = entry.session_id
    where = ctx.source.path
    if has_database(ctx):
        where += "; not in opencode.db: deleted after the migration, or never migrated"
    project = text_of(columns.get("directory")) or storage_index(ctx).directories.get(entry.session_id, "")
    base = {"timestamp_ns": ns_from_ms(columns.get("time_created")), "session_id": entry.session_id,
            "project_path": project}
    yield Draft("system", session_text(columns, where), "file", **base)
    if columns.get("permission") is not None:
        yield Draft("system", f"permission setting: session.permission={setting_value(columns['permission'])} "
                              f"(from {ctx.source.path})", "json:/permission", **base)


def _message_file(document: dict, entry: Entry, index: Index) -> Iterator[Draft]:
    info = message_info(document, entry.session_id, index.directories.get(entry.session_id, ""))
    base = {"timestamp_ns": info.created_ns, "session_id": info.session_id, "project_path": info.project_path,
            "model": info.model}
    if info.role == "assistant":
        yield from model_row(index.previous_model.get(entry.message_id, ""), info.model, "json:/modelID", base)
    yield from message_rows(document, info, "json:/error")
    if entry.message_id not in index.with_parts:
        yield Draft("system", f"message without parts: {entry.message_id} ({info.role or 'no role'})", "file", **base)


def _part_file(document: dict, entry: Entry, index: Index) -> Iterator[Draft]:
    info = index.messages.get(entry.message_id)
    if info is None:  # its message file is not in the bundle: the part's own session id is all there is
        session_id = entry.session_id or text_of(document.get("sessionID"))
        info = MessageInfo(session_id=session_id, project_path=index.directories.get(session_id, ""))
    calls = CallLedger()  # one part: at most one call
    yield from part_rows(document, info, "file", info.created_ns, calls)
    yield from calls.orphans()


# -- todo/ and permission/ --------------------------------------------------------------------------------


def _keyed_document(ctx: ParseContext, what: str, key: str, copy: str) -> Iterator[Draft | list]:
    """The file's JSON array, or its ``parser:`` row, or the ``legacy copy:`` row when opencode.db holds ``key``."""
    document, problem = json_document(ctx.data, what, list)
    if problem is not None:
        yield problem
    elif key in database_copies(ctx):
        yield Draft("system", f"legacy copy: {copy} also in opencode.db; its rows are read from there", "file",
                    **file_mtime(ctx))
    else:
        yield document


def parse_legacy_todo(ctx: ParseContext) -> Iterator[Draft]:
    """storage/todo/<session>.json: a ``task:`` row per item, at the file's mtime (items have no time)."""
    session_id = ctx.source.name.removesuffix(".json")
    project = storage_index(ctx).directories.get(session_id, "")
    for found in _keyed_document(ctx, "todo file", session_id, f"todo list of session {session_id} is"):
        if isinstance(found, Draft):
            found.session_id = session_id
            yield found
            continue
        for position, item in enumerate(found):
            if not isinstance(item, dict):
                yield bad_record(f"json:/{position}", "todo item is not an object", json.dumps(item)[:2000])
                continue
            yield Draft("system", todo_text(item), f"json:/{position}", session_id=session_id,
                        project_path=project, **file_mtime(ctx))


def parse_legacy_permission(ctx: ParseContext) -> Iterator[Draft]:
    """storage/permission/<project>.json: the project's stored "always" approvals, one ``permission setting:`` row."""
    project_id = ctx.source.name.removesuffix(".json")
    for found in _keyed_document(ctx, "permission file", f"permission:{project_id}",
                                 f"approvals of project {project_id} are"):
        if isinstance(found, Draft):
            yield found
            continue
        yield Draft("system", f"permission setting: approved[{project_id}]={setting_value(found)} "
                              f"(from {ctx.source.path}: stored \"always\" approvals, file mtime)", "file",
                    **file_mtime(ctx))
