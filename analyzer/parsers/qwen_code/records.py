"""Qwen Code ``system`` records (``type: "system"``), by ``subtype``, as rows.

Each carries its data in ``systemPayload``:

* ``session_model`` ``{modelId, authType, baseUrl?}``: ``model: <id>`` (or
  ``model: <old> -> <new>``) ``(session_model record: authType=…)``;
* ``session_approval_mode`` ``{mode}``: ``permission setting: approvalMode=…``;
* ``custom_title`` ``{customTitle, titleSource}``: ``title: <title> (titleSource=…)``;
* ``chat_compression`` ``{info, compressedHistory[]}``: ``compaction: …`` with
  the first kept turn (the summary) in full; the records before it stay rows;
* ``slash_command`` ``{phase, rawCommand, outputHistoryItems?}``: the
  invocation is a ``user`` row (what was typed), the result ``slash command
  output: …``;
* ``at_command`` ``{filesRead, status, message?}``: ``at command: …``;
* ``rewind`` ``{truncatedCount}``: ``rewind: …``;
* ``ui_telemetry`` ``{uiEvent}``: a ``qwen-code.tool_call`` event with a
  ``decision`` is the user's answer to a confirmation: ``permission decision:
  approved`` (``accept``), ``approved, always allowed`` (``auto_accept``),
  ``approved with edits`` (``modify``), ``denied`` (``reject``); a tool_call
  event without one (no confirmation was answered) is ``telemetry tool_call:
  status=… (no decision recorded)``; ``api_error`` is ``api error: …``; other
  events (``api_response``: its tokens are also the assistant record's
  ``tokens generated:`` row) ``telemetry <name>: <event>``;
* ``parent_session``, ``session_source``, and the sub-agent records
  ``agent_bootstrap``, ``agent_launch_prompt`` (``subagent prompt:``),
  ``agent_retry``;
* any other subtype: ``system <subtype>: <payload>`` (an excerpt).

    {"type":"system","subtype":"session_model","systemPayload":{"modelId":"qwen3-coder-plus","authType":"qwen-oauth"},…}

References: npm @qwen-code/qwen-code@0.24.4 chunks/chunk-DPEB6S2R.js (chatRecordingService.ts:
``recordSlashCommand``, ``recordChatCompression``, ``recordUiTelemetryEvent``, ``rewindRecording``,
``persistCustomTitle``, ``recordParentSession``, ``recordSessionSource``, ``recordSessionModel``,
``recordAtCommand``; agent-transcript.ts ``recordSystem``); chunks/chunk-2VS5EEXU.js (``ToolCallEvent``,
``getDecisionFromOutcome``, ``logToolCall``); QwenLM/qwen-code@015346f1d5
packages/core/src/services/chatRecordingService.ts (``SessionApprovalModeRecordPayload``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from aitrail.analyzer.formats.gemini_content import compact, part_text, parts_of
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft

from .values import as_dict, as_list, as_text

if TYPE_CHECKING:  # chat.py imports this module
    from .chat import ChatState

# ToolCallEvent.decision (getDecisionFromOutcome) as the row that says what the user answered
DECISIONS = {
    "accept": "permission decision: approved",
    "auto_accept": "permission decision: approved, always allowed",
    "modify": "permission decision: approved with edits",
    "reject": "permission decision: denied",
}


def system_rows(state: ChatState, record: dict, locator: str, columns: dict) -> Iterator[Draft]:
    """The rows of a ``system`` record: its subtype's, or ``system <subtype>: <payload>``."""
    subtype = as_text(record.get("subtype"))
    payload = record.get("systemPayload")
    handler = SYSTEM_HANDLERS.get(subtype)
    if handler is not None and isinstance(payload, dict):
        yield from handler(state, payload, f"{locator}/systemPayload", columns)
    else:
        yield Draft("system", f"system {subtype or '(no subtype)'}: {excerpt(compact(payload))}", locator,
                    **columns)


def _pairs(payload: dict, *keys: str) -> str:
    return " ".join(f"{key}={as_text(payload[key])}" for key in keys if payload.get(key) not in (None, ""))


