"""ui_messages.json of a Cline task folder (and its forks'): ``ClineMessage`` events, what the user saw.

Each event has ``ts`` (ms; also its identity: partial updates rewrite the same
``ts``), ``type`` ``ask`` or ``say`` and the kind under that key, ``text`` (often
JSON), ``partial``. The walk that reads it as a transcript, or beside the API
history for what that lacks, is ``read_ui_messages``.

References: cline/cline@e1bdeef apps/vscode/src/shared/ExtensionMessage.ts:118-196;
trypear/PearAI-Roo-Code@0b6df73 src/schemas/index.ts:804-880 (research/formats-vscode-family.md 5.4, 6.8).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.bundle import MemberUnreadable
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.rows import Draft, ns_from_ms

UI_FILES = ("ui_messages.json", "claude_messages.json")  # claude_messages.json: the name before Oct 2024
UI_TOOL_ASKS = ("tool", "command", "use_mcp_server", "browser_action_launch")
UI_OUTPUTS = ("command_output", "mcp_server_response", "browser_action_result")
# what the API history holds with its ids: left out of a ui_messages.json read beside it
UI_CALL_EVENTS = ("tool", "command", "use_mcp_server", "browser_action_launch", "browser_action", "command_output",
                  "mcp_server_request_started", "mcp_server_response", "browser_action_result")


def ui_tool_name(ask: str, text: str) -> str:
    """The tool an ask of ui_messages.json names (its text is a JSON object for ``tool`` asks)."""
    if ask == "tool":
        try:
            return str(decode_json(text).get("tool", "tool"))
        except (ValueError, AttributeError):
            return "tool"
    return {"command": "execute_command", "use_mcp_server": "use_mcp_tool"}.get(ask, ask)


def read_ui_messages(ctx: ParseContext, base: dict, beside: frozenset | None = None) -> Iterator[Draft]:
    """ui_messages.json: the transcript as the user saw it, or (``beside``) what the API history lacks.

    ``say task`` (or the first ``say text``) is the prompt, later ``say text`` a reply; an
    ``ask`` for a tool is a call whose id is its ``ts``, answered by the next output event
    (the last open ask). ``beside`` holds the row keys of the task's API history: tool
    events and rows equal to one of its rows are then left out.
    """
    events, problem = json_document(ctx.data, ctx.source.name, list)
    if problem is not None:
        yield problem
        return
    seen_prompt, asks = False, CallLedger()  # ask ids are timestamps, not unique: joined by event
    for index, event in enumerate(events):
        locator = f"json:/{index}"
        if not isinstance(event, dict) or event.get("type") not in ("ask", "say"):
            yield bad_record(locator, "not an ask or say event", json.dumps(event)[:2000])
            continue
        if event.get("partial"):
            continue  # a streaming placeholder, superseded by the final event with the same ts
        kind = event.get(event["type"]) or ""
        if beside is not None and kind in UI_CALL_EVENTS:
            continue
        moment = {"timestamp_ns": ns_from_ms(event.get("ts")), "timestamp_source": "record", **base}
        row = _ui_row(event, kind, locator, moment, seen_prompt, asks, beside is not None)
        seen_prompt = seen_prompt or row.turn_type == "user"
        if beside is None or row_key(row) not in beside:
            yield row
    yield from asks.orphans()  # ui_messages.json keeps no output for file tools


def _ui_row(event: dict, kind: str, locator: str, moment: dict, seen_prompt: bool, asks: CallLedger,
            beside: bool) -> Draft:
    text = str(event.get("text") or "")
    if event["type"] == "say" and (kind == "task" or (kind == "text" and not seen_prompt)):
        return Draft("user", text, locator, **moment)
    if event["type"] == "say" and kind == "text":
        return Draft("assistant", text, locator, **moment)
    if kind == "user_feedback":
        return Draft("user", text, locator, **moment)
    if kind == "reasoning":
        return Draft("thinking", text, locator, **moment)
    if event["type"] == "ask" and kind in UI_TOOL_ASKS:
        call = Draft("tool_use", text, locator, tool_name=ui_tool_name(kind, text),
                     tool_use_id=str(event.get("ts", "")), **moment)
        asks.called(call, key=locator)
        return call
    if kind in UI_OUTPUTS:
        call = asks.take_last()
        return Draft("tool_result", text, locator, tool_name=call.tool_name if call else "",
                     tool_use_id=call.tool_use_id if call else "", **moment)
    if kind in ("completion_result", "followup") and (event["type"] == "say" or text):
        return Draft("assistant", text, locator, **moment)  # an empty ask is the "start a new task?" prompt
    if beside and kind == "api_req_started":
        text = _without_request(text)  # the request is the API history's user message again
    return Draft("system", f"ui {event['type']} {kind}: {text}", locator, **moment)


def _without_request(text: str) -> str:
    try:
        info = decode_json(text)
    except ValueError:
        return text
    if not isinstance(info, dict):
        return text
    return json.dumps({key: value for key, value in info.items() if key != "request"}, ensure_ascii=False)


def row_key(row: Draft) -> tuple[str, str]:
    """What makes two rows the same evidence: turn type and text with whitespace runs collapsed."""
    return row.turn_type, " ".join(row.text.split())


def ask_times(ctx: ParseContext) -> list[int] | None:
    """The ms times of the tool asks of the ui_messages.json beside this file; None if none is readable."""
    source = ctx.sibling("ui_messages.json")
    if source is None:
        return None
    try:
        events = decode_json(ctx.read(source))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(events, list):
        return None
    return sorted(event["ts"] for event in events
                  if isinstance(event, dict) and event.get("type") == "ask" and event.get("ask") in UI_TOOL_ASKS
                  and not event.get("partial") and isinstance(event.get("ts"), int)
                  and not isinstance(event.get("ts"), bool))


