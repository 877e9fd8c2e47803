"""The rows of each wire message type (wire/types.py:37-560, kosong message.py and tooling).

Conversation: ``TurnBegin`` / ``SteerInput`` -> ``user`` (in a sub-agent's
events ``subagent prompt:``); ``TextPart`` -> ``assistant``; ``ThinkPart`` ->
``thinking``; a media part -> ``assistant`` with its placeholder; ``ToolCall``
-> ``tool_use`` (``function.arguments`` as written, ``tool_use_id`` = ``id``);
``ToolResult`` -> ``tool_result`` joined by ``tool_call_id``, its text as the
model's context holds it (soul/message.py:36-61: ``<system>ERROR: ...</system>``
then the output). Permissions: ``ApprovalRequest`` -> ``permission request:``,
``ApprovalResponse`` (old name ``ApprovalRequestResolved``) -> ``permission
decision:``, joined to the call through the request id. The rest are system rows
named by their type; an unknown type is ``wire <type>: <payload>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, settings_value
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft

from .values import content_text, part_text, think_text
from .wire import Stream, key_of, nested_stream, remember_request

SHOWN_CHARS = 2000
TOKEN_KEYS = ("input_other", "output", "input_cache_read", "input_cache_creation")
RESPONSES = {"approve": "approved", "approve_for_session": "approved for this session", "reject": "denied"}

Handler = Callable[[Stream, dict, str, dict], Iterator[Draft]]


def message_rows(stream: Stream, message: dict, locator: str, when: dict,
                 nested: dict[str, Stream]) -> Iterator[Draft]:
    """The rows of one wire message (``{"type", "payload"}``); a SubagentEvent's go to the sub-agent's stream."""
    kind, payload = label(message.get("type"), 100), as_dict(message.get("payload"))
    if kind == "SubagentEvent":
        yield from _subagent_event(stream, payload, locator, when, nested)
        return
    handler = HANDLERS.get(kind)
    if handler is None:
        yield stream.row("system", f"wire {kind or '(no type)'}: {excerpt(compact(payload), SHOWN_CHARS)}", locator,
                         when)
        return
    yield from handler(stream, payload, locator, when)


def _subagent_event(top: Stream, payload: dict, locator: str, when: dict,
                    nested: dict[str, Stream]) -> Iterator[Draft]:
    event = as_dict(payload.get("event"))
    stream = nested_stream(nested, top, key_of(payload))
    if stream is None or not event:
        yield top.row("system", f"subagent event: {excerpt(compact(payload), SHOWN_CHARS)}", locator, when)
        return
    yield from message_rows(stream, event, f"{locator}/event", when, nested)


# -- conversation -------------------------------------------------------------------------------


def _turn_begin(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    text = content_text(payload.get("user_input"))
    if stream.subagent:  # the parent agent's Agent call wrote it
        yield stream.row("system", f"subagent prompt: {text}", locator, when)
    else:
        yield stream.row("user", text, locator, when)


def _text(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("assistant", part_text(payload), locator, when)


def _think(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("thinking", think_text(payload), locator, when)


def _tool_call(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    function = as_dict(payload.get("function"))
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else as_text(arguments)
    call = stream.row("tool_use", text, locator, when, tool_name=label(function.get("name")),
                      tool_use_id=label(payload.get("id")))
    stream.calls.called(call)
    yield call


def _tool_call_part(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("system", f"tool call part: {as_text(payload.get('arguments_part'))}", locator, when)


def _tool_result(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    call_id = label(payload.get("tool_call_id"))
    call = stream.calls.take(call_id)
    name = call.tool_name if call is not None else ""
    yield stream.row("tool_result", result_text(as_dict(payload.get("return_value"))), locator, when,
                     tool_name=name, tool_use_id=call_id)
    if call is None:
        yield stream.row("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool "
                                   "call before it", locator, when, tool_use_id=call_id)


def result_text(value: dict) -> str:
    """A ToolReturnValue as the model's context holds it (soul/message.py ``tool_result_to_message``)."""
    message, output = as_text(value.get("message")), _output_parts(value.get("output"))
    if value.get("is_error") is True:
        parts: list = [f"<system>ERROR: {message}</system>", *output]
    else:
        parts = ([f"<system>{message}</system>"] if message else []) + output
        if not parts:
            parts = ["<system>Tool output is empty.</system>"]
        elif not any(isinstance(part, str) or as_dict(part).get("type") == "text" for part in parts):
            parts.insert(0, "<system>Tool returned non-text content.</system>")
    return "\n".join(part_text(part) for part in parts)