def _session_model(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    model = as_text(payload.get("modelId"))
    change = f"{state.model} -> {model}" if state.model and state.model != model else model
    state.model = model or state.model
    yield Draft("system", f"model: {change} (session_model record: {_pairs(payload, 'authType', 'baseUrl')})",
                locator, model=model, **columns)


def _approval_mode(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    extra = _pairs(payload, "prePlanMode", "planExecutionMode")
    yield Draft("system", f"permission setting: approvalMode={compact(payload.get('mode'))} (session_approval_mode "
                          f"record{', ' + extra if extra else ''})", locator, **columns)


def _title(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    source = as_text(payload.get("titleSource")) or "not recorded: manual"
    yield Draft("system", f"title: {as_text(payload.get('customTitle'))} (titleSource={source})", locator,
                **columns)


def _content_text(content) -> str:
    return "".join(part_text(part) for part in parts_of(as_dict(content).get("parts")))


def _compression(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    info = as_dict(payload.get("info"))
    history = as_list(payload.get("compressedHistory"))
    facts = " ".join(f"{key}={compact(value)}" for key, value in info.items())
    first = _content_text(history[0]) if history else ""
    yield Draft("system", f"compaction: history compressed ({facts}); the model's history is now {len(history)} "
                          f"turns; the records before this one stay in the file. First turn: {first}", locator,
                **columns)


def _slash_command(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    command = as_text(payload.get("rawCommand"))
    if payload.get("phase") == "invocation":
        yield Draft("user", command, locator, **columns)
        return
    items = as_list(payload.get("outputHistoryItems"))
    output = "\n".join(as_text(item.get("text")) if isinstance(item, dict) and isinstance(item.get("text"), str)
                       else compact(item) for item in items)
    yield Draft("system", f"slash command output: {command} ({as_text(payload.get('phase')) or 'no phase'}): "
                          f"{output}", locator, **columns)


def _at_command(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    message = as_text(payload.get("message"))
    yield Draft("system", f"at command: status={as_text(payload.get('status'))} filesRead="
                          f"{compact(payload.get('filesRead'))}{': ' + message if message else ''}", locator,
                **columns)


def _rewind(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"rewind: {compact(payload.get('truncatedCount'))} history items cut back; the records "
                          "they came from stay in the file, off the parentUuid chain", locator, **columns)


def _telemetry(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    event = as_dict(payload.get("uiEvent"))
    name = as_text(event.get("event.name"))
    short = name.rsplit(".", 1)[-1]
    if short == "tool_call":
        decision = DECISIONS.get(as_text(event.get("decision")))
        call_id = as_text(event.get("call_id"))
        tool = {"tool_name": as_text(event.get("function_name")), "tool_use_id": call_id}
        if decision is not None:
            if decision.endswith("denied"):
                state.decide(call_id)
            yield Draft("system", decision, f"{locator}/uiEvent/decision", **tool, **columns)
        else:  # no confirmation was answered: allowed by a rule or the approval mode, or failed before asking
            yield Draft("system", f"telemetry tool_call: {_pairs(event, 'status', 'duration_ms', 'error_type')} (no "
                                  "decision recorded)", f"{locator}/uiEvent", **tool, **columns)
    elif short == "api_error":
        yield Draft("system", f"api error: model={as_text(event.get('model'))} {as_text(event.get('error'))} "
                              f"({_pairs(event, 'error_type', 'status_code', 'duration_ms')})", locator, **columns)
    else:  # api_request, api_response (its tokens are the assistant record's usageMetadata row), others
        yield Draft("system", f"telemetry {name or '(no name)'}: {excerpt(compact(event))}", locator, **columns)


def _parent_session(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"parent session: {as_text(payload.get('parentSessionId'))} (this session was created "
                          "from it: create_sub_session)", locator, **columns)


def _session_source(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"session source: {_pairs(payload, 'sourceType', 'sourceId')}", locator, **columns)


def _bootstrap(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"subagent bootstrap: {as_text(payload.get('kind'))} with "
                          f"{len(as_list(payload.get('history')))} turns of the parent's history", locator, **columns)


def _launch_prompt(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"subagent prompt: {as_text(payload.get('displayText'))}", locator, **columns)


def _retry(state: ChatState, payload: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield Draft("system", f"subagent retry: attempt {compact(payload.get('attempt'))}", locator, **columns)


SYSTEM_HANDLERS: dict[str, Callable[..., Iterator[Draft]]] = {
    "session_model": _session_model,
    "session_approval_mode": _approval_mode,
    "custom_title": _title,
    "chat_compression": _compression,
    "slash_command": _slash_command,
    "at_command": _at_command,
    "rewind": _rewind,
    "ui_telemetry": _telemetry,
    "parent_session": _parent_session,
    "session_source": _session_source,
    "agent_bootstrap": _bootstrap,
    "agent_launch_prompt": _launch_prompt,
    "agent_retry": _retry,
}
