"""OpenCode-schema message and part objects as rows: one renderer for every store that holds them.

OpenCode's opencode.db and the database of its fork Kilo CLI (kilo.db) store each
message and part as JSON (``data``) without its ids; OpenCode's legacy storage/ tree
stores the same objects with them. All are rendered here, so a part reads the same
whichever store (and agent) it came from.

* A ``text`` part of a user message is a ``user`` row, of an assistant message an
  ``assistant`` row; ``synthetic`` text (added by OpenCode, not typed) is a
  ``synthetic text:`` system row.
* ``reasoning`` parts are ``thinking`` rows, never assistant text.
* A ``tool`` part holds a call and, once finished, its result (updated in place):
  a ``tool_use`` row (the input as compact JSON) and a ``tool_result`` row (output or
  error) sharing ``callID``; a pending or running part has no result, so the
  ledger gives its ``parser: no result recorded ...`` row. An error that is a
  permission refusal adds a ``permission decision:`` row.
* ``step-finish`` is a ``tokens generated:`` row (token counts and cost; no credential);
  the other part types are system rows naming their type; an unknown type is named too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.idioms import as_dict, plain
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft, ns_from_ms

# permission/next.ts: RejectedError, CorrectedError, DeniedError messages (the tool part's state.error)
REJECTED = "The user rejected permission to use this specific tool call"
FEEDBACK = " with the following feedback: "
RULE_DENIED = "The user has specified a rule which prevents you from using this specific tool call"


@dataclass
class MessageInfo:
    """What a part's rows take from its message: role, session, project, model and time."""

    role: str = ""
    session_id: str = ""
    project_path: str = ""
    model: str = ""
    created_ns: int | None = None
    completed_ns: int | None = None


def text_of(value) -> str:
    """A value as row text: strings as they are, anything else as compact JSON ('' for None)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):  # a SQLite BLOB where text was expected
        return plain(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)


def message_info(data: dict, session_id: str, project_path: str) -> MessageInfo:
    """The part-facing columns of a message object (``data``), given its session and project."""
    role = data.get("role") if isinstance(data.get("role"), str) else ""
    if role == "user":
        model = as_dict(data.get("model")).get("modelID")  # the model asked for
    else:
        model = data.get("modelID")  # the model that answered
    cwd = as_dict(data.get("path")).get("cwd")
    times = as_dict(data.get("time"))
    return MessageInfo(role, session_id, project_path or (cwd if isinstance(cwd, str) else ""),
                       model if isinstance(model, str) else "", ns_from_ms(times.get("created")),
                       ns_from_ms(times.get("completed")))


def model_row(previous: str, current: str, locator: str, columns: dict) -> Iterator[Draft]:
    """``model: <id>`` for a session's first answering model, ``model: <old> -> <new>`` where it changes."""
    if not current or current == previous:
        return
    text = f"model: {current}" if not previous else f"model: {previous} -> {current}"
    yield Draft("system", text, locator, **columns)


def message_rows(data: dict, info: MessageInfo, locator: str) -> Iterator[Draft]:
    """Rows a message gives of its own (not through its parts): an assistant message's error."""
    error = as_dict(data.get("error"))
    if error:
        detail = as_dict(error.get("data")).get("message")
        yield Draft("system", f"error: {text_of(error.get('name'))}: {text_of(detail)}".rstrip(": "), locator,
                    **columns(info, info.created_ns))


def columns(info: MessageInfo, when: int | None) -> dict:
    """The Draft columns every row of a message's parts carries."""
    return {"timestamp_ns": when, "timestamp_source": "record" if when is not None else "none",
            "session_id": info.session_id, "project_path": info.project_path, "model": info.model}


def part_rows(part: dict, info: MessageInfo, locator: str, fallback_ns: int | None,
              calls: CallLedger) -> Iterator[Draft]:
    """The rows of one part object; ``fallback_ns`` times parts that carry no time of their own."""
    kind = part.get("type")
    own = ns_from_ms(as_dict(part.get("time")).get("start"))
    base = columns(info, own if own is not None else fallback_ns)
    if kind == "text":
        yield _text_row(part, info, locator, base)
    elif kind == "reasoning":
        yield Draft("thinking", text_of(part.get("text")), locator, **base)
    elif kind == "tool":
        yield from _tool_rows(part, locator, base, fallback_ns, calls)
    elif kind == "step-finish":  # without a time of its own: when the message completed, if known
        finished = columns(info, own or info.completed_ns or fallback_ns)
        yield Draft("system", _tokens_text(part, info.model), locator, **finished)
    else:
        yield Draft("system", _other_text(kind, part), locator, **base)


