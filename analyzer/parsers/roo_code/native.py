"""Roo Code's own reading of API messages: native tool blocks and non-destructive context management.

Plugged into the shared Cline walk as its ``TaskFlavour.reader``:

* native tool calling (3.32+): ``tool_use {id, name, input}`` in assistant
  messages, ``tool_result {tool_use_id, content}`` in user messages, joined by
  id across the whole file. The result is the raw output (no Cline
  ``[tool] Result:`` header); from 3.33.1 denials and approvals with a note are
  JSON status strings at its start (``{"status":"denied","feedback":"…"}``),
  before that the plain texts the XML era used;
* the first user message wraps the prompt in ``<user_message>``;
* condense and sliding-window truncation (3.36+) keep the hidden messages in the
  file, tagged ``condenseParent`` / ``truncationParent``: their rows stay and
  their text starts ``condensed: `` / ``truncated: `` when the summary or
  marker they point to is in the file (upstream filters only those); the
  ``isSummary`` message's text is ``condense summary: `` system rows and the
  tool_use blocks copied into it (3.36-3.43, to keep calls paired) make no
  second call; the ``isTruncationMarker`` message is a ``truncation marker:`` row.

XML-era messages (no tool blocks in the file) keep the shared walk's reading,
marked the same way when hidden, with ``<user_message>`` unwrapped.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.cline_results import block_text, classify_user_block, permission_decision
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.text import image_placeholder, is_image_block
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

NATIVE_BLOCKS = ("tool_use", "tool_result")
KEPT_PREFIXES = ("parser: ", "permission decision: ")  # fixed prefixes stay first; the call's rows carry the mark
_USER_MESSAGE = ("<user_message>", "</user_message>")
_STATUS_DECISIONS = {("denied", False): "denied", ("denied", True): "denied with feedback",
                     ("approved", True): "approved with feedback"}


def _blocks(message: dict) -> list:
    content = message.get("content")
    return [content] if isinstance(content, str) else content if isinstance(content, list) else []


def is_native(messages: list) -> bool:
    """Whether any message holds a tool_use or tool_result block (one linear pass)."""
    return any(isinstance(block, dict) and block.get("type") in NATIVE_BLOCKS
               for message in messages if isinstance(message, dict) for block in _blocks(message))


def status_decision(text: str) -> str | None:
    """The permission decision a tool result's text records: Roo's JSON status, else the XML-era plain text."""
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith('{"status"'):
        try:
            status = decode_json(first)
        except ValueError:
            return None
        if isinstance(status, dict) and isinstance(status.get("status"), str):
            return _STATUS_DECISIONS.get((status["status"], bool(status.get("feedback"))))
        return None
    return permission_decision(text)


def _text_field(message: dict, key: str) -> str:
    value = message.get(key)
    return value if isinstance(value, str) else ""  # a hostile file can put anything there


def _ids(messages: list, flag: str, key: str) -> set[str]:
    """The ids (``condenseId``, ``truncationId``) of the messages carrying ``flag``; '' never counts."""
    found = {_text_field(m, key) for m in messages if isinstance(m, dict) and m.get(flag)}
    found.discard("")
    return found


def _reasoning_text(block: dict) -> str:
    if block.get("type") == "thinking":
        return str(block.get("thinking", ""))
    if block.get("type") == "redacted_thinking":
        return "[redacted thinking]"
    text = block.get("text")
    if isinstance(text, str) and text:
        return text
    summary = block.get("summary")
    items = summary if isinstance(summary, list) else []
    parts = [str(item.get("text", "")) for item in items if isinstance(item, dict)]
    if any(parts):
        return "\n".join(part for part in parts if part)
    return "[encrypted reasoning]" if block.get("encrypted_content") else ""


def _unwrap_user_message(text: str) -> str | None:
    stripped = text.strip()
    if stripped.startswith(_USER_MESSAGE[0]) and stripped.endswith(_USER_MESSAGE[1]):
        return stripped[len(_USER_MESSAGE[0]):-len(_USER_MESSAGE[1])].strip("\n")
    return None


class RooReader:
    """The MessageReader of one api_conversation_history.json (see the module docstring)."""

    def __init__(self, messages: list) -> None:
        self.native = is_native(messages)
        self.calls = BoundedLedger()  # native calls, joined by id anywhere later in the file (MAX_CALL_IDS)
        # at most one id per message, the very strings the decoded document holds: bounded by the document
        self.summaries = _ids(messages, "isSummary", "condenseId")
        self.markers = _ids(messages, "isTruncationMarker", "truncationId")

    def rows(self, message: dict, index: int, moment: dict, default: Iterator[Draft]) -> Iterator[Draft]:
        """One message's rows, marked when a condense or truncation hides it from the model."""
        locator = f"json:/{index}"
        if message.get("isSummary"):
            rows = self._summary(message, locator, moment)
        elif message.get("isTruncationMarker"):
            rows = iter([Draft("system", "truncation marker: " + "\n".join(block_text(b) for b in _blocks(message)),
                               f"{locator}/content", **moment)])
        elif self.native:
            rows = self._native(message, locator, moment)
        else:
            rows = self._unwrapped(default)
        mark = self._mark(message)
        for row in rows:
            if mark and not row.text.startswith(KEPT_PREFIXES):
                row.text = mark + row.text
            yield row

    @staticmethod
    def _unwrapped(rows: Iterator[Draft]) -> Iterator[Draft]:
        for row in rows:  # the walk knows Cline's <task>; Roo's prompts and answers come in <user_message>
            prompt = _unwrap_user_message(row.text) if row.turn_type == "user" else None
            if prompt is not None:
                row.text = prompt
            yield row

    def finish(self) -> Iterator[Draft]:
        """A ``no result recorded`` row per native call never answered; the ``parser:`` row of a file past the limit."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()

    def _mark(self, message: dict) -> str:
        if _text_field(message, "condenseParent") in self.summaries:
            return "condensed: "
        if _text_field(message, "truncationParent") in self.markers:
            return "truncated: "
        return ""

    def _summary(self, message: dict, locator: str, moment: dict) -> Iterator[Draft]:
        for position, block in enumerate(_blocks(message)):
            where = f"{locator}/content/{position}"
            if isinstance(block, dict) and block.get("type") == "tool_use":
                if not self.calls.was_called(str(block.get("id", ""))):  # a copy of an earlier call adds nothing
                    yield from self._tool_use(block, where, moment)
                continue
            text = _reasoning_text(block) if isinstance(block, dict) and block.get("type") != "text" else \
                block_text(block)
            if text.strip():
                yield Draft("system", f"condense summary: {text}", where, **moment)

    def _native(self, message: dict, locator: str, moment: dict) -> Iterator[Draft]:
        if message.get("role") == "assistant" and isinstance(message.get("reasoning_content"), str):
            yield Draft("thinking", message["reasoning_content"], f"{locator}/reasoning_content", **moment)
        last_result: Draft | None = None
        for position, block in enumerate(_blocks(message)):
            where = f"{locator}/content/{position}"
            kind = block.get("type") if isinstance(block, dict) else "text"
            if kind == "tool_use":
                yield from self._tool_use(block, where, moment)
            elif kind == "tool_result":
                rows = list(self._tool_result(block, where, moment))
                last_result = rows[0]
                yield from rows
            elif kind in ("thinking", "redacted_thinking", "reasoning"):
                yield Draft("thinking", _reasoning_text(block), where, **moment)
            elif kind == "thoughtSignature":
                continue  # an opaque provider signature carried for the next request
            elif is_image_block(block) and last_result is not None:  # a tool's image follows its result
                yield Draft("tool_result", image_placeholder(block), where, tool_name=last_result.tool_name,
                            tool_use_id=last_result.tool_use_id, **moment)
            elif kind == "text" or is_image_block(block):
                yield from self._text(message.get("role"), block_text(block), where, moment)
            else:
                yield Draft("system", f"content block {kind}: {setting_value(block)[:2000]}", where, **moment)

    def _text(self, role: object, text: str, where: str, moment: dict) -> Iterator[Draft]:
        if not text.strip():
            return
        if role == "assistant":
            yield Draft("assistant", text, where, **moment)
            return
        prompt = _unwrap_user_message(text)
        if prompt is not None:
            yield Draft("user", prompt, where, **moment)
            return
        block = classify_user_block(text)
        if block.kind in ("task", "user") and not text.lstrip().startswith("<system-reminder>"):
            yield Draft("user", block.text, where, **moment)
        else:  # environment details, notices, reminders: put there by the extension, not typed
            yield Draft("system", text, where, **moment)

    def _tool_use(self, block: dict, where: str, moment: dict) -> Iterator[Draft]:
        call_id, name = str(block.get("id") or ""), str(block.get("name") or "")
        call = Draft("tool_use", setting_value(block.get("input")), where, tool_name=name, tool_use_id=call_id,
                     **moment)
        if call_id and self.calls.was_called(call_id):
            yield Draft("system", f"parser: tool call {call_id} ({name}) recorded again; its first row stands",
                        where, tool_name=name, tool_use_id=call_id, **moment)
            return
        self.calls.called(call)
        yield call

    def _tool_result(self, block: dict, where: str, moment: dict) -> Iterator[Draft]:
        call_id = str(block.get("tool_use_id") or "")
        call = self.calls.take(call_id)
        name = call.tool_name if call is not None else self.calls.called_name(call_id)
        content = block.get("content")
        parts = content if isinstance(content, list) else [content if isinstance(content, str) else ""]
        text = "\n".join(block_text(part) for part in parts)
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **moment)
        if call is None:
            yield Draft("system", f"parser: tool result for {name or 'call ' + (call_id or '(no id)')} with no tool "
                                  "call before it", where, tool_name=name, tool_use_id=call_id, **moment)
        decision = status_decision(text)
        if decision:
            yield Draft("system", f"permission decision: {decision}", where, tool_name=name, tool_use_id=call_id,
                        **moment)
