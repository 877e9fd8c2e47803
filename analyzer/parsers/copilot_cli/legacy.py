"""history-session-state/session_<id>_<startMs>.json: a whole session of a Copilot CLI up to 0.0.341.

One JSON object (npm @github/copilot 0.0.340 package/index.js, schema ``vvn``):
``{sessionId, startTime, selectedModel?, chatMessages, timeline}``.
``timeline`` is what the user saw, each entry ``{id, timestamp, type, ...}``:
``user``, ``copilot`` (a reply), ``info``, ``error``, ``tool_call_requested``
``{callId, name, arguments}`` and ``tool_call_completed`` ``{callId, name,
result{type success|failure|rejected|denied, log}}``. ``chatMessages`` is the
same conversation as the model saw it: OpenAI chat messages (system, developer,
user, assistant with ``tool_calls``, tool with ``tool_call_id``, function),
with no time at all.

Rows come from the timeline, at each entry's own time; ``chatMessages`` is read
only when the timeline is empty (it then holds the only copy), each row at the
session's ``startTime`` (``index``: a lower bound, not the message's time).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.text import bad_record, excerpt, image_placeholder, is_image_block, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

from .values import as_text, compact, label, mapping

FILE_NAME = re.compile(r"session_(.+)_(\d{1,15})\.json$")


def parse_legacy_session(ctx: ParseContext) -> Iterator[Draft]:
    """history-session-state/session_<id>_<ms>.json: the timeline's rows (or the chat messages'), calls joined by id."""
    document, problem = json_document(ctx.data, "legacy session file")
    if problem is not None:
        yield problem
        return
    named = FILE_NAME.search(ctx.source.name)
    session = label(document.get("sessionId")) or (named.group(1) if named else "")
    start = ns_from_iso(document.get("startTime"))
    if start is None and named:  # the file name carries the start in Unix ms
        start = ns_from_ms(named.group(2))
    columns = {"session_id": session}
    started = {"timestamp_ns": start, "timestamp_source": "record" if start is not None else "none"}
    timeline, messages = _list(document.get("timeline")), _list(document.get("chatMessages"))
    model = label(document.get("selectedModel"))
    yield Draft("system", f"session start: startTime={as_text(document.get('startTime'))}, selectedModel={model}, "
                          f"chatMessages={len(messages)}, timeline={len(timeline)} (history-session-state)",
                "file", **columns, **started)
    if model:
        yield Draft("system", f"model: {model}", "json:/selectedModel", model=model, **columns, **started)
    calls = BoundedLedger()
    if timeline:
        for position, entry in enumerate(timeline):
            yield from _timeline_rows(mapping(entry), pointer("timeline", position), columns, calls, entry)
    else:
        at_start = {"timestamp_ns": start, "timestamp_source": "index" if start is not None else "none"}
        for position, message in enumerate(messages):
            yield from _message_rows(mapping(message), pointer("chatMessages", position), {**columns, **at_start},
                                     calls, model)
    yield from calls.orphans()
    yield from calls.over_limit_rows()


def _list(value) -> list:
    return value if isinstance(value, list) else []


# -- timeline -------------------------------------------------------------------------------------

def _timeline_rows(entry: dict, locator: str, columns: dict, calls: BoundedLedger, raw) -> Iterator[Draft]:
    moment = ns_from_iso(entry.get("timestamp"))
    fields = {**columns, "timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none"}
    kind, text = as_text(entry.get("type")), as_text(entry.get("text"))
    if kind == "user":
        yield Draft("user", text, locator, **fields)
    elif kind == "copilot":
        yield Draft("assistant", text, locator, **fields)
    elif kind in ("info", "error"):
        yield Draft("system", f"{kind}: {text}", locator, **fields)
    elif kind == "tool_call_requested":
        draft = Draft("tool_use", compact(entry.get("arguments")), locator, tool_name=label(entry.get("name")),
                      tool_use_id=label(entry.get("callId")), **fields)
        calls.called(draft)
        yield draft
    elif kind == "tool_call_completed":
        yield from _completed(entry, locator, fields, calls)
    else:
        yield bad_record(locator, f"timeline entry of unknown type {excerpt(kind, 80)!r}", compact(raw))


def _completed(entry: dict, locator: str, fields: dict, calls: BoundedLedger) -> Iterator[Draft]:
    call_id, name = label(entry.get("callId")), label(entry.get("name"))
    call = calls.take(call_id)
    result = mapping(entry.get("result"))
    outcome, log = as_text(result.get("type")), as_text(result.get("log"))
    text = {"success": log, "failure": f"error: {log}", "rejected": log or "(rejected by the user: no output recorded)",
            "denied": log or "(denied: no output recorded)"}.get(outcome, compact(result))
    yield Draft("tool_result", text, locator, tool_name=name, tool_use_id=call_id, **fields)
    if outcome == "rejected":
        yield Draft("system", "permission decision: denied", f"{locator}/result", tool_name=name,
                    tool_use_id=call_id, **fields)
    elif outcome == "denied":
        yield Draft("system", f"permission decision: denied ({log})" if log else "permission decision: denied",
                    f"{locator}/result", tool_name=name, tool_use_id=call_id, **fields)
    if call is None:
        yield Draft("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool call "
                              "before it", locator, tool_name=name, tool_use_id=call_id, **fields)


# -- chatMessages (no timeline) -------------------------------------------------------------------

def part_text(content) -> str:
    """OpenAI message content: a string, or its parts (text, refusal; images, audio and files as placeholders)."""
    if isinstance(content, str):
        return content
    parts = []
    for part in _list(content):
        item = mapping(part)
        kind = item.get("type")
        if kind in ("text", "refusal"):
            parts.append(as_text(item.get(kind)))
        elif is_image_block(part):
            parts.append(image_placeholder(part))
        elif kind == "input_audio":
            parts.append(f"[audio {as_text(mapping(item.get('input_audio')).get('format'))}]")
        elif kind == "file":
            parts.append(f"[file {as_text(mapping(item.get('file')).get('filename'))}]")
        else:
            parts.append(compact(part))
    return "\n".join(parts)


def _message_rows(message: dict, locator: str, fields: dict, calls: BoundedLedger, model: str) -> Iterator[Draft]:
    role = as_text(message.get("role"))
    text = part_text(message.get("content"))
    if role in ("system", "developer"):
        prefix = "system prompt" if role == "system" else "system prompt (developer)"
        yield Draft("system", f"{prefix}: {text}", locator, **fields)
    elif role == "user":
        yield Draft("user", text, locator, **fields)
    elif role == "assistant":
        yield from _assistant(message, text, locator, fields, calls, model)
    elif role in ("tool", "function"):
        call_id = label(message.get("tool_call_id"))
        call = calls.take(call_id) if role == "tool" else calls.take_named(label(message.get("name")))
        name = call.tool_name if call is not None else label(message.get("name"))
        yield Draft("tool_result", text, locator, tool_name=name, tool_use_id=call_id or (call.tool_use_id if call
                                                                                           else ""), **fields)
        if call is None:
            yield Draft("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool call "
                                  "before it", locator, tool_name=name, tool_use_id=call_id, **fields)
    else:
        yield bad_record(locator, f"chat message of unknown role {excerpt(role, 80)!r}", compact(message))


def _assistant(message: dict, text: str, locator: str, fields: dict, calls: BoundedLedger,
               model: str) -> Iterator[Draft]:
    tool_calls = _list(message.get("tool_calls"))
    if message.get("refusal"):
        text = f"{text}\nrefusal: {as_text(message['refusal'])}" if text else f"refusal: {as_text(message['refusal'])}"
    legacy = mapping(message.get("function_call"))
    if text.strip() or not (tool_calls or legacy):
        yield Draft("assistant", text, locator, model=model, **fields)
    for position, call in enumerate(tool_calls):
        call = mapping(call)
        function = mapping(call.get("function") or call.get("custom"))
        arguments = function.get("arguments", function.get("input"))
        draft = Draft("tool_use", arguments if isinstance(arguments, str) else compact(arguments),
                      f"{locator}/tool_calls/{position}", tool_name=label(function.get("name")),
                      tool_use_id=label(call.get("id")), model=model, **fields)
        calls.called(draft)
        yield draft
    if legacy:  # the pre-tools function_call: no id; answered by the next function message of that name
        draft = Draft("tool_use", as_text(legacy.get("arguments")), f"{locator}/function_call",
                      tool_name=label(legacy.get("name")), model=model, **fields)
        calls.called(draft, f"function:{len(calls.open)}:{draft.tool_name}")
        yield draft
