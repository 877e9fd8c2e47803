"""PearAI agent tasks (Roo Code 3.15 fork): api_conversation_history.json and ui_messages.json."""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import cline_tasks as tasks
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.formats.vscode_state import StateUnreadable, extension_state, read_row
from aitrail.analyzer.rows import Draft, ns_from_ms

from .state import EXTENSION_ROW

TOOL_NAMES = (
    "execute_command", "read_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace",
    "search_files", "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "switch_mode", "new_task",
    "show_task_plan",
)


def parse_agent_task(ctx: ParseContext) -> Iterator[Draft]:
    """A Roo Code task folder's file: the API history, else ui_messages.json as the fallback.

    api_conversation_history.json is the transcript; ui_messages.json gives rows only when
    its task's API history is not in the bundle; task_metadata.json gives none.
    """
    name = ctx.source.name
    if name == "api_conversation_history.json":
        yield from _api_history(ctx)
    elif name == "ui_messages.json" and ctx.sibling("api_conversation_history.json") is None:
        yield from _ui_messages(ctx)
    # task_metadata.json (files in context) and a ui_messages.json beside its API history add no rows


def _task_id(ctx: ParseContext) -> str:
    return ctx.source.directory.rsplit("/", 1)[-1]


def _task_workspaces(ctx: ParseContext) -> dict[str, str]:
    """TaskHistory id -> workspace, from every state.vscdb of the bundle (read once per worker)."""
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for source in ctx.related("global_state"):
            try:
                row = read_row(ctx, EXTENSION_ROW, source)
                history = extension_state(row).get("taskHistory") if row else None
            except StateUnreadable:
                continue
            for item in history if isinstance(history, list) else ():
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item.get("workspace"):
                    found.setdefault(item["id"], str(item["workspace"]))
        return found

    return ctx.cached(("pearai-workspaces",), load)


def _task_columns(ctx: ParseContext) -> dict:
    """session_id (the task folder) and project_path (from the task list) of every row of a task."""
    task_id = _task_id(ctx)
    return {"session_id": task_id, "project_path": _task_workspaces(ctx).get(task_id, "")}


def _api_history(ctx: ParseContext) -> Iterator[Draft]:
    messages, problem = json_document(ctx.data, "api_conversation_history.json", list)
    if problem is not None:
        yield problem
        return
    base = _task_columns(ctx)
    calls = CallLedger()  # ids are the assistant message's index: calls join results by position and tool name
    for index, message in enumerate(messages):
        locator = f"json:/{index}"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            yield bad_record(locator, "not a user or assistant message", json.dumps(message)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(message.get("ts")), "timestamp_source": "record", **base}
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            yield bad_record(f"{locator}/content", "content is neither text nor a list of blocks")
            continue
        if message["role"] == "assistant":
            yield from calls.orphans()
            yield from _assistant(blocks, index, locator, moment, calls)
        else:
            yield from _user(blocks, locator, moment, calls)
            calls.forget()  # the next user message answers the next assistant message's calls only
    yield from calls.orphans()


def _assistant(blocks: list, index: int, locator: str, moment: dict, calls: CallLedger) -> Iterator[Draft]:
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        for segment in tasks.split_assistant_text(tasks.block_text(block), TOOL_NAMES):
            if segment.kind == "text":
                yield Draft("assistant", segment.text, where, **moment)
            elif segment.kind == "thinking":
                yield Draft("thinking", segment.text, where, **moment)
            else:
                call_id = str(index) if not calls.open else f"{index}.{len(calls.open) + 1}"
                call = Draft("tool_use", segment.text, where, tool_name=segment.tool_name, tool_use_id=call_id, **moment)
                calls.called(call)
                yield call


def _user(blocks: list, locator: str, moment: dict, calls: CallLedger) -> Iterator[Draft]:
    result: dict | None = None  # the tool result being assembled from consecutive blocks
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        text = tasks.block_text(block)
        kind = tasks.classify_user_block(text) if isinstance(block, (str, dict)) and text else None
        if kind is None:
            continue
        if result is not None and kind.kind == "user":
            result["texts"].append(kind.text)
            continue
        if result is not None:
            yield from _finish_result(result, moment)
            result = None
        if kind.kind == "result":
            call = calls.take_named(kind.tool_name)
            result = {"tool": kind.tool_name, "call": call, "texts": [kind.text] if kind.text else [], "where": where}
        elif kind.kind in ("not_executed", "rejected_earlier"):
            call = calls.take_named(kind.tool_name)
            yield Draft("tool_result", kind.text, where, tool_name=kind.tool_name,
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind.kind == "system":
            yield Draft("system", kind.text, where, **moment)
        else:  # task or user: typed by the user
            yield Draft("user", kind.text, where, **moment)
    if result is not None:
        yield from _finish_result(result, moment)


def _finish_result(result: dict, moment: dict) -> Iterator[Draft]:
    call = result["call"]
    call_id = call.tool_use_id if call else ""
    output = "\n".join(result["texts"])
    yield Draft("tool_result", output, result["where"], tool_name=result["tool"], tool_use_id=call_id, **moment)
    if call is None:
        yield Draft("system", f"parser: tool result for {result['tool']} with no tool call before it",
                    result["where"], **moment)
    decision = tasks.permission_decision(result["texts"][0]) if result["texts"] else None
    if decision:
        yield Draft("system", f"permission decision: {decision}", result["where"], tool_name=result["tool"],
                    tool_use_id=call_id, **moment)


def _ui_messages(ctx: ParseContext) -> Iterator[Draft]:
    """Fallback transcript when the task's API history is not in the bundle."""
    events, problem = json_document(ctx.data, "ui_messages.json", list)
    if problem is not None:
        yield problem
        return
    base = _task_columns(ctx)
    seen_prompt, asks = False, CallLedger()  # ask ids are timestamps, not unique: joined by event
    for index, event in enumerate(events):
        locator = f"json:/{index}"
        if not isinstance(event, dict) or event.get("type") not in ("ask", "say"):
            yield bad_record(locator, "not an ask or say event", json.dumps(event)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(event.get("ts")), "timestamp_source": "record", **base}
        kind, text = event.get(event["type"]) or "", str(event.get("text") or "")
        if event.get("partial"):
            continue  # a streaming placeholder, superseded by the final event with the same ts
        if event["type"] == "say" and kind == "text":
            yield Draft("assistant" if seen_prompt else "user", text, locator, **moment)
            seen_prompt = True
        elif kind == "user_feedback":
            yield Draft("user", text, locator, **moment)
        elif kind == "reasoning":
            yield Draft("thinking", text, locator, **moment)
        elif event["type"] == "ask" and kind in ("tool", "command", "use_mcp_server", "browser_action_launch"):
            call = Draft("tool_use", text, locator, tool_name=tasks.ui_tool_name(kind, text),
                         tool_use_id=str(event.get("ts", "")), **moment)
            asks.called(call, key=locator)
            yield call
        elif kind in ("command_output", "mcp_server_response", "browser_action_result"):
            call = asks.take_last()
            yield Draft("tool_result", text, locator, tool_name=call.tool_name if call else "",
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind in ("completion_result", "followup"):
            yield Draft("assistant", text, locator, **moment)
        else:
            yield Draft("system", f"ui {event['type']} {kind}: {text}", locator, **moment)
    yield from asks.orphans()  # ui_messages.json keeps no output for file tools
