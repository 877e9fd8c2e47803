"""User-role messages of a Cline API history (and its forks'): tool results, permission decisions, typed notes.

In the XML era a tool's result is the next user message, whose first text block
is ``[<tool> for '<arg>'] Result:`` followed by the output; denials and approvals
with a note are fixed texts in that result. From 3.35 a result is a native
``tool_result`` block with its call's id (its content the same header and output).
A typed note after an answer is a ``The user provided the following feedback:``
block. Many user-role blocks are not typed by the user (tool results, environment
details, resumption and error notices): ``classify_user_block`` keeps them out of
``user`` rows. ``user_rows`` walks one user message into rows as it reads it,
holding no row back (see its docstring for the one decision a later block changes).

The result patterns are linear: the tool name is matched possessively, so a text
that opens like a header but never closes (``[aaaa…``) is one scan, where the
name giving back a character at a time made every retry scan the rest again
(6,000 characters took 0.3 s, a megabyte hours).

References: cline/cline@v3.34.0 src/core/task/tools/utils/ToolResultUtils.ts:26-45;
cline/cline@e1bdeef apps/vscode/src/core/task/tools/utils/ToolResultUtils.ts:17-111,
apps/vscode/src/shared/messages/content.ts:83-105; trypear/PearAI-Roo-Code@088f3f4 src/core/Cline.ts
(``askApproval``: an approval's note and the tool's output are two result blocks);
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:1271-1386, src/core/prompts/responses.ts:8-14
(research/formats-vscode-family.md 5.4, 5.5, 6.8).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.text import image_placeholder, is_image_block
from aitrail.analyzer.view.rows import Draft

RESULT_HEADER = re.compile(r"^\[(?P<tool>[a-z_]++)(?P<args>.*?)\] Result:[ \t]*(?:\n(?P<rest>.*))?$", re.DOTALL)
NOT_EXECUTED = re.compile(r"^Tool \[(?P<tool>[a-z_]+)\] was not executed because")
REJECTED_EARLIER = re.compile(r"^(Skipping tool|Tool) \[?(?P<tool>[a-z_]++).*?(due to user rejecting a previous tool)",
                              re.DOTALL)
PERMISSION_TEXTS = (
    ("The user denied this operation and provided the following feedback:", "denied with feedback"),
    ("The user approved this operation and provided the following context:", "approved with feedback"),
    ("The user denied this operation.", "denied"),
)
SYSTEM_PREFIXES = ("<environment_details>", "[TASK RESUMPTION]", "[ERROR]", "[new_task completed]")
FEEDBACK = "The user provided the following feedback:"  # then a <feedback> block (a typed note after an answer)
_TASK = re.compile(r"^\s*<task>\n?(?P<task>.*?)\n?</task>\s*$", re.DOTALL)


@dataclass
class UserBlock:
    """How one text block of a user-role message is to be read."""

    kind: str  # result | not_executed | rejected_earlier | feedback | system | task | user
    text: str
    tool_name: str = ""


def classify_user_block(text: str) -> UserBlock:
    """What one user-role text block is: a tool result, a denial notice, a system notice, the task or typed text."""
    header = RESULT_HEADER.match(text)
    if header:
        return UserBlock("result", (header.group("rest") or "").strip("\n"), header.group("tool"))
    for pattern, kind in ((NOT_EXECUTED, "not_executed"), (REJECTED_EARLIER, "rejected_earlier")):
        match = pattern.match(text)
        if match:
            return UserBlock(kind, text, match.group("tool"))
    feedback = feedback_note(text)
    if feedback is not None:
        return UserBlock("feedback", feedback)
    if text.lstrip().startswith(SYSTEM_PREFIXES):
        return UserBlock("system", text)
    task = _TASK.match(text)
    if task:
        return UserBlock("task", task.group("task"))
    return UserBlock("user", text)


def feedback_note(text: str) -> str | None:
    r"""The note of a ``The user provided the following feedback:\n<feedback>…</feedback>`` block, else None."""
    stripped = text.strip()
    if not stripped.startswith(FEEDBACK):
        return None
    body = stripped[len(FEEDBACK):].strip()
    if body.startswith("<feedback>") and body.endswith("</feedback>"):
        body = body[len("<feedback>"):-len("</feedback>")]
    return body.strip("\n")


def permission_decision(text: str) -> str | None:
    """``denied``, ``denied with feedback`` or ``approved with feedback`` from a result's text."""
    stripped = text.lstrip()
    for prefix, decision in PERMISSION_TEXTS:
        if stripped.startswith(prefix):
            return decision
    return None


