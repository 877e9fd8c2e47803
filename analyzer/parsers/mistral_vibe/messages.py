"""Mistral Vibe session messages: ``messages.jsonl`` (2.x) and the ``messages`` of a legacy session file.

Each line is an ``LLMMessage`` dumped with ``exclude_none``: ``role`` (``user``,
``assistant``, ``tool``), ``content``, ``reasoning_content``,
``tool_calls [{id, index, type: "function", function: {name, arguments}}]``,
``name`` and ``tool_call_id`` (tool messages), ``message_id`` (UUID, not on
tool messages), ``injected`` (written by Vibe, not typed), ``images``. No
message carries a time, a session id or a project: those come from the
session folder's ``meta.json`` (``session.py``).

Rows per message: ``user`` (typed) or, when ``injected``, ``compaction: …``
(the context a compaction starts the next session with) or ``injected
context: …``; in a sub-agent session the first prompt is ``subagent prompt:
…``; ``assistant``: ``thinking`` (``reasoning_content``), the text, one
``tool_use`` per call; ``tool``: ``tool_result`` joined by
``tool_calls[].id`` = ``tool_call_id``, followed by ``permission decision:
denied`` when the user refused it, ``permission decision: denied by a rule``
when a deny list or a ``never`` permission did, ``interrupted: …`` when the
user stopped it. A message the parent session already holds (same
``message_id``, copied there by a rewind or a fork) is one ``copied from
session <id>: …`` row instead, so a rewound conversation is not counted twice.

    {"role":"assistant","content":"","tool_calls":[{"id":"cX91","index":0,"type":"function",
     "function":{"name":"read","arguments":"{'file_path': '/home/sam/lib/utils/retry.py'}"}}],"message_id":"1c2d…"}

References: mistralai/mistral-vibe@ac8f1a09fd (PyPI mistral-vibe 2.18.4) vibe/core/types.py ``LLMMessage``,
``ToolCall``, ``ImageAttachment``; vibe/core/session/session_logger.py ``save_interaction``,
``persist_messages``; vibe/core/llm/format.py ``create_tool_response_message``; vibe/core/utils/tags.py
(``<user_cancellation>``, ``<tool_error>``); vibe/core/agent_loop_hooks.py ``_handle_tool_skip``;
vibe/cli/textual_ui/app.py ``on_approval_app_approval_rejected``; vibe/core/tools/builtins/bash.py
(``Command denied: …``); vibe/core/compaction.py ``render_compaction_context``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .session import Copies, SessionFacts, as_text, compact, facts_of, parent_copies

# user messages Vibe writes itself: the context a compaction hands to the next session
COMPACTION_OPENING = "You are continuing a trajectory after a context compaction."
REFUSED = "User cancelled the operation."  # the approval dialog's "no" (CancellationReason.OPERATION_CANCELLED)
_TAGGED = re.compile(r"<(user_cancellation|tool_error)>(.*?)</\1>", re.DOTALL)
_RULE_REFUSALS = ("Command denied: ", "is permanently disabled")


class Conversation:
    """One session's messages: its columns, open calls, the parent's copies, whose prompts are a sub-agent's."""

    def __init__(self, facts: SessionFacts, copies: Copies, subagent: bool):
        self.facts, self.copies, self.subagent = facts, copies, subagent
        self.calls = BoundedLedger()

    def rows(self, message: dict, locator: str) -> Iterator[Draft]:
        """The rows of one message, by ``role``; a message the parent holds is one ``copied`` row."""
        role = as_text(message.get("role"))
        if self.copies.holds(message):
            yield Draft("system", f"copied from session {self.copies.parent} (rewind or fork): {role}: "
                                  f"{_message_text(message)}", locator, **self.facts.columns)
            return
        handler = _ROLES.get(role)
        if handler is None:
            yield Draft("system", f"message ({role or 'no role'}): {excerpt(compact(message))}", locator,
                        **self.facts.columns)
            return
        yield from handler(self, message, locator)

    def finish(self) -> Iterator[Draft]:
        """The calls never answered, and the call budget's row."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()


def _message_text(message: dict) -> str:
    parts = [as_text(message.get("content"))]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        parts.append(f"tool_calls={compact(calls)}")
    if message.get("tool_call_id") is not None:
        parts.insert(0, f"{as_text(message.get('name'))} ({as_text(message.get('tool_call_id'))})")
    return " ".join(part for part in parts if part)


def _content(message: dict) -> str:
    """The text, with a placeholder per image attachment (alias and MIME type; images are files, not inline)."""
    text = as_text(message.get("content"))
    images = message.get("images")
    for image in images if isinstance(images, list) else ():
        if isinstance(image, dict):
            text += f"\n[image {as_text(image.get('alias'))} {as_text(image.get('mime_type'))}]".rstrip()
    return text


def _user(conversation: Conversation, message: dict, locator: str) -> Iterator[Draft]:
    text, columns = _content(message), conversation.facts.columns
    if message.get("injected") is True:
        kind = "compaction" if text.startswith(COMPACTION_OPENING) else "injected context"
        yield Draft("system", f"{kind}: {text}", locator, **columns)
    elif conversation.subagent:  # the task the parent model gave the sub-agent
        yield Draft("system", f"subagent prompt: {text}", locator, **columns)
    else:
        yield Draft("user", text, locator, **columns)


def _assistant(conversation: Conversation, message: dict, locator: str) -> Iterator[Draft]:
    columns = conversation.facts.columns
    reasoning = as_text(message.get("reasoning_content"))
    if reasoning.strip():
        yield Draft("thinking", reasoning, f"{locator}/reasoning_content", **columns)
    text = _content(message)
    calls = message.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    if text.strip() or not calls:
        yield Draft("assistant", text, locator, **columns)
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        use = Draft("tool_use", as_text(function.get("arguments")), f"{locator}/tool_calls/{index}",
                    tool_name=as_text(function.get("name")),
                    tool_use_id=as_text(call.get("id")) if isinstance(call, dict) else "", **columns)
        yield use
        conversation.calls.called(use)


def _tool(conversation: Conversation, message: dict, locator: str) -> Iterator[Draft]:
    columns = conversation.facts.columns
    call_id, text = as_text(message.get("tool_call_id")), as_text(message.get("content"))
    call = conversation.calls.take(call_id)
    name = as_text(message.get("name")) or (call.tool_name if call else "")
    joined = {"tool_name": name, "tool_use_id": call_id}
    yield Draft("tool_result", text, locator, **joined, **columns)
    if call is None and not conversation.calls.was_called(call_id):
        yield Draft("system", f"parser: tool result for {name or 'a tool'} with no tool call before it", locator,
                    **joined, **columns)
    decision = _decision(text)
    if decision:
        yield Draft("system", decision, locator, **joined, **columns)


def _decision(text: str) -> str:
    """What a tool message's text says about the call's approval ('' when nothing)."""
    tagged = _TAGGED.search(text)
    if tagged and tagged.group(1) == "user_cancellation":
        inner = tagged.group(2).strip()
        return "permission decision: denied" if inner == REFUSED else f"interrupted: {inner}"
    if not tagged and any(marker in text for marker in _RULE_REFUSALS):
        return "permission decision: denied by a rule"
    return ""


def _system(conversation: Conversation, message: dict, locator: str) -> Iterator[Draft]:
    yield Draft("system", f"system prompt: {_content(message)}", locator, **conversation.facts.columns)


_ROLES = {"user": _user, "assistant": _assistant, "tool": _tool, "system": _system}


def parse_messages(ctx: ParseContext) -> Iterator[Draft]:
    """<session folder>/messages.jsonl: rows per message, timed and named by the folder's meta.json."""
    facts = facts_of(ctx)
    subagent = ctx.source.store.endswith(".subagent_sessions")
    conversation = Conversation(facts, parent_copies(ctx, facts.parent), subagent)
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            yield from conversation.rows(line.value, line.locator)
        else:
            yield line
    yield from conversation.finish()
