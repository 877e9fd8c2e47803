"""Claude Desktop session records: the Code tab's and Cowork's ``local_<uuid>.json``.

One JSON object per session, rewritten in place (its mtime is the last write,
not the session's start). The rows a record gives (docs/agents/claude-desktop.md):

* ``session: <title> (...)`` at ``createdAt``: the desktop id, which field gave
  the project path, the times and the record's other facts;
* ``session transcript: <field>=<id>: <id>.jsonl in the bundle at <path>`` (or
  ``not in the bundle``) for every transcript the record names (``cliSessionId``,
  ``unarchivedCliSessionId``, ``preClearCliSessionId``, ``priorCliSessionIds``),
  in that transcript's session; a Cowork record also names its ``audit.jsonl``;
* ``integrity: session missing:`` when nothing in the bundle holds the
  conversation (this record is then the evidence the session existed);
* ``initial message:``, ``model:``, ``summary:`` (``recap``),
  ``session activity:`` at ``lastActivityAt``, and ``permission setting:`` rows
  for the permission fields, at the file's mtime.

The session column is the Claude Code session id (``cliSessionId``), so these
rows sort with the transcript's own rows (agent claude-code); a record without
one keeps its desktop id ``local_<uuid>``. ``authToken`` and every other key
``credential_key`` names are never read into a row.

Sample record (research/formats-more-desktop-agents.md 1.10)::

    {"sessionId":"local_1b2c3d4e-…","cliSessionId":"6e5d4c3b-…","priorCliSessionIds":["0a1b2c3d-…"],
     "title":"Fix flaky login test","cwd":"/Users/dana/src/webshop","createdAt":1788000000000,
     "lastActivityAt":1788000912345,"isArchived":false}
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import file_mtime, settings_value
from aitrail.analyzer.formats.json_values import document_or_row
from aitrail.analyzer.formats.text import excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .values import (
    CODE_TRANSCRIPTS,
    COWORK_TRANSCRIPTS,
    desktop_id,
    facts,
    first_string,
    model_of,
    ms_text,
    ms_time,
    short,
    title_of,
    transcript_ids,
    transcript_place,
)

# Fields of the record serializer (Claude.app 2.19675.0, community records.test.ts) shown as facts.
SESSION_FACTS = (
    "originCwd", "worktreePath", "worktreeName", "branch", "sourceBranch", "effort", "isArchived", "isStarred",
    "autoArchiveExempt", "titleSource", "previousTitles", "completedTurns", "scheduledTaskId", "spaceId",
    "forkedFromSessionId", "spawnedFrom", "dispatchParentId", "transcriptUnavailable", "ranInSandboxVm",
    "movedToCloud", "error", "errorCategory",
)
COWORK_FACTS = ("processName", "userSelectedFolders", "userSelectedProjectUuids", "spaceId", "effort",
                "memoryEnabled", "skillsEnabled", "pluginsEnabled", "isArchived", "scheduledTaskId",
                "titleSource", "completedTurns")
# Fields that grant or withhold permissions ([obs]: the serializer's field names; values as written).
PERMISSION_FIELDS = (
    "permissionMode", "chromePermissionMode", "chromeAllowedDomains", "alwaysAllowedReasons",
    "sessionPermissionUpdates", "enabledMcpTools", "cuAllowedApps", "cuGrantFlags", "bypassChosenInApp",
    "autoChosenInApp", "egressAllowedDomains",
)


@dataclass
class Session:
    """What the rows of one record share: the columns, the times, the desktop id and the project's source."""

    desktop: str
    kind: str  # "Code tab" or "Cowork"
    columns: dict
    created: dict
    active: dict
    project_field: str
    held: list[str] = field(default_factory=list)


def _times(record: dict, ctx: ParseContext) -> tuple[dict, dict]:
    created, active = ms_time(record.get("createdAt")), ms_time(record.get("lastActivityAt"))
    at_created = {"timestamp_ns": created, "timestamp_source": "record"} if created else file_mtime(ctx)
    at_active = {"timestamp_ns": active, "timestamp_source": "record"} if active else at_created
    return at_created, at_active


def _session(ctx: ParseContext, record: dict, kind: str, project: tuple[str, str]) -> Session:
    ids = transcript_ids(record)
    desktop = desktop_id(ctx, record)
    columns = {"session_id": ids[0][1] if ids else desktop, "project_path": project[1],
               "git_branch": short(record.get("branch"), 200) if isinstance(record.get("branch"), str) else "",
               "model": model_of(record)}
    created, active = _times(record, ctx)
    return Session(desktop, kind, columns, created, active, project[0])


def _code_project(record: dict) -> tuple[str, str]:
    for key in ("cwd", "originCwd", "worktreePath"):
        if isinstance(record.get(key), str) and record[key]:
            return key, excerpt(record[key], 1000)
    return "", ""


def _cowork_project(record: dict) -> tuple[str, str]:
    folder = first_string(record.get("userSelectedFolders"))
    if folder:
        return "userSelectedFolders[0]", folder
    if isinstance(record.get("cwd"), str) and record["cwd"]:
        return "cwd (the session's sandbox directory, not a folder of the user's: no userSelectedFolders)", \
            excerpt(record["cwd"], 1000)
    return "", ""


