"""One Crush message's ``parts`` as rows: text, reasoning, tool calls and results, shell commands, finish marks.

``messages.parts`` is a JSON array of ``{"type": T, "data": {...}}`` wrappers
(internal/message/message.go:528-579, content.go:55-144). Each part gives its
rows here; a message's own columns (role, session, model, times) come in a
``Message``. Rules (docs/agents/crush.md, "Parser plan"):

* ``text``: a ``user`` row in a top-level session, ``subagent prompt:`` in a
  child session (written by the delegating agent or by Crush itself), an
  ``assistant`` row, ``system message:`` for the system role;
* ``reasoning``: a ``thinking`` row (the text; signatures and encrypted
  ``responses_data`` are never shown), timed by its own ``started_at``;
* ``tool_call``: a ``tool_use`` row, its ``input`` (a JSON string) as stored;
  ``tool_result``: a ``tool_result`` row joined by ``tool_call_id``, ``error: ``
  first when ``is_error``; the refusal texts give ``permission decision:`` rows;
* ``shell_command`` (a ``!command`` the user ran): a ``user`` row
  ``shell command: <command>`` and a system row with its output and exit code;
* ``finish``: no row for a routine end (end_turn, tool_use, stop); otherwise
  ``reply ended (<reason>): <message>: <details>``;
* ``image_url`` and ``binary`` (Go field names ``Path``, ``MIMEType``, ``Data``):
  ``attachment:`` rows that never carry the bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, plain
from aitrail.analyzer.formats.text import bad_record, base64_size, excerpt, image_placeholder
from aitrail.analyzer.view.rows import Draft

from .times import crush_ns

ROUTINE_FINISH = frozenset({"end_turn", "tool_use", "stop"})
# The tool result texts of a refusal (internal/agent/tools/tools.go:66-70; hooked_tool.go:62-66;
# "Permission denied" before crush 88c88c650, 2025-11-03) -> the decision they record.
DENIAL_TEXTS = {"User denied permission": "denied", "Permission denied": "denied"}
HOOK_BLOCK = "Tool call blocked by hook. Reason: "
HOOK_HALT = "Turn halted by hook. Reason: "


@dataclass
class Message:
    """The columns of one messages row every row of its parts carries."""

    message_id: str
    role: str
    session_id: str
    delegated: bool  # the session is a child session: its "user" text is not typed by the person
    model: str
    created_ns: int | None
    finished_ns: int | None
    locator: str

    def columns(self, when: int | None = None) -> dict:
        """Draft columns at ``when`` (default: the message's creation)."""
        moment = when if when is not None else self.created_ns
        return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none",
                "session_id": self.session_id, "model": self.model}


def text_of(value) -> str:
    """A field as text: strings as they are, other JSON compact, None as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):  # a BLOB where text was expected
        return plain(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)


def part_rows(message: Message, parts: list, calls: BoundedLedger) -> Iterator[Draft]:
    """Every row of a message's parts, in order; a message that gives none gets one ``empty message:`` row."""
    given = 0
    for position, part in enumerate(parts):
        where = f"{message.locator}/parts/{position}"
        if not isinstance(part, dict):
            yield bad_record(where, "part is not an object", text_of(part))
            given += 1
            continue
        kind, data = part.get("type"), as_dict(part.get("data"))
        render = _RENDERERS.get(kind) if isinstance(kind, str) else None
        rows = list(render(message, data, where, calls) if render else
                    [Draft("system", f"unknown part type {excerpt(text_of(kind), 80)}: {excerpt(text_of(part))}",
                           where, **message.columns())])
        given += len(rows)
        yield from rows
    if not given:
        finish = next((text_of(as_dict(part.get("data")).get("reason")) for part in parts
                       if isinstance(part, dict) and part.get("type") == "finish"), "")
        ended = f", finish {finish}" if finish else ""
        yield Draft("system", f"empty message: {message.message_id} ({message.role or 'no role'}{ended})",
                    message.locator, **message.columns())


