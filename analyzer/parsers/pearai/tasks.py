"""PearAI agent tasks (Roo Code 3.15 fork): ui_messages.json and api_conversation_history.json.

The walk is Cline's (formats/cline_tasks.py); PearAI's own are its tool names and
where a task's workspace is found (its extension row in state.vscdb).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, task_id
from aitrail.analyzer.formats.vscode_state import task_workspaces
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .state import EXTENSION_ROW

# trypear/PearAI-Roo-Code@7bd0c94 src/core/assistant-message/index.ts
TOOL_NAMES = (
    "execute_command", "read_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace",
    "search_files", "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "switch_mode", "new_task",
    "show_task_plan",
)


def _task_columns(ctx: ParseContext) -> dict:
    """session_id (the task folder) and project_path (from the task list) of every row of a task."""
    task = task_id(ctx)
    return {"session_id": task, "project_path": task_workspaces(ctx, EXTENSION_ROW).get(task, "")}


# ui_messages.json is the transcript where it exists (the seed's Parser plan); the API history then gives
# its permission rows alone, with the ids the ui rows give the calls
FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=_task_columns, ui_beside_api="transcript")


def parse_agent_task(ctx: ParseContext) -> Iterator[Draft]:
    """A Roo Code task folder's file: ui_messages.json as the transcript, else the API history.

    Where ui_messages.json is readable, api_conversation_history.json gives only its
    ``permission decision:`` rows (and its own ``parser:`` rows), each with the ``ts`` of
    the last tool ask at or before the API message as tool_use_id; a task without a
    readable ui_messages.json is read from its API history (positional ids).
    task_metadata.json gives no rows.
    """
    yield from read_task_file(ctx, FLAVOUR)
