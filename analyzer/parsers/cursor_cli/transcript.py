"""Cursor CLI transcripts: agent-transcripts/<session>/<session>.jsonl, sub-agents, and the older .txt files.

Neither generation records a time, so every row takes the file's modification time
(``file-mtime``): the time of the last write, an upper bound for every turn in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, bad_record, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

from .content import Conversation, split_user_text
from .places import project_for, transcript_place

MESSAGE_ROLES = ("user", "assistant", "system", "tool")
# Whether a transcript generation records tool results ([obs], docs/agents/cursor-cli.md): the JSONL
# transcripts hold the calls only (outputs go to agent-tools/, which shares no key with them), so a call
# without a result there is the format, not damage; the .txt generation writes ``[Tool result]`` blocks.
JSONL_RECORDS_RESULTS = False
TEXT_RECORDS_RESULTS = True


def _base(ctx: ParseContext) -> tuple[dict, bool]:
    session, dashed, subagent = transcript_place(ctx.source.path)
    project = project_for(ctx, session, dashed=dashed)
    session_id = f"{session}/{subagent}" if subagent else session
    return {**file_mtime(ctx), "session_id": session_id, "project_path": project}, bool(subagent)


def parse_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """A JSONL transcript (session or sub-agent): one row per text, thinking, tool_use and tool_result block.

    ``<user_query>`` text is the user's; the rest of a user message is ``context:``; in a
    sub-agent's file the user is the delegating agent (``subagent prompt:``, tagged or not). A tool_use
    block without an id gets ``pos:<line>.<block>``; the format records no results
    (``JSONL_RECORDS_RESULTS``), so a call without one gets no ``parser:`` row. A line with a
    ``type`` and no message is a ``record <type>:`` row.
    """
    base, subagent = _base(ctx)
    conversation = Conversation(base, subagent=subagent, untagged_is_prompt=subagent,
                                results_recorded=JSONL_RECORDS_RESULTS)
    for item in read_jsonl(ctx):
        if isinstance(item, Line):
            yield from _line_rows(conversation, item)
        else:
            yield item
    yield from conversation.finish()


def _line_rows(conversation: Conversation, line: Line) -> Iterator[Draft]:
    value = line.value
    role, message = value.get("role"), value.get("message")
    if isinstance(role, str) and isinstance(message, dict):
        content = message.get("content", message.get("text"))
        rows = list(conversation.message(role, content, line.locator, str(line.number)))
        yield from rows or [Draft("system", f"empty {role} message", line.locator, **conversation.base)]
    elif isinstance(role, str) and "content" in value:  # the unwrapped {role, content} shape
        rows = list(conversation.message(role, value["content"], line.locator, str(line.number)))
        yield from rows or [Draft("system", f"empty {role} message", line.locator, **conversation.base)]
    elif isinstance(value.get("type"), str):
        yield Draft("system", f"record {value['type']}: {excerpt(setting_value(value))}", line.locator,
                    **conversation.base)
    else:
        yield bad_line(line.number, "neither a message (role and message) nor a typed record", line.raw)


# -- the older plain-text generation ------------------------------------------------------------------

ROLE_LINES = {"user:": "user", "assistant:": "assistant"}
# Text one block holds until its end (a role or bracket line): every line is held, each costing its
# characters plus LINE_COST (its list slot and string object). A block of the older generation is a
# turn or a tool's output, kilobytes to a few MB; 10 million lines after one ``user:`` held them all.
# Past it the block's further lines are counted, not held: its row keeps the text up to the limit.
BLOCK_BUDGET = 64 * 1024 * 1024
LINE_COST = 64
BLANK = " \t\r\f\v"  # str.strip() would also take control characters such as \x1c for blanks
CALL_MARK, RESULT_MARK, THINKING_MARK = "[Tool call]", "[Tool result]", "[Thinking]"


@dataclass
class _Block:
    kind: str  # user, assistant, call, result, orphan
    first: int  # line number of its first line
    head: str = ""  # the tool name of a call or result
    lines: list[str] = field(default_factory=list)
    held: int = 0  # BLOCK_BUDGET spent: characters of ``lines`` plus LINE_COST each
    over_at: int = 0  # the line where the budget was reached (0: never)
    counted: int = 0  # lines from ``over_at`` on, counted, not held

    def add(self, number: int, text: str) -> None:
        """Hold one more line of the block, or count it once the block is over BLOCK_BUDGET."""
        cost = len(text) + LINE_COST
        if self.over_at or self.held + cost > BLOCK_BUDGET:
            self.over_at = self.over_at or number
            self.counted += 1
            return
        self.held += cost
        self.lines.append(text)

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


class _TextTranscript:
    """The state of one .txt transcript being read: its role, the open block, its calls."""

    def __init__(self, base: dict) -> None:
        self.base = base
        self.role = ""
        self.block: _Block | None = None
        self.ledger = BoundedLedger(CallLedger(results_recorded=TEXT_RECORDS_RESULTS))  # MAX_CALL_IDS

    def line(self, number: int, text: str) -> Iterator[Draft]:
        stripped = text.strip(BLANK)
        if stripped in ROLE_LINES:
            yield from self.flush()
            self.role = ROLE_LINES[stripped]
            return
        for mark, kind in ((CALL_MARK, "call"), (RESULT_MARK, "result"), (THINKING_MARK, "thinking")):
            if stripped.startswith(mark):
                yield from self.flush()
                rest = stripped[len(mark):].strip()
                if kind == "thinking":  # one line: the turn's text follows on the next lines
                    yield Draft("thinking", rest, f"line:{number}", **self.base)
                    return
                self.block = _Block(kind, number, head=rest)
                return
        if self.block is not None and self.block.kind in ("call", "result") and not stripped:
            yield from self.flush()  # a tool block ends at its first blank line
            return
        if self.block is None:
            if not stripped:
                return
            self.block = _Block(self.role or "orphan", number)
        self.block.add(number, text)

    def flush(self) -> Iterator[Draft]:
        block, self.block = self.block, None
        if block is None:
            return
        where = f"line:{block.first}"
        if block.kind == "orphan":
            yield bad_record(where, "text before the first user: or assistant: line", block.text)
        elif block.kind == "user":
            prompts, rest = split_user_text(block.text)
            for prompt in prompts:
                yield Draft("user", prompt, where, **self.base)
            if rest:
                yield Draft("system", f"context: {rest}", where, **self.base)
            if not (prompts or rest):  # only characters str.strip() takes for blanks: still a line
                yield Draft("system", "empty user text", where, **self.base)
        elif block.kind == "assistant":
            text = block.text.strip(BLANK + "\n")
            yield Draft("assistant", text, where, **self.base) if text.strip() else \
                Draft("system", "empty assistant text", where, **self.base)
        elif block.kind == "call":
            call = Draft("tool_use", _dedent(block.lines), where, tool_name=block.head,
                         tool_use_id=f"pos:{block.first}", **self.base)
            self.ledger.called(call)
            yield call
        elif block.kind == "result":
            yield from self._result(block, where)
        if block.over_at:
            yield over_limit("block", f"{BLOCK_BUDGET} characters held, each line counting {LINE_COST} more",
                             f"{block.counted} lines from line {block.over_at} on were counted, not read: the "
                             f"block's row at {where} holds the text before them", f"line:{block.over_at}",
                             session_id=self.base["session_id"], project_path=self.base["project_path"])

    def _result(self, block: _Block, where: str) -> Iterator[Draft]:
        call = self.ledger.take_named(block.head)  # the format has no ids: the oldest open call of that tool
        call_id = call.tool_use_id if call else ""
        yield Draft("tool_result", block.text, where, tool_name=block.head, tool_use_id=call_id, **self.base)
        if call is None:
            yield Draft("system", f"parser: tool result for {block.head or 'an unnamed tool'} with no tool call "
                                  "before it", where, tool_name=block.head, **self.base)


def _dedent(lines: list[str]) -> str:
    return "\n".join(line.strip() for line in lines if line.strip())


def parse_text_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """An older ``agent-transcripts/<id>.txt``: ``user:`` / ``assistant:`` turns with bracketed blocks.

    A ``[Thinking]`` line is a thinking row, ``[Tool call] <name>`` and its indented arguments a
    tool_use row (id ``pos:<line>``, the format has none), ``[Tool result] <name>`` a
    tool_result joined to the oldest open call of that tool; user text as in the JSONL.
    Each row cites its block's first line.
    """
    base, _ = _base(ctx)
    reader = _TextTranscript(base)
    for item in ctx.lines():
        if isinstance(item, Draft):
            yield from reader.flush()
            yield item
            continue
        try:
            text = item.raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield from reader.flush()
            yield bad_line(item.number, f"not UTF-8 at byte {exc.start}", item.raw)
            continue
        yield from reader.line(item.number, text.rstrip("\r"))
    yield from reader.flush()
    yield from reader.ledger.orphans()
    yield from reader.ledger.over_limit_rows()
