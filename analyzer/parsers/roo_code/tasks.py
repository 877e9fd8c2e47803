"""Roo Code task folders: api_conversation_history.json through the shared Cline walk, with Roo's reader.

The walk is formats/cline_tasks.py; Roo's own are its XML tool names (the
XML era, up to 3.41), the reader of native tool blocks and condensed context
(native.py), and where a task's workspace is found: its history_item.json,
else the taskHistory of the extension's row in state.vscdb.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import (
    TaskFlavour,
    read_api_history,
    read_task_file,
    read_ui_messages,
    task_id,
)
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.formats.vscode_state import task_workspaces
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .history import workspace_of
from .native import RooReader
from .state import EXTENSION_ROW

# the XML tags of every release up to 3.41 (packages/types/src/tool.ts at v3.20.0, v3.25.0, v3.31.0)
TOOL_NAMES = (
    "execute_command", "read_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace",
    "search_files", "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "switch_mode", "new_task",
    "fetch_instructions", "codebase_search", "update_todo_list", "run_slash_command", "generate_image",
)
OLD_NAME = "claude_messages.json"
WORKSPACE_LINE = b"# Current Workspace Directory ("  # src/core/environment/getEnvironmentDetails.ts:230


def _task_columns(ctx: ParseContext) -> dict:
    """The columns of every row of a task file: session_id and project_path.

    session_id is the task folder's name; project_path the workspace of the task's history_item.json,
    else of its globalState taskHistory entry, else the one the API history's first
    ``<environment_details>`` names.
    """
    task = task_id(ctx)
    project = (workspace_of(ctx, task) or task_workspaces(ctx, EXTENSION_ROW).get(task, "")
               or (_environment_workspace(ctx.data) if ctx.source.name != "ui_messages.json" else ""))
    return {"session_id": task, "project_path": project}


def _environment_workspace(data: bytes) -> str:
    """The path of the first ``# Current Workspace Directory (<path>) Files`` line, as the JSON text holds it."""
    start = data.find(WORKSPACE_LINE)
    if start < 0:
        return ""
    start += len(WORKSPACE_LINE)
    end = data.find(b") Files", start, start + 4096)  # a path is short; never search the whole file
    if end < 0:
        return ""
    try:
        path = decode_json(b'"' + data[start:end] + b'"')
    except (ValueError, UnicodeDecodeError):
        return ""
    return path if isinstance(path, str) and "\n" not in path else ""


FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=_task_columns, reader=lambda ctx, messages: RooReader(messages))


def parse_task(ctx: ParseContext) -> Iterator[Draft]:
    """A Roo Code task folder's file: the API history (the transcript), else ui_messages.json as the fallback.

    claude_messages.json, the name Cline used before ui_messages.json and that Roo still
    reads as API history, is read by its shape: Anthropic messages as the API history, UI
    events as ui_messages.json. ui_messages.json is also read when the API history beside it
    is damaged. task_metadata.json gives no rows (one parser row when it is not a JSON object).
    """
    if ctx.source.name == "task_metadata.json":
        _, problem = json_document(ctx.data, "task_metadata.json", dict)
        yield from (problem,) if problem is not None else ()  # files in context: no rows, but damage is said
    elif ctx.source.name == "ui_messages.json" and _api_history_unreadable(ctx):
        yield from read_ui_messages(ctx, FLAVOUR)  # the API history gave its parser row; the UI copy stands in
    elif ctx.source.name != OLD_NAME:
        yield from read_task_file(ctx, FLAVOUR)
    elif _holds_ui_events(ctx.data):
        if ctx.sibling("api_conversation_history.json") is None:
            yield from read_ui_messages(ctx, FLAVOUR)
    else:
        yield from read_api_history(ctx, FLAVOUR)


def _api_history_unreadable(ctx: ParseContext) -> bool:
    """Whether the task's api_conversation_history.json is in the bundle but is no JSON array."""
    source = ctx.sibling("api_conversation_history.json")
    try:
        data = ctx.read(source) if source is not None else None
    except MemberUnreadable:  # too large, or damaged in the bundle
        return True
    return data is not None and json_document(data, "api_conversation_history.json", list)[1] is not None


def _holds_ui_events(data: bytes) -> bool:
    try:
        document = decode_json(data)
    except (ValueError, UnicodeDecodeError):
        return False  # the API-history reading gives the unparseable-file row
    first = document[0] if isinstance(document, list) and document else None
    return isinstance(first, dict) and "role" not in first and first.get("type") in ("ask", "say")
