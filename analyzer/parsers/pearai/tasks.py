"""PearAI agent tasks (Roo Code 3.15 fork): api_conversation_history.json and ui_messages.json.

The walk is Cline's (formats/cline_tasks.py); PearAI's own are its tool names and
where a task's workspace is found (its extension row in state.vscdb).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, task_id
from aitrail.analyzer.formats.vscode_state import task_workspaces
from aitrail.analyzer.rows import Draft

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


FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=_task_columns)


def parse_agent_task(ctx: ParseContext) -> Iterator[Draft]:
    """A Roo Code task folder's file: the API history, else ui_messages.json as the fallback.

    api_conversation_history.json is the transcript; ui_messages.json gives rows only when
    its task's API history is not in the bundle; task_metadata.json gives none.
    """
    yield from read_task_file(ctx, FLAVOUR)