def _text_row(part: dict, info: MessageInfo, locator: str, base: dict) -> Draft:
    text = text_of(part.get("text"))
    if part.get("synthetic") is True:  # OpenCode's own addition (file contents, reminders), not typed
        return Draft("system", f"synthetic text: {text}", locator, **base)
    if info.role in ("user", "assistant"):
        return Draft(info.role, text, locator, **base)
    # a role this parser does not know (or a part whose message is missing): named, never guessed
    label = f"message role {info.role}" if info.role else "no message role: its message is not in the bundle"
    return Draft("system", f"text ({label}): {text}", locator, **base)


def _tool_rows(part: dict, locator: str, base: dict, fallback_ns: int | None, calls: CallLedger) -> Iterator[Draft]:
    state = as_dict(part.get("state"))
    times = as_dict(state.get("time"))
    name, call_id = text_of(part.get("tool")), text_of(part.get("callID"))
    started = ns_from_ms(times.get("start"))
    at_start = {**base, **_when(started if started is not None else fallback_ns)}
    use = Draft("tool_use", text_of(state.get("input")), locator, tool_name=name, tool_use_id=call_id, **at_start)
    yield use
    calls.called(use)
    status = state.get("status")
    if status not in ("completed", "error"):
        return  # pending or running: the ledger's no-result row stands for the missing result
    ended = ns_from_ms(times.get("end"))
    at_end = {**base, **_when(ended if ended is not None else at_start["timestamp_ns"])}
    result = state.get("output") if status == "completed" else state.get("error")
    calls.take(call_id)
    yield Draft("tool_result", text_of(result), locator, tool_name=name, tool_use_id=call_id, **at_end)
    decision = permission_decision(result) if status == "error" else ""
    if decision:
        yield Draft("system", f"permission decision: {decision}", locator, tool_name=name, tool_use_id=call_id,
                    **at_end)


def _when(ns: int | None) -> dict:
    return {"timestamp_ns": ns, "timestamp_source": "record" if ns is not None else "none"}


def permission_decision(error) -> str:
    """``denied``, ``denied with feedback`` or ``denied by a permission rule`` for a refusal; '' otherwise."""
    if not isinstance(error, str):
        return ""
    if error.startswith(REJECTED + FEEDBACK):
        return "denied with feedback"
    if error.startswith(REJECTED):
        return "denied"
    if error.startswith(RULE_DENIED):
        return "denied by a permission rule (not asked)"
    return ""


def _tokens_text(part: dict, model: str) -> str:
    tokens = as_dict(part.get("tokens"))
    cache = as_dict(tokens.get("cache"))
    counts = [f"{key}={text_of(tokens.get(key))}" for key in ("input", "output", "reasoning") if key in tokens]
    counts += [f"cache_{key}={text_of(cache.get(key))}" for key in ("read", "write") if key in cache]
    if "cost" in part:
        counts.append(f"cost={text_of(part.get('cost'))}")
    return f"tokens generated: model={model} {' '.join(counts)} (step finish: {text_of(part.get('reason'))})"


def _attachment(part: dict) -> str:
    url = text_of(part.get("url"))
    shown = "data: URL" if url.startswith("data:") else url  # inline content is not repeated
    return f"attachment: {text_of(part.get('filename'))} ({text_of(part.get('mime'))}, {shown})"


# part type -> its system row's text, from the part's fields
_OTHER_PARTS = {
    "step-start": lambda part: f"step start: snapshot={text_of(part.get('snapshot'))}",
    "file": _attachment,
    "agent": lambda part: f"agent: @{text_of(part.get('name'))}",
    "subtask": lambda part: (f"subtask: agent={text_of(part.get('agent'))} "
                             f"description={text_of(part.get('description'))}: {text_of(part.get('prompt'))}"),
    "snapshot": lambda part: f"snapshot: {text_of(part.get('snapshot'))}",
    "patch": lambda part: f"patch: {text_of(part.get('hash'))} files={text_of(part.get('files'))}",
    "retry": lambda part: (f"retry: attempt={text_of(part.get('attempt'))} "
                           f"error={excerpt(text_of(part.get('error')))}"),
    "compaction": lambda part: f"compaction: auto={text_of(part.get('auto'))}",
}


def _other_text(kind, part: dict) -> str:
    """The text of a part that is no text, reasoning, tool or step-finish part; an unknown type is named."""
    render = _OTHER_PARTS.get(kind) if isinstance(kind, str) else None
    return render(part) if render else f"unknown part type {text_of(kind)}: {excerpt(text_of(part))}"