def _text(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    text = text_of(data.get("text"))
    if message.role == "assistant":
        yield Draft("assistant", text, where, **message.columns())
    elif message.role == "user":
        if message.delegated:
            yield Draft("system", f"subagent prompt: {text}", where, **message.columns())
        else:
            yield Draft("user", text, where, **message.columns())
    elif message.role == "system":
        yield Draft("system", f"system message: {text}", where, **message.columns())
    else:  # a tool message with text, or a role Crush does not write: named, never guessed
        yield Draft("system", f"text (message role {message.role or 'none'}): {text}", where, **message.columns())


def _reasoning(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    text = text_of(data.get("thinking"))
    if not text:
        text = "[no reasoning text stored: only a signature or an encrypted payload]"
    yield Draft("thinking", text, where, **message.columns(crush_ns(data.get("started_at"))))


def _image(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    shown = image_placeholder({"type": "image_url", "url": data.get("url")})
    yield Draft("system", f"attachment: {shown}", where, **message.columns())


def _binary(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    payload = data.get("Data")
    size = f", {base64_size(payload)} bytes" if isinstance(payload, str) else ""
    yield Draft("system", f"attachment: {excerpt(text_of(data.get('Path')), 500)} "
                          f"({excerpt(text_of(data.get('MIMEType')), 80)}{size})", where, **message.columns())


def _tool_call(message: Message, data: dict, where: str, calls: BoundedLedger) -> Iterator[Draft]:
    call = Draft("tool_use", text_of(data.get("input")), where, tool_name=text_of(data.get("name")),
                 tool_use_id=text_of(data.get("id")), **message.columns())
    calls.called(call)
    yield call


def _tool_result(message: Message, data: dict, where: str, calls: BoundedLedger) -> Iterator[Draft]:
    call_id, content = text_of(data.get("tool_call_id")), text_of(data.get("content"))
    call = calls.take(call_id) if call_id else None
    name = text_of(data.get("name")) or (call.tool_name if call else "")
    text = f"error: {content}" if data.get("is_error") is True else content
    payload, mime = data.get("data"), text_of(data.get("mime_type"))
    if isinstance(payload, str) and payload:
        text += f"\n[{mime or 'binary'} data, {base64_size(payload)} bytes, not shown]"
    columns = {"tool_name": name, "tool_use_id": call_id, **message.columns()}
    yield Draft("tool_result", text, where, **columns)
    if call is None and not (call_id and calls.was_called(call_id)):  # a second result of a call is not this
        yield Draft("system", f"parser: tool result for {name or 'an unknown tool'} with no tool call before it",
                    where, **columns)
    decision = permission_decision(content)
    if decision:
        yield Draft("system", f"permission decision: {decision}", where, **columns)


def permission_decision(content: str) -> str:
    """The decision a refusal's result text records ('' for any other result)."""
    if content in DENIAL_TEXTS:
        return DENIAL_TEXTS[content]
    if content.startswith(HOOK_BLOCK):
        return f"blocked by a PreToolUse hook (not asked): {content[len(HOOK_BLOCK):]}"
    if content.startswith(HOOK_HALT):
        return f"turn halted by a PreToolUse hook: {content[len(HOOK_HALT):]}"
    return ""


def _finish(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    reason = text_of(data.get("reason"))
    if reason in ROUTINE_FINISH:
        return
    said = ": ".join(part for part in (text_of(data.get("message")), text_of(data.get("details"))) if part)
    when = crush_ns(data.get("time"))
    yield Draft("system", f"reply ended ({reason or 'no reason'}){': ' + said if said else ''}", where,
                **message.columns(when if when is not None else message.finished_ns))


def _shell_command(message: Message, data: dict, where: str, _calls) -> Iterator[Draft]:
    yield Draft("user", f"shell command: {text_of(data.get('command'))}", where, **message.columns())
    yield Draft("system", f"shell command output (exit code {text_of(data.get('exit_code'))}): "
                          f"{text_of(data.get('output'))}", where, **message.columns())


_RENDERERS = {
    "text": _text, "reasoning": _reasoning, "image_url": _image, "binary": _binary, "tool_call": _tool_call,
    "tool_result": _tool_result, "finish": _finish, "shell_command": _shell_command,
}