def block_text(block) -> str:
    """One API content block as text (images as ``[image <type>, N bytes]``, unknown blocks as JSON)."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        if block.get("type") == "text":
            return str(block.get("text", ""))
        if is_image_block(block):
            return image_placeholder(block)
    return json.dumps(block, sort_keys=True)


def attachment_text(block: dict) -> str:
    """``attachment: <path> (N chars)`` and the file's text: an SDK ``file`` block the user's message carries.

    The SDK attaches each @-mentioned (or explicitly added) file to the prompt as its own
    block; its content is the file's, not the user's typing.
    """
    path, content = block.get("path"), block.get("content")
    content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    name = path if isinstance(path, str) and path else "(no path)"
    return f"attachment: {name} ({len(content)} chars)\n{content}"


# -- one user message: its blocks in order, each row written as it is read ---------------------------------


@dataclass
class _Result:
    """A tool result of one user message: its call, tool, texts and where it was found."""

    tool: str
    call: Draft | None
    call_id: str
    where: str
    texts: list[str]

    def decision(self) -> str | None:
        """The permission decision its first text records."""
        return permission_decision(self.texts[0]) if self.texts else None


@dataclass
class _Last:
    """The last finished result of the message, and whether its decision row is written."""

    result: _Result
    decided: bool


def _block_kind(block) -> str | None:
    """What a block is for the walk: ``tool_result``, ``file``, a UserBlock kind, or None (nothing to read)."""
    if isinstance(block, dict) and block.get("type") in ("tool_result", "file"):
        return block["type"]
    if not isinstance(block, (str, dict)):
        return None
    text = block_text(block)
    return classify_user_block(text).kind if text else None


def feedback_follows(blocks: list, start: int) -> bool:
    """Whether a feedback note comes from ``start`` on, before the next result of the message.

    That note is the last result's: it turns a plain denial into ``denied with feedback``.
    Each block is looked at here at most once for the message (a scan stops at the next
    result, and the next scan starts after that result), so the message is read in linear time.
    """
    for index in range(start, len(blocks)):  # by index: a slice would copy the rest of the message each time
        kind = _block_kind(blocks[index])
        if kind in ("tool_result", "result"):
            return False
        if kind == "feedback":
            return True
    return False


def user_rows(blocks: list, locator: str, moment: dict, calls: BoundedLedger) -> Iterator[Draft]:
    """A user message's rows, each written as its block is read.

    A typed note after a result changes that result's decision: a plain denial becomes
    ``denied with feedback`` (``feedback_follows`` looks ahead, so the decision row is
    written once, right), and a result without a decision gets ``approved with feedback``
    where the note is. Nothing is held back: a message of a million blocks held a million rows.
    """
    pending: _Result | None = None  # an XML-era result being assembled from consecutive blocks
    last: _Last | None = None
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if pending is not None:
                last = yield from _finish_result(pending, moment, blocks, position)
                pending = None
            result = _native_result(block, where, calls, last)
            last = yield from _finish_result(result, moment, blocks, position + 1)
            continue
        if isinstance(block, dict) and block.get("type") == "file":  # SDK: a mentioned file, not typed text
            if pending is not None:
                last = yield from _finish_result(pending, moment, blocks, position)
                pending = None
            yield Draft("system", attachment_text(block), where, **moment)
            continue
        text = block_text(block)
        kind = classify_user_block(text) if isinstance(block, (str, dict)) and text else None
        if kind is None:
            continue
        if pending is not None and kind.kind == "user":
            pending.texts.append(kind.text)
            continue
        if pending is not None:
            last = yield from _finish_result(pending, moment, blocks, position)
            pending = None
        if kind.kind == "result":
            pending = _xml_result(kind, where, calls, last)
        elif kind.kind in ("not_executed", "rejected_earlier"):
            call = calls.take_named(kind.tool_name)
            yield Draft("tool_result", kind.text, where, tool_name=kind.tool_name,
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind.kind == "feedback":
            yield from _note_feedback(last, moment)
            yield Draft("user", kind.text, where, **moment)  # typed by the user after an answer
        elif kind.kind == "system":
            yield Draft("system", kind.text, where, **moment)
        else:  # task or user: typed by the user
            yield Draft("user", kind.text, where, **moment)
    if pending is not None:
        yield from _finish_result(pending, moment, blocks, len(blocks))


def _approval_follow_up(last: _Last | None, tool: str) -> Draft | None:
    """The call whose approval-with-a-note result came just before: a second result block is its output."""
    if last is not None and last.result.tool == tool and last.result.call is not None and \
            last.result.decision() == "approved with feedback":
        return last.result.call
    return None


def _xml_result(kind: UserBlock, where: str, calls: BoundedLedger, last: _Last | None) -> _Result:
    # the output block after an approval with a note has the same header: it answers that call, not an open one
    call = _approval_follow_up(last, kind.tool_name) or calls.take_named(kind.tool_name)
    return _Result(kind.tool_name, call, call.tool_use_id if call else "", where, [kind.text] if kind.text else [])


def _native_result(block: dict, where: str, calls: BoundedLedger, last: _Last | None) -> _Result:
    call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else ""
    content = block.get("content")
    parts = content if isinstance(content, list) else [content if content is not None else ""]
    text = "\n".join(block_text(part) for part in parts)
    header = RESULT_HEADER.match(text)
    name = header.group("tool") if header else ""
    output = (header.group("rest") or "").strip("\n") if header else text
    call = calls.take(call_id) if call_id else None
    if call is None and call_id and calls.was_called(call_id):  # a second result block for an answered call
        call = _approval_follow_up(last, calls.called_name(call_id))
    return _Result(call.tool_name if call else (calls.called_name(call_id) or name), call, call_id, where,
                   [output] if output else [])


def _finish_result(result: _Result, moment: dict, blocks: list, resume: int) -> Generator[Draft, None, _Last]:
    """The result's rows; returns it as the message's last result. ``resume``: the first block not yet read."""
    yield Draft("tool_result", "\n".join(result.texts), result.where, tool_name=result.tool,
                tool_use_id=result.call_id, **moment)
    if result.call is None:
        yield Draft("system", f"parser: tool result for {result.tool or 'a tool'} with no tool call before it",
                    result.where, **moment)
    decision = result.decision()
    if decision == "denied" and result.call is not None and feedback_follows(blocks, resume):
        decision = "denied with feedback"  # the note after it is the user's reason
    if decision:
        yield _decision_row(decision, result, moment)
    return _Last(result, decided=decision is not None)


def _decision_row(decision: str, result: _Result, moment: dict) -> Draft:
    return Draft("system", f"permission decision: {decision}", result.where, tool_name=result.tool,
                 tool_use_id=result.call_id, **moment)


def _note_feedback(last: _Last | None, moment: dict) -> Iterator[Draft]:
    """A typed note after a result without a decision: ``approved with feedback`` (a denial was already turned)."""
    if last is None or last.result.call is None or last.decided:
        return
    yield _decision_row("approved with feedback", last.result, moment)
    last.decided = True
