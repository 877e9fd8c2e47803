"""Which conversation a brain/ file belongs to, and that conversation's project.

No transcript line records a working directory [obs: corveil/crow "pooled
globally by conversation id with no cwd on any line"]. The project of a
conversation is the first of:

1. the ``workspace_uris`` of its row in ``conversation_summaries.db`` (the
   first URI) [obs];
2. the ``file://`` workspace URI of its trajectory summary in the editor's
   state.vscdb (live, then backup) [obs, field position not fixed].

Both are read once per worker; a store that cannot be read gives nothing
(the rows then have no project, never a wrong one).
"""

from __future__ import annotations

import sqlite3

from aitrail.analyzer.formats import trajectory_summaries as summaries
from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.vscode_workspace import uri_target
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json

SUMMARY_KEYS = ("antigravityUnifiedStateSync.trajectorySummaries", "unifiedStateSync.trajectorySummaries")
STATE_STORES = ("global_state", "global_state_backup")
SUMMARIES_DB_STORE = "conversation_summaries"
SUMMARIES_TABLE = "conversation_summaries"
MAX_HELD = 200_000  # conversations whose project is held; past it the rest get none


def conversation_of(ctx: ParseContext) -> str:
    """The ``<uuid>`` of ``brain/<uuid>/...`` in this file's path ('' when the path has no brain/ part)."""
    parts = ctx.source.path.split("/")
    for index, part in enumerate(parts[:-1]):
        if part == "brain":
            return parts[index + 1]
    return ""


def project_of(ctx: ParseContext, conversation_id: str) -> str:
    """The project of a conversation (see the module docstring), '' when none is known."""
    if not conversation_id:
        return ""
    return _projects(ctx).get(conversation_id, "")


def uri_path(uri: object) -> str:
    """The path of a workspace URI (a plain path is kept as it is); '' for anything else."""
    if not isinstance(uri, str) or not uri:
        return ""
    if "://" not in uri:
        return uri
    try:
        return uri_target(uri)[0]
    except ValueError:
        return ""


def first_workspace(value: object) -> str:
    """The first URI of a ``workspace_uris`` value (a JSON array as text), as a path."""
    if not isinstance(value, str):
        return ""
    try:
        uris = decode_json(value)
    except ValueError:
        return uri_path(value)
    return uri_path(uris[0]) if isinstance(uris, list) and uris else ""


def _projects(ctx: ParseContext) -> dict[str, str]:
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        _from_summaries_db(ctx, found)
        for store in STATE_STORES:
            _from_state(ctx, store, found)
        return found

    return ctx.cached(("antigravity.projects",), load)  # type: ignore[return-value]


def _from_summaries_db(ctx: ParseContext, found: dict[str, str]) -> None:
    for source in ctx.related(SUMMARIES_DB_STORE):
        try:
            connection = ctx.sqlite(source)
        except (sqlite3.Error, MemberUnreadable):
            continue
        try:
            if not sqlite_safe.is_real_table(connection, SUMMARIES_TABLE):
                continue
            for row in sqlite_safe.table_rows(connection, SUMMARIES_TABLE, "conversation projects",
                                              ("conversation_id", "workspace_uris")):
                key, path = row.get("conversation_id"), first_workspace(row.get("workspace_uris"))
                if isinstance(key, str) and path and len(found) < MAX_HELD:
                    found.setdefault(key, path)
        except sqlite3.Error:
            continue
        finally:
            connection.close()


def _from_state(ctx: ParseContext, store: str, found: dict[str, str]) -> None:
    for source in ctx.related(store):
        for key in SUMMARY_KEYS:
            try:
                row = vscode_db.read_key(ctx, key, source=source)
                value = row.text() if row is not None else None
            except (sqlite3.Error, MemberUnreadable, ValueError):
                continue
            if value is None:
                continue
            for summary in summaries.read_map(value, wrapped=True).summaries:
                path = summary.workspace_path()
                if summary.conversation_id and path and len(found) < MAX_HELD:
                    found.setdefault(summary.conversation_id, path)
