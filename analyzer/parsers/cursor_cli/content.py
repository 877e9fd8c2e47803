"""Cursor CLI message content, as both the transcript JSONL and store.db's JSON blobs hold it.

A message is ``{role, content}`` (transcripts nest it as ``{role, message: {content}}``);
``content`` is a string or a list of blocks: ``text``, ``thinking`` / ``reasoning``,
``tool_use`` (``{name, input}``, an ``id`` when the build writes one) or the
``tool-call`` spelling (``toolCallId``, ``toolName``, ``args``), and ``tool_result`` /
``tool-result`` blocks (``tool_use_id`` / ``toolCallId``). The user's own words are
the text inside ``<user_query>…</user_query>``; whatever else a user message carries
(attached files, rules, reminders) was put there by the CLI and is a ``context:``
system row, never a ``user`` row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.view.rows import Draft

OPEN_TAG, CLOSE_TAG = "<user_query>", "</user_query>"
TEXT_TYPES = ("text", "input_text", "output_text")
THINKING_TYPES = ("thinking", "reasoning", "redacted_thinking")
CALL_TYPES = ("tool_use", "tool-call", "tool_call")
RESULT_TYPES = ("tool_result", "tool-result")


def split_user_text(text: str) -> tuple[list[str], str]:
    """The prompts inside ``<user_query>`` tags, and the rest of the text (injected context), stripped.

    One linear scan: an opening tag with no closing tag after it ends the scan, and
    that tail stays in the rest.
    """
    prompts: list[str] = []
    rest: list[str] = []
    position = 0
    while True:
        start = text.find(OPEN_TAG, position)
        end = text.find(CLOSE_TAG, start + len(OPEN_TAG)) if start >= 0 else -1
        if end < 0:
            break
        rest.append(text[position:start])
        prompts.append(text[start + len(OPEN_TAG):end].strip())
        position = end + len(CLOSE_TAG)
    rest.append(text[position:])
    return [prompt for prompt in prompts if prompt], "".join(rest).strip()


def result_text(value) -> str:
    """A tool result's content: a string as it is, text blocks joined by newlines, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [item.get("text") for item in value if isinstance(item, dict)]
        if texts and all(isinstance(text, str) for text in texts) and len(texts) == len(value):
            return "\n".join(texts)
    return "" if value is None else setting_value(value)


def _first_text(block: dict, *keys: str) -> str:
    for key in keys:
        if isinstance(block.get(key), str):
            return block[key]
    return ""


class Conversation:
    """The rows of one conversation's messages, with its tool-call ledger.

    Args:
        base: the columns every row of the conversation carries (time, session, project, model).
        subagent: a sub-agent's conversation, whose "user" is the delegating agent.
        untagged_is_prompt: a user text with no ``<user_query>`` tag at all is the prompt
            (store.db's observed shape) rather than injected context (the transcripts').
        fragment: the messages are pieces outside the conversation's order (store.db blobs no
            longer in its tree): a result whose call is not among them is not reported.
        results_recorded: whether the store's format records tool results at all; where it
            never does, a call without one is the format, not damage, and gets no row.
    """

    def __init__(self, base: dict, subagent: bool = False, untagged_is_prompt: bool = False,
                 fragment: bool = False, results_recorded: bool = True) -> None:
        self.base = base
        self.subagent = subagent
        self.untagged_is_prompt = untagged_is_prompt
        self.fragment = fragment
        # at most call_budget.MAX_CALL_IDS ids held: a JSONL transcript keeps every call open (no results)
        self.ledger = BoundedLedger(CallLedger(results_recorded=results_recorded))

    def message(self, role: str, content, where: str, position: str) -> Iterator[Draft]:
        """The rows of one message; ``where`` is its locator, ``position`` names it in positional call ids."""
        if isinstance(content, str):
            yield from self._text(role, content, where)
            return
        if not isinstance(content, list):
            yield bad_record(where, f"{role} message content is a JSON {type(content).__name__}, not text or blocks",
                             setting_value(content))
            return
        for index, block in enumerate(content):
            at = f"{where}/content/{index}"
            if isinstance(block, str):
                yield from self._text(role, block, at)
            elif not isinstance(block, dict):
                yield bad_record(at, f"content block is a JSON {type(block).__name__}", setting_value(block))
            else:
                yield from self._block(role, block, at, f"{position}.{index}")

    def _block(self, role: str, block: dict, where: str, position: str) -> Iterator[Draft]:
        kind = block.get("type")
        if kind in TEXT_TYPES:
            yield from self._text(role, _first_text(block, "text"), where)
        elif kind in THINKING_TYPES:
            text = _first_text(block, "thinking", "text", "reasoning")
            yield Draft("thinking", text, where, **self.base)
        elif kind in CALL_TYPES:
            yield self._call(block, where, position)
        elif kind in RESULT_TYPES:
            yield from self._result(block, where)
        else:
            yield Draft("system", f"block {kind}: {excerpt(setting_value(block))}", where, **self.base)

    def _text(self, role: str, text: str, where: str) -> Iterator[Draft]:
        if not text.strip():
            yield Draft("system", f"empty {role} text", where, **self.base)
            return
        if role == "assistant":
            yield Draft("assistant", text, where, **self.base)
        elif role == "user":
            yield from self._user_text(text, where)
        elif role == "system":
            yield Draft("system", f"context (system): {text}", where, **self.base)
        else:
            yield Draft("system", f"message {role}: {text}", where, **self.base)

    def _user_text(self, text: str, where: str) -> Iterator[Draft]:
        prompts, rest = split_user_text(text)
        if not prompts and self.untagged_is_prompt:
            prompts, rest = [text.strip()], ""
        for prompt in prompts:
            if self.subagent:  # the delegating agent wrote it, not the user
                yield Draft("system", f"subagent prompt: {prompt}", where, **self.base)
            else:
                yield Draft("user", prompt, where, **self.base)
        if rest:
            yield Draft("system", f"context: {rest}", where, **self.base)

    def _call(self, block: dict, where: str, position: str) -> Draft:
        name = _first_text(block, "name", "toolName")
        call_id = _first_text(block, "id", "toolCallId", "tool_use_id") or f"pos:{position}"
        arguments = block.get("input", block.get("args"))
        text = arguments if isinstance(arguments, str) else setting_value(arguments)
        call = Draft("tool_use", text, where, tool_name=name, tool_use_id=call_id, **self.base)
        self.ledger.called(call)
        return call

    def _result(self, block: dict, where: str) -> Iterator[Draft]:
        call_id = _first_text(block, "tool_use_id", "toolCallId", "id")
        call = self.ledger.take(call_id) if call_id else self.ledger.take_last()
        name = _first_text(block, "name", "toolName") or (call.tool_name if call else "")
        call_id = call_id or (call.tool_use_id if call else "")
        text = result_text(block.get("content", block.get("result", block.get("output"))))
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **self.base)
        if call is None and not self.fragment and not (call_id and self.ledger.was_called(call_id)):
            yield Draft("system", f"parser: tool result for {name or 'an unnamed tool'} with no tool call before it",
                        where, tool_name=name, tool_use_id=call_id, **self.base)

    def finish(self) -> Iterator[Draft]:
        """A ``parser: no result recorded`` row for every call still open (none where results are never recorded).

        Then the ledger's ``parser: tool calls over the limit`` row, if it passed MAX_CALL_IDS.
        """
        yield from self.ledger.orphans()
        yield from self.ledger.over_limit_rows()
