"""Kilo Code task folders: the shared Cline walk (formats/cline_tasks.py) with Kilo's flavour.

``tasks/<taskId>/`` in the extension's globalStorage (``kilocode.kilo-code``) or
under ``kilo-code.customStoragePath``: api_conversation_history.json is the
transcript, read message by message by Kilo's reader (reader.py);
ui_messages.json beside it adds only the events still marked partial (a reply
whose stream was cut, which no API message holds) and is the transcript when
the API history is gone or damaged; task_metadata.json (files in context)
gives no rows. A task's rows carry the folder's name as session and, as
project, the workspace of its taskHistory entry in state.vscdb, else the
path the first ``<environment_details>`` names.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, read_ui_messages, task_id
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.formats.vscode_state import task_workspaces
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .reader import TOOL_NAMES, KiloReader
from .state import EXTENSION_ROW

# src/core/environment/getEnvironmentDetails.ts:336 (Kilo-Org/kilocode-legacy@56b73d3b)
WORKSPACE_OPEN, WORKSPACE_CLOSE = b"# Current Workspace Directory (", b") Files"
WINDOW = 1 << 20  # the first environment details sit in the first user message: its first MiB is searched
MAX_PATH = 4096
API_HISTORY = "api_conversation_history.json"


def environment_workspace(data: bytes) -> str:
    """The path of the first ``# Current Workspace Directory (<path>) Files`` line, as the JSON text holds it."""
    start = data.find(WORKSPACE_OPEN, 0, WINDOW)
    if start < 0:
        return ""
    start += len(WORKSPACE_OPEN)
    end = data.find(WORKSPACE_CLOSE, start, start + MAX_PATH)
    if end < 0:
        return ""
    try:
        path = decode_json(b'"' + data[start:end] + b'"')  # JSON string text: its escapes undone
    except (ValueError, UnicodeDecodeError):
        return ""
    return path if isinstance(path, str) and "\n" not in path else ""


def task_columns(ctx: ParseContext) -> dict:
    """session_id (the task folder's name) and project_path (taskHistory's workspace, else the API history's)."""
    task = task_id(ctx)
    project = task_workspaces(ctx, EXTENSION_ROW).get(task, "")
    if not project:
        api = ctx.source if ctx.source.name == API_HISTORY else ctx.sibling(API_HISTORY)
        try:
            project = environment_workspace(ctx.data if api is ctx.source else ctx.read(api)) if api else ""
        except MemberUnreadable:
            project = ""
    return {"session_id": task, "project_path": project}


FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=task_columns, reader=lambda ctx, messages: KiloReader(messages))


def parse_task(ctx: ParseContext) -> Iterator[Draft]:
    """A task folder's file: the API history, ui_messages.json as the walk says, task_metadata.json's damage only."""
    if ctx.source.name == "task_metadata.json":
        _, problem = json_document(ctx.data, "task_metadata.json", dict)
        if problem is not None:
            yield problem
    elif ctx.source.name == "ui_messages.json" and _api_history_damaged(ctx):
        yield from read_ui_messages(ctx, FLAVOUR)  # the API history gave its parser row; the UI copy stands in
    elif ctx.source.name == "ui_messages.json" and ctx.sibling(API_HISTORY) is not None:
        # beside a readable API history the walk reads this file only for a cut stream: its damage is said here
        _, problem = json_document(ctx.data, "ui_messages.json", list)
        yield from (problem,) if problem is not None else read_task_file(ctx, FLAVOUR)
    else:
        yield from read_task_file(ctx, FLAVOUR)


def _api_history_damaged(ctx: ParseContext) -> bool:
    """Whether the API history beside this file is in the bundle but cannot be read as a JSON array."""
    source = ctx.sibling(API_HISTORY)
    if source is None:
        return False
    try:
        return json_document(ctx.read(source), API_HISTORY, list)[1] is not None
    except MemberUnreadable:  # too large, or damaged in the bundle
        return True
