"""A Trae workspace ``state.vscdb``'s ``icube-ai-agent-storage-input-history``: every prompt typed in the workspace.

The value is a JSON array of ``{"inputText": ...}`` objects [obs, community
usage trackers], oldest first, with no time and no session: each is a
``user`` row, untimed, with the workspace's project. The store is secondary:
a prompt equal to a user message of the session list is dropped by the run,
so what remains is a prompt whose conversation is no longer kept (or never
was, on workspaces whose list keeps no messages).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.json_values import as_text
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.workspace_storage import folder_project
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .storage import checked

INPUT_HISTORY = "icube-ai-agent-storage-input-history"


def history_rows(connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
    """One untimed ``user`` row per typed prompt; an entry without ``inputText`` as a ``parser:`` row."""
    row = vscode_db.row_at_key(connection, INPUT_HISTORY)
    if row is None:
        return
    try:
        value = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"{INPUT_HISTORY} is not JSON: {exc}")
        return
    if not isinstance(value, list):
        yield bad_record(row.locator(), f"{INPUT_HISTORY} is not a list", row.text())
        return
    for position, item in enumerate(value):
        text = item.get("inputText") if isinstance(item, dict) else None
        if not isinstance(text, str):
            yield bad_record(row.locator(position), "input history entry without inputText", as_text(item))
            continue
        if text.strip():
            yield Draft("user", text, row.locator(position, "inputText"), timestamp_source="none",
                        project_path=project)


def parse_input_history(ctx: ParseContext) -> Iterator[Draft]:
    """The typed prompts of a workspace database (or its backup)."""
    project = folder_project(ctx)
    yield from each_database_row(ctx, checked(lambda connection: history_rows(connection, project)))
