"""``conversation_summaries.db``: the conversation list of the agy CLI and of current IDE builds.

One table [obs: tenequm/pond#201 (agy 1.1.24), several third-party readers; not in the
research this package follows, so read only for what those readers agree on]:
``conversation_summaries(conversation_id, title, preview, step_count,
last_modified_time, workspace_uris, status, parent_conversation_id, ...)``;
``workspace_uris`` a JSON array of URIs. Each row is a ``session:`` row naming
the conversation's files in the bundle. ``last_modified_time`` is SQLite
DATETIME text: it times the row only when it carries a zone (a reader that
assumes UTC is not followed); otherwise it is kept in the text as written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .project import SUMMARIES_TABLE, first_workspace
from .state import file_note

COLUMNS = ("conversation_id", "title", "preview", "step_count", "last_modified_time", "workspace_uris", "status",
           "parent_conversation_id")


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None or isinstance(value, sqlite_safe.Oversize) else str(value)


def _row(ctx: ParseContext, row: dict) -> Draft:
    locator = f"sqlite:{SUMMARIES_TABLE}:{row['_rowid']}"
    conversation = _text(row.get("conversation_id"))
    if not conversation:
        return bad_record(locator, "summary row without a conversation_id")
    modified = _text(row.get("last_modified_time"))
    when = ns_from_iso(modified)
    facts = [f"{_text(row['step_count'])} steps" if row.get("step_count") not in (None, "") else "",
             f"status {_text(row['status'])}" if _text(row.get("status")) else "",
             "" if when is not None or not modified else f"last modified {modified} (no zone recorded)",
             f"sub-agent of {_text(row['parent_conversation_id'])}" if _text(row.get("parent_conversation_id")) else "",
             f"preview {excerpt(_text(row['preview']))!r}" if _text(row.get("preview")) else ""]
    details = "; ".join(fact for fact in facts if fact)
    text = (f"session: {_text(row.get('title')) or '(untitled)'} (conversation_summaries.db"
            f"{': ' + details if details else ''}; {file_note(ctx, conversation)})")
    return Draft("system", text, locator, timestamp_ns=when, timestamp_source="record" if when else "none",
                 session_id=conversation, project_path=first_workspace(row.get("workspace_uris")))


def parse_summaries_db(ctx: ParseContext) -> Iterator[Draft]:
    """A ``session:`` row per conversation_summaries row (see the module docstring)."""
    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        if not sqlite_safe.is_real_table(connection, SUMMARIES_TABLE):
            yield bad_file(f"{ctx.source.name}: cannot query {SUMMARIES_TABLE}: no such table: {SUMMARIES_TABLE}")
            return
        for row in sqlite_safe.table_rows(connection, SUMMARIES_TABLE, "conversation summaries", COLUMNS):
            yield _row(ctx, row)

    yield from each_database_row(ctx, rows)