def _session_row(session: Session, record: dict, fact_keys: tuple[str, ...]) -> Draft:
    project = f"project from {session.project_field}" if session.project_field else "no project path recorded"
    parts = [f"Claude Desktop {session.kind} session {session.desktop}", project,
             f"createdAt={ms_text(record.get('createdAt'))}", f"lastActivityAt={ms_text(record.get('lastActivityAt'))}"]
    if record.get("lastFocusedAt") is not None:
        parts.append(f"lastFocusedAt={ms_text(record.get('lastFocusedAt'))}")
    described = facts(record, fact_keys)
    if described:
        parts.append(described)
    return Draft("system", f"session: {title_of(record)} ({'; '.join(parts)})", "file",
                 **session.columns, **session.created)


def _transcript_rows(ctx: ParseContext, session: Session, record: dict, store: str, where: str) -> Iterator[Draft]:
    """One ``session transcript:`` row per transcript the record names, in that transcript's session."""
    for key, cli, pointer in transcript_ids(record):
        place, held = transcript_place(ctx, store, cli, where)
        if held:
            session.held.append(cli)
        when = {"timestamp_ns": session.created["timestamp_ns"],
                "timestamp_source": "index" if session.created["timestamp_source"] == "record" else
                session.created["timestamp_source"]}
        yield Draft("system", f"session transcript: {key}={cli}: {place}", pointer,
                    **{**session.columns, "session_id": cli}, **when)


def _detail_rows(ctx: ParseContext, session: Session, record: dict) -> Iterator[Draft]:
    if isinstance(record.get("initialMessage"), str) and record["initialMessage"]:
        yield Draft("system", f"initial message: {record['initialMessage']}", "json:/initialMessage",
                    **session.columns, **session.created)
    if session.columns["model"]:
        yield Draft("system", f"model: {session.columns['model']} (the session's model, from the desktop index)",
                    "json:/model", **session.columns, **session.created)
    if isinstance(record.get("recap"), str) and record["recap"]:
        recap_at = ms_time(record.get("recapAt"))
        when = {"timestamp_ns": recap_at, "timestamp_source": "record"} if recap_at else session.active
        yield Draft("system", f"summary: {record['recap']} (recap)", "json:/recap", **session.columns, **when)
    if ms_time(record.get("lastActivityAt")):
        yield Draft("system", f"session activity: last activity of {session.desktop} "
                    f"(lastActivityAt={ms_text(record.get('lastActivityAt'))})", "json:/lastActivityAt",
                    **session.columns, **session.active)
    when = file_mtime(ctx)
    for key in PERMISSION_FIELDS:
        if key in record and record[key] is not None:
            yield Draft("system", f"permission setting: {key}={settings_value(record[key], key)} "
                        f"(from {ctx.source.name}, file mtime)", f"json:/{key}", **session.columns, **when)


def _missing_row(ctx: ParseContext, session: Session, record: dict, what: str) -> Draft:
    detail = (f"{ctx.source.name} names {session.kind} session {session.desktop} (\"{title_of(record)}\", createdAt "
              f"{ms_text(record.get('createdAt'))}, lastActivityAt {ms_text(record.get('lastActivityAt'))}) and "
              f"{what}: this index record is the evidence the session existed")
    return Draft("system", f"integrity: session missing: {detail}", "file", **session.columns, **session.active)


def parse_code_session(ctx: ParseContext) -> Iterator[Draft]:
    """A Code-tab record: the session, the Claude Code transcripts it names and whether the bundle holds them."""
    record = yield from document_or_row(json_document(ctx.data, ctx.source.name))
    if record is None:
        return
    session = _session(ctx, record, "Code tab", _code_project(record))
    yield _session_row(session, record, SESSION_FACTS)
    yield from _transcript_rows(ctx, session, record, CODE_TRANSCRIPTS, "")
    yield from _detail_rows(ctx, session, record)
    named = [cli for _, cli, _ in transcript_ids(record)]
    missing = [cli for cli in named if cli not in session.held]
    if missing:
        what = (f"no file of claude-code.transcripts in the bundle holds its transcript "
                f"{', '.join(f'{cli}.jsonl' for cli in missing[:20])}")
        yield _missing_row(ctx, session, record, what)
    elif not named:
        yield _missing_row(ctx, session, record, "names no Claude Code session id (cliSessionId), so no transcript "
                           "can be joined to it")


def parse_cowork_session(ctx: ParseContext) -> Iterator[Draft]:
    """A Cowork record: the session, its real folders, its engine transcripts and its audit log."""
    record = yield from document_or_row(json_document(ctx.data, ctx.source.name))
    if record is None:
        return
    session = _session(ctx, record, "Cowork", _cowork_project(record))
    yield _session_row(session, record, COWORK_FACTS)
    directory = f"{ctx.source.directory}/{session.desktop}" if ctx.source.directory else session.desktop
    audit = ctx.at(f"{directory}/audit.jsonl", "cowork_audit")
    place = f"in the bundle at {audit.path}" if audit else "not in the bundle"
    yield Draft("system", f"session transcript: audit log {session.desktop}/audit.jsonl: {place}", "file",
                **session.columns, **_index_time(session))
    yield from _transcript_rows(ctx, session, record, COWORK_TRANSCRIPTS, f"{directory}/")
    yield from _detail_rows(ctx, session, record)
    if audit is None and not session.held:
        named = ", ".join(f"{cli}.jsonl" for _, cli, _ in transcript_ids(record)[:20]) or "no engine transcript id"
        yield _missing_row(ctx, session, record, f"neither its audit.jsonl nor an engine transcript ({named}) "
                           "is in the bundle")


def _index_time(session: Session) -> dict:
    source = session.created["timestamp_source"]
    return {"timestamp_ns": session.created["timestamp_ns"], "timestamp_source": "index" if source == "record"
            else source}
