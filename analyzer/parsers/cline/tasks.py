"""Cline task folders: tasks/<taskId>/ in the extension's globalStorage or ~/.cline/data.

api_conversation_history.json is the transcript (formats/cline_tasks.py: XML tool tags
before 3.35, native ``tool_use`` / ``tool_result`` blocks after, ``modelInfo`` model
rows); ui_messages.json beside it gives only what the API history lacks (texts equal to
an API row are left out) and is the transcript when the API history is gone;
task_metadata.json gives the ``model:`` rows of its ``model_usage`` when the API history
records no ``modelInfo``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, task_id
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms

from .history import storage_of, task_index

# cline/cline@0a3eba3 src/shared/tools.ts:8-36 (ClineDefaultTool): the tool tags of the 3.x prompt
TOOL_NAMES = (
    "ask_followup_question", "attempt_completion", "execute_command", "replace_in_file", "read_file",
    "write_to_file", "search_files", "search_subagent", "list_files", "list_code_definition_names", "browser_action",
    "use_mcp_tool", "access_mcp_resource", "load_mcp_documentation", "new_task", "plan_mode_respond",
    "act_mode_respond", "focus_chain", "web_fetch", "web_search", "condense", "summarize_task", "report_bug",
    "new_rule", "apply_patch", "generate_explanation",
)
_CWD_OPEN, _CWD_CLOSE = b"# Current Working Directory (", b") Files"
_TASK_ID = re.compile(r"^\d{13}$")
WINDOW = 1 << 20  # the environment details sit in the first user message: search its first MiB only
MAX_PATH = 4096


def _cwd_in_history(data: bytes) -> str:
    """The working directory the first ``<environment_details>`` names (JSON-escaped text, so read as such).

    A plain scan: the first opening in the window, its closing within MAX_PATH bytes.
    """
    start = data.find(_CWD_OPEN, 0, WINDOW)
    if start < 0:
        return ""
    start += len(_CWD_OPEN)
    end = data.find(_CWD_CLOSE, start, start + MAX_PATH)
    if end < 0 or b"\\n" in data[start:end]:
        return ""
    raw = data[start:end]
    try:
        found = decode_json(b'"' + raw + b'"')  # the path as JSON string text: its escapes undone
    except (ValueError, UnicodeDecodeError):
        return ""
    return found if isinstance(found, str) else ""


def _project(ctx: ParseContext, item: dict | None) -> str:
    if item and item.get("cwdOnTaskInitialization"):
        return str(item["cwdOnTaskInitialization"])
    api = ctx.source if ctx.source.name == "api_conversation_history.json" else \
        ctx.sibling("api_conversation_history.json")
    if api is None:
        return ""
    try:
        return _cwd_in_history(ctx.data if api is ctx.source else ctx.read(api))
    except MemberUnreadable:
        return ""


def task_columns(ctx: ParseContext) -> dict:
    """session_id (the task folder) and project_path (cwdOnTaskInitialization, else the first cwd line)."""
    task = task_id(ctx)
    item = task_index(ctx).get((*storage_of(ctx.source), task))
    return {"session_id": task, "project_path": _project(ctx, item)}


def task_started(ctx: ParseContext) -> dict:
    """A message without ``ts`` (before 3.x stamped them) takes the task's creation: its id is Date.now()."""
    task = task_id(ctx)
    if not _TASK_ID.match(task):
        return {}
    return {"timestamp_ns": ns_from_ms(int(task)), "timestamp_source": "index"}


FLAVOUR = TaskFlavour(tool_names=TOOL_NAMES, columns=task_columns, ui_beside_api="unique", models=True,
                      untimed=task_started)


def parse_task(ctx: ParseContext) -> Iterator[Draft]:
    """A Cline task folder's file: api_conversation_history.json, ui_messages.json, task_metadata.json."""
    if ctx.source.name == "task_metadata.json":
        yield from _task_metadata(ctx)
    else:
        yield from read_task_file(ctx, FLAVOUR)


def _api_has_models(ctx: ParseContext) -> bool:
    api = ctx.sibling("api_conversation_history.json")
    if api is None:
        return False
    try:
        return b'"modelInfo"' in ctx.read(api)
    except MemberUnreadable:
        return False


def _task_metadata(ctx: ParseContext) -> Iterator[Draft]:
    """``model: <id>`` / ``model: <old> -> <new>`` per model_usage entry, unless the API history has the models."""
    metadata, problem = json_document(ctx.data, "task_metadata.json", dict)
    if problem is not None:
        yield problem
        return
    usage = metadata.get("model_usage")
    if usage is None or _api_has_models(ctx):
        return
    if not isinstance(usage, list):
        yield bad_record("json:/model_usage", "model_usage is not an array")
        return
    columns, model = task_columns(ctx), ""
    for position, entry in enumerate(usage):
        where = f"json:/model_usage/{position}"
        name = entry.get("model_id") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            yield bad_record(where, "model_usage entry without a model_id")
            continue
        if name != model:
            label = f"model: {name}" if not model else f"model: {model} -> {name}"
            yield Draft("system", label, where, timestamp_ns=ns_from_ms(entry.get("ts")), model=name, **columns)
            model = name