def _output_parts(output) -> list:
    if isinstance(output, str):
        return [output] if output else []
    if isinstance(output, dict):
        return [output]
    return [part for part in as_list(output)]


# -- permissions --------------------------------------------------------------------------------


def _approval_request(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    call_id, sender = label(payload.get("tool_call_id")), label(payload.get("sender"))
    yield from remember_request(stream, label(payload.get("id")), call_id, sender, locator)
    source = label(payload.get("subagent_type")) or label(payload.get("agent_id"))
    origin = f" (from sub-agent {source})" if source else ""
    text = f"permission request: {as_text(payload.get('action'))}: {as_text(payload.get('description'))}{origin}"
    yield stream.row("system", text, locator, when, tool_name=sender, tool_use_id=call_id)


def _approval_response(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    request = label(payload.get("request_id"))
    call_id, sender = stream.requests.get(request, ("", ""))
    answer = label(payload.get("response"), 40)
    decided = RESPONSES.get(answer, f"answered {answer or '(no answer)'}")
    feedback = as_text(payload.get("feedback"))
    text = f"permission decision: {decided}" + (f" with feedback: {feedback}" if feedback else "")
    if request and not call_id:
        text += f" (request {request}; the request is not in this file)"
    yield stream.row("system", text, locator, when, tool_name=sender, tool_use_id=call_id)


def _question(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    questions = [as_text(as_dict(item).get("question")) for item in as_list(payload.get("questions"))]
    yield stream.row("system", f"question to the user: {' | '.join(questions)}", locator, when,
                     tool_use_id=label(payload.get("tool_call_id")))


def _client_tool(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("system", f"client tool request: {as_text(payload.get('name'))} "
                               f"{as_text(payload.get('arguments'))}", locator, when,
                     tool_name=label(payload.get("name")), tool_use_id=label(payload.get("id")))


def _hook(stream: Stream, payload: dict, locator: str, when: dict, what: str) -> Iterator[Draft]:
    facts = [f"{key}={as_text(payload[key])}" for key in ("target", "action", "reason", "hook_count", "duration_ms")
             if payload.get(key) not in (None, "")]
    yield stream.row("system", f"hook {what}: {as_text(payload.get('event'))} ({'; '.join(facts)})", locator, when)


# -- turns, steps, status -----------------------------------------------------------------------


def _fixed(text: str) -> Handler:
    def rows(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
        yield stream.row("system", text, locator, when)
    return rows


def _step(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("system", f"step {as_text(payload.get('n'))}", locator, when)


def _retry(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    facts = " ".join(f"{key}={as_text(value)}" for key, value in payload.items() if value is not None)
    yield stream.row("system", f"step retry: {facts}", locator, when)


def _status(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    """A status change: token usage, plan mode, context use and MCP servers, each its own row."""
    usage = as_dict(payload.get("token_usage"))
    if usage:
        counts = " ".join(f"{key}={as_text(usage[key])}" for key in TOKEN_KEYS if key in usage)
        message = label(payload.get("message_id"))
        yield stream.row("system", f"tokens generated: {counts}" + (f" (message {message})" if message else ""),
                         f"{locator}/token_usage", when)
    if isinstance(payload.get("plan_mode"), bool):
        yield stream.row("system", f"permission setting: plan_mode={as_text(payload['plan_mode'])} "
                                   "(from wire.jsonl StatusUpdate)", f"{locator}/plan_mode", when)
    context = [f"{key}={as_text(payload[key])}" for key in ("context_usage", "context_tokens", "max_context_tokens")
               if payload.get(key) is not None]
    if context:
        yield stream.row("system", f"context usage: {' '.join(context)}", locator, when)
    if isinstance(payload.get("mcp_status"), dict):
        yield stream.row("system", f"mcp status: {excerpt(compact(payload['mcp_status']), SHOWN_CHARS)}",
                         f"{locator}/mcp_status", when)
    if not (usage or context or isinstance(payload.get("plan_mode"), bool) or isinstance(payload.get("mcp_status"),
                                                                                            dict)):
        yield stream.row("system", "status update: (no change recorded)", locator, when)


def _notification(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    facts = [f"{key}={as_text(payload[key])}" for key in ("category", "type", "severity", "source_kind", "source_id")
             if payload.get(key) not in (None, "")]
    yield stream.row("system", f"notification: {as_text(payload.get('title'))}: {as_text(payload.get('body'))} "
                               f"({'; '.join(facts)})", locator, when)


def _plan(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("system", f"plan: {as_text(payload.get('content'))} (file {as_text(payload.get('file_path'))})",
                     locator, when)


def _btw_begin(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    """/btw: a side question the user asked while the agent worked; answered apart from the turn."""
    yield stream.row("user", f"/btw {as_text(payload.get('question'))}", locator, when)


def _btw_end(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    if payload.get("error"):
        yield stream.row("system", f"error: /btw: {as_text(payload.get('error'))}", locator, when)
    else:
        yield stream.row("assistant", as_text(payload.get("response")), locator, when)


def _hook_request(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    shown = settings_value(payload.get("input_data"), "input_data")
    yield stream.row("system", f"hook request: {as_text(payload.get('event'))} target={as_text(payload.get('target'))}"
                               f" {excerpt(shown, SHOWN_CHARS)}", locator, when)


def _media(stream: Stream, payload: dict, locator: str, when: dict) -> Iterator[Draft]:
    yield stream.row("assistant", part_text(payload), locator, when)


HANDLERS: dict[str, Handler] = {
    "TurnBegin": _turn_begin,
    "SteerInput": _turn_begin,
    "TurnEnd": _fixed("turn end"),
    "StepBegin": _step,
    "StepInterrupted": _fixed("step interrupted"),
    "StepRetry": _retry,
    "CompactionBegin": _fixed("compaction: begin (the model's context is summarised; the turns before stay here)"),
    "CompactionEnd": _fixed("compaction: end"),
    "MCPLoadingBegin": _fixed("mcp loading: begin"),
    "MCPLoadingEnd": _fixed("mcp loading: end"),
    "HookTriggered": lambda stream, payload, locator, when: _hook(stream, payload, locator, when, "triggered"),
    "HookResolved": lambda stream, payload, locator, when: _hook(stream, payload, locator, when, "resolved"),
    "StatusUpdate": _status,
    "Notification": _notification,
    "TextPart": _text,
    "ThinkPart": _think,
    "ImageURLPart": _media,
    "AudioURLPart": _media,
    "VideoURLPart": _media,
    "ToolCall": _tool_call,
    "ToolCallPart": _tool_call_part,
    "ToolResult": _tool_result,
    "ApprovalRequest": _approval_request,
    "ApprovalResponse": _approval_response,
    "ApprovalRequestResolved": _approval_response,  # the wire v1 name (wire/types.py:652)
    "QuestionRequest": _question,
    "ToolCallRequest": _client_tool,
    "HookRequest": _hook_request,
    "PlanDisplay": _plan,
    "BtwBegin": _btw_begin,
    "BtwEnd": _btw_end,
}
