"""One Cursor bubble (a message of a composer) to rows: text, thinking, tool call and result, model.

A bubble is ``{type: 1 user | 2 assistant, text, createdAt, thinking, modelInfo,
toolFormerData, ...}``, stored as its own ``bubbleId:<composer>:<bubble>`` row
(split generation) or inline in ``composerData.conversation`` (2024). The tool
call and its result sit in the same ``toolFormerData`` object, joined by its
``toolCallId``; a call whose result is not recorded is left open in the
composer's BoundedLedger and gets the ``parser: no result recorded`` row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

USER, ASSISTANT = 1, 2
LEGACY_TYPES = {"user": USER, "ai": ASSISTANT}  # the 2023-2024 chat panel's bubbles
ENDED = ("error", "cancelled", "rejected", "aborted")  # statuses that end a call without output


@dataclass
class Conversation:
    """What one composer's bubbles share: its columns, its time, the model in force and its open calls."""

    session_id: str
    project_path: str = ""
    git_branch: str = ""
    index_ns: int | None = None  # the composer's createdAt: the time of bubbles that have none
    model: str = ""
    ledger: BoundedLedger = field(default_factory=BoundedLedger)  # at most call_budget.MAX_CALL_IDS ids

    def columns(self) -> dict:
        """The session columns every row of the conversation carries."""
        return {"session_id": self.session_id, "project_path": self.project_path, "git_branch": self.git_branch}


def moment(value) -> int | None:
    """A Cursor time: ISO text with a zone (bubbles) or epoch milliseconds (composers, generations)."""
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        return ns_from_iso(value)
    return ns_from_ms(value)


def bubble_time(bubble: dict, conversation: Conversation) -> dict:
    """The bubble's own time (createdAt, else timingInfo's epoch-ms clientEndTime), else the composer's."""
    timing = bubble.get("timingInfo") if isinstance(bubble.get("timingInfo"), dict) else {}
    for value in (bubble.get("createdAt"), timing.get("clientEndTime"), timing.get("clientRpcSendTime")):
        found = moment(value)
        if found is not None:
            return {"timestamp_ns": found, "timestamp_source": "record"}
    return {"timestamp_ns": conversation.index_ns, "timestamp_source": "index"}


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def model_rows(conversation: Conversation, name, locator: str, when: dict) -> Iterator[Draft]:
    """``model: <id>`` for the first model named, ``model: <old> -> <new>`` where it changes."""
    if not isinstance(name, str) or not name or name == conversation.model:
        return
    text = f"model: {name}" if not conversation.model else f"model: {conversation.model} -> {name}"
    conversation.model = name
    yield Draft("system", text, locator, model=name, **when, **conversation.columns())


def bubble_rows(bubble: object, locator: str, conversation: Conversation) -> Iterator[Draft]:
    """The rows of one bubble, in the order they happened: model change, thinking, text, tool call, result."""
    if not isinstance(bubble, dict):
        kind = "null" if bubble is None else type(bubble).__name__
        yield Draft("system", f"parser: unparseable record (bubble value is a JSON {kind}, not an object)",
                    locator, timestamp_source="none", **conversation.columns())
        return
    kind = LEGACY_TYPES.get(bubble.get("type"), bubble.get("type"))
    when = bubble_time(bubble, conversation)
    info = bubble.get("modelInfo")
    if isinstance(info, dict):
        yield from model_rows(conversation, info.get("modelName"), locator, when)
    common = {**when, **conversation.columns(), "model": conversation.model}
    text = _text(bubble.get("text"))
    if kind == USER:
        yield Draft("user", text, locator, **common)
        return
    if kind != ASSISTANT:
        yield Draft("system", f"bubble type {_text(bubble.get('type'))}: {text}", locator, **common)
        return
    rows = [*_thinking_rows(bubble, locator, common)]
    if text:
        rows.append(Draft("assistant", text, locator, **common))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict):
        rows.extend(_tool_rows(tool, f"{locator}/toolFormerData", common, conversation.ledger))
    elif tool is not None:
        problem = bad_record(f"{locator}/toolFormerData", "toolFormerData is not an object", _text(tool))
        problem.session_id = conversation.session_id
        rows.append(problem)
    if not rows:  # an assistant bubble with nothing in it still stands for its record
        rows.append(Draft("assistant", "", locator, **common))
    yield from rows


def _thinking_rows(bubble: dict, locator: str, common: dict) -> Iterator[Draft]:
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and isinstance(thinking.get("text"), str) and thinking["text"]:
        yield Draft("thinking", thinking["text"], f"{locator}/thinking", **common)
        return
    blocks = bubble.get("allThinkingBlocks")
    for position, block in enumerate(blocks if isinstance(blocks, list) else ()):
        if isinstance(block, dict) and isinstance(block.get("text"), str) and block["text"]:
            yield Draft("thinking", block["text"], f"{locator}/allThinkingBlocks/{position}", **common)


def _tool_rows(tool: dict, locator: str, common: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    """tool_use (the model's arguments), tool_result (the result JSON), and a denial where the user rejected."""
    name = _text(tool.get("name")) or f"tool {_text(tool.get('tool'))}"
    call_id = _text(tool.get("toolCallId") or tool.get("modelCallId"))
    arguments = tool.get("rawArgs") if tool.get("rawArgs") not in (None, "") else tool.get("params")
    call = Draft("tool_use", _text(arguments), locator, tool_name=name, tool_use_id=call_id, **common)
    yield call
    ledger.called(call)
    result, status = tool.get("result"), _text(tool.get("status"))
    if result not in (None, "") or status in ENDED:
        ledger.take(call_id)
        text = _text(result) if result not in (None, "") else f"({status}: no output recorded)"
        yield Draft("tool_result", text, f"{locator}/result", tool_name=name, tool_use_id=call_id, **common)
    if tool.get("userDecision") == "rejected":
        yield Draft("system", "permission decision: denied", f"{locator}/userDecision", tool_name=name,
                    tool_use_id=call_id, **common)
