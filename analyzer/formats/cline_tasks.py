"""The Cline task folder and its forks (Roo Code, PearAI's agent): shared reading rules and the task walk.

A task folder ``tasks/<taskId>/`` holds ``api_conversation_history.json``
(what the model saw: Anthropic messages plus ``ts``), ``ui_messages.json``
(what the user saw: ClineMessage events) and ``task_metadata.json``. In the
XML era a tool call is an XML tag in the assistant's text
(``<execute_command><command>npm test</command></execute_command>``) and its
result is the next user message, whose first text block is
``[<tool> for '<arg>'] Result:`` followed by the output; denials and approvals
with a note are fixed texts in that result. Many user-role messages are not
typed by the user (tool results, environment details, resumption and error
notices): ``classify_user_block`` keeps them out of ``user`` rows.

``read_task_file`` walks one task file into rows for any fork, given its
``TaskFlavour`` (tool names, and how a task's session and project are found).

From 3.35 calls are native ``tool_use`` blocks answered by ``tool_result`` blocks
with the same id (their content the same ``[tool …] Result:`` header and output);
a typed note after an answer is a ``The user provided the following feedback:``
block. ``TaskFlavour`` options say whether ``modelInfo`` gives model rows, what
time an untimed message takes and what ui_messages.json gives beside the API history.

References: cline/cline@v3.34.0 src/core/task/tools/utils/ToolResultUtils.ts:26-45;
cline/cline@e1bdeef apps/vscode/src/core/task/tools/utils/ToolResultUtils.ts:17-111,
apps/vscode/src/shared/messages/content.ts:83-105; trypear/PearAI-Roo-Code@088f3f4 src/core/Cline.ts
(``askApproval``: an approval's note and the tool's output are two result blocks);
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:1271-1386, src/core/prompts/responses.ts:8-14,
src/core/assistant-message/parse-assistant-message.ts:6-30
(research/formats-vscode-family.md 5.4, 5.5, 6.8).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

from aitrail.analyzer.bundle import MemberUnreadable, Source
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import cline_ui
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.cline_ui import ui_tool_name  # noqa: F401 (kept importable from here)
from aitrail.analyzer.formats.text import bad_record, image_placeholder, is_image_block, json_document
from aitrail.analyzer.rows import Draft, ns_from_ms

RESULT_HEADER = re.compile(r"^\[(?P<tool>[a-z_]+)(?P<args>.*?)\] Result:[ \t]*(?:\n(?P<rest>.*))?$", re.DOTALL)
NOT_EXECUTED = re.compile(r"^Tool \[(?P<tool>[a-z_]+)\] was not executed because")
REJECTED_EARLIER = re.compile(r"^(Skipping tool|Tool) \[?(?P<tool>[a-z_]+).*?(due to user rejecting a previous tool)",
                              re.DOTALL)
PERMISSION_TEXTS = (
    ("The user denied this operation and provided the following feedback:", "denied with feedback"),
    ("The user approved this operation and provided the following context:", "approved with feedback"),
    ("The user denied this operation.", "denied"),
)
SYSTEM_PREFIXES = ("<environment_details>", "[TASK RESUMPTION]", "[ERROR]", "[new_task completed]")
FEEDBACK = "The user provided the following feedback:"  # then a <feedback> block (a typed note after an answer)
_TASK = re.compile(r"^\s*<task>\n?(?P<task>.*?)\n?</task>\s*$", re.DOTALL)
_THINKING = "thinking"


@dataclass
class Segment:
    """A piece of an assistant text block: prose, a <thinking> block or a tool call."""

    kind: str  # text | thinking | tool
    text: str
    tool_name: str = ""
    complete: bool = True


@lru_cache(maxsize=16)
def _opening_tags(tool_names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("<(" + "|".join(re.escape(name) for name in (_THINKING, *tool_names)) + ")>")


def split_assistant_text(text: str, tool_names: tuple[str, ...]) -> list[Segment]:
    """Split assistant text into prose, <thinking> blocks and XML tool calls, in order.

    A tag without its closing tag (a reply cut off mid-call) runs to the end of
    the text and is marked incomplete.
    """
    segments: list[Segment] = []
    opening = _opening_tags(tool_names)
    position = 0
    while position < len(text):
        found = opening.search(text, position)
        if found is None:
            _add_text(segments, text[position:])
            break
        start, tag = found.start(), found.group(1)
        _add_text(segments, text[position:start])
        closing = f"</{tag}>"
        end = text.find(closing, found.end())
        complete = end >= 0
        stop = end + len(closing) if complete else len(text)
        if tag == _THINKING:
            inner = text[found.end(): end if complete else stop]
            segments.append(Segment("thinking", inner.strip("\n"), complete=complete))
        else:
            segments.append(Segment("tool", text[start:stop], tool_name=tag, complete=complete))
        position = stop
    return segments


def _add_text(segments: list[Segment], text: str) -> None:
    if text.strip():
        segments.append(Segment("text", text.strip("\n")))


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


def number(value) -> str:
    """A JSON number as the task row writes it (``0.0131``, ``1820``), or the value as given."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return str(value)


def task_row_text(item: dict) -> str:
    """``task: <task> | tokensIn=<n> tokensOut=<n> totalCost=<n> number=<n>`` (+ creator mode)."""
    text = (f"task: {item.get('task', '')} | tokensIn={number(item.get('tokensIn'))} "
            f"tokensOut={number(item.get('tokensOut'))} totalCost={number(item.get('totalCost'))} "
            f"number={number(item.get('number'))}")
    creator = item.get("creatorModeConfig")
    if isinstance(creator, dict) and creator.get("creatorMode", True):
        text += (f" | creator mode: newProjectType={creator.get('newProjectType', '')} "
                 f"newProjectPath={creator.get('newProjectPath', '')}")
    return text


# -- the task walk: api_conversation_history.json and ui_messages.json -------------------------------

@dataclass(frozen=True)
class TaskFlavour:
    """What differs between Cline forks for the task walk.

    Attributes:
        tool_names: the fork's XML tool tags (``execute_command``, ...), in its parser's list.
        columns: ``session_id`` and ``project_path`` for every row of the task file in ``ctx``
            (usually the task folder's name and the workspace from the task history).
        ui_beside_api: what ui_messages.json gives when the API history is beside it:
            ``none`` (only the events still marked partial that no API row holds: a cut
            stream), ``unique`` (the events the API history does not already hold: its rows,
            less tool events and texts equal to an API row; partial events kept) or ``transcript`` (the
            ui file is the transcript; the API history then gives its permission rows alone,
            joined to the ui file's tool asks by time).
        models: whether API messages' ``modelInfo`` give ``model:`` rows and the model column.
        untimed: the time columns of a message without ``ts`` (e.g. the task id's creation
            time); None: no time.
        carry_time: a message without ``ts`` takes the time of the last message that had one
            (``index`` time; a format that stamps only some messages).
    """

    tool_names: tuple[str, ...]
    columns: Callable[[ParseContext], dict]
    ui_beside_api: str = "none"
    models: bool = False
    untimed: Callable[[ParseContext], dict] | None = None
    carry_time: bool = False
    # a fork that reads some API messages its own way (Roo Code: native tool blocks, condensed context);
    # None keeps the walk's reading of every message
    reader: Callable[[ParseContext, list], MessageReader] | None = None


class MessageReader(Protocol):
    """A fork's reading of the API messages of one file (TaskFlavour.reader builds one per file)."""

    def rows(self, message: dict, index: int, moment: dict, default: Iterator[Draft]) -> Iterator[Draft]:
        """The rows of one well-formed message; ``default`` (lazy) is the walk's own reading of it."""

    def finish(self) -> Iterator[Draft]:
        """Rows owed when the file ends (calls the fork's reading left open)."""


def task_id(ctx: ParseContext) -> str:
    """The task id: the name of the ``tasks/<taskId>/`` folder the file is in."""
    return ctx.source.directory.rsplit("/", 1)[-1]


def read_task_file(ctx: ParseContext, flavour: TaskFlavour) -> Iterator[Draft]:
    """A task folder's file: the API history and ui_messages.json as the flavour says.

    task_metadata.json (files in context) adds no rows here; a fork that reads it does so itself.
    """
    name = ctx.source.name
    if name == "api_conversation_history.json":
        if flavour.ui_beside_api == "transcript" and cline_ui.ask_times(ctx) is not None:
            yield from api_permission_rows(ctx, flavour)
        else:
            yield from read_api_history(ctx, flavour)
    elif name in cline_ui.UI_FILES:
        api = ctx.sibling("api_conversation_history.json")
        if api is None or flavour.ui_beside_api == "transcript":
            yield from read_ui_messages(ctx, flavour)
        elif flavour.ui_beside_api == "unique":
            yield from read_ui_messages(ctx, flavour, beside=_api_row_keys(ctx, api, flavour))
        elif cline_ui.holds_partial(ctx.data):  # a cut stream's reply is in no API message
            yield from read_ui_messages(ctx, flavour, beside=_api_row_keys(ctx, api, flavour), partial_only=True)


def read_api_history(ctx: ParseContext, flavour: TaskFlavour) -> Iterator[Draft]:
    """api_conversation_history.json: prose, thinking, tool calls and their results, in order.

    Native ``tool_use`` / ``tool_result`` blocks join by their id. An XML tool call's id is
    its assistant message's index (``3``, then ``3.2`` for the second call of the same
    message); a ``[tool for 'arg'] Result:`` block in the next user message answers the
    first open call of that tool. Calls the next user message leaves open get the
    ``no result recorded`` row.
    """
    messages, problem = json_document(ctx.data, "api_conversation_history.json", list)
    if problem is not None:
        yield problem
        return
    reader = flavour.reader(ctx, messages) if flavour.reader is not None else None
    yield from api_rows(messages, flavour, flavour.columns(ctx), flavour.untimed(ctx) if flavour.untimed else {},
                        reader=reader)


def api_rows(messages: list, flavour: TaskFlavour, base: dict, untimed: dict,
             pointer: str = "json:", reader: MessageReader | None = None) -> Iterator[Draft]:
    """The rows of a list of API messages (a history file's, or one held inside another document).

    Args:
        messages: the decoded messages.
        flavour: the fork's tool names and options.
        base: the columns every row carries (session, project).
        untimed: the time columns of a message without ``ts``.
        pointer: the locator prefix of the list (``json:/messages`` for a list inside a document).
        reader: the fork's own reading of the messages (TaskFlavour.reader), or None.
    """
    walk = _ApiWalk(flavour, base, untimed, reader)
    for index, message in enumerate(messages):
        yield from walk.message(index, message, f"{pointer}/{index}")
    if reader is not None:
        yield from reader.finish()
    yield from walk.calls.orphans()


class _ApiWalk:
    """The state of one API history walk: open calls, the model in use, the task's columns."""

    def __init__(self, flavour: TaskFlavour, base: dict, untimed: dict, reader: MessageReader | None = None):
        self.flavour, self.base, self.untimed, self.reader = flavour, base, untimed, reader
        self.calls = CallLedger()  # native ids, or (XML) the message index joined by tool name
        self.model = ""

    def message(self, index: int, message, locator: str) -> Iterator[Draft]:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            yield bad_record(locator, "not a user or assistant message", json.dumps(message)[:2000])
            return
        stamp = ns_from_ms(message.get("ts"))
        when = {"timestamp_ns": stamp, "timestamp_source": "record"} if stamp is not None else \
            {"timestamp_ns": None, "timestamp_source": "none", **self.untimed}
        if stamp is not None and self.flavour.carry_time:
            self.untimed = {"timestamp_ns": stamp, "timestamp_source": "index"}  # for the untimed messages after it
        moment = {**when, **self.base}
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            yield bad_record(f"{locator}/content", "content is neither text nor a list of blocks")
            return
        rows = self._role_rows(message, blocks, index, locator, moment)
        yield from self.reader.rows(message, index, moment, rows) if self.reader is not None else rows

    def _role_rows(self, message: dict, blocks: list, index: int, locator: str, moment: dict) -> Iterator[Draft]:
        if message["role"] == "assistant":
            yield from self.calls.orphans()
            if self.flavour.models:
                yield from self._model(message, locator, moment)
                moment = {**moment, "model": self.model}
            yield from _assistant(blocks, index, locator, moment, self.calls, self.flavour.tool_names)
        else:
            yield from _user(blocks, locator, moment, self.calls)
            yield from self.calls.orphans()  # the next user message answers the calls before it, or none does

    def _model(self, message: dict, locator: str, moment: dict) -> Iterator[Draft]:
        info = message.get("modelInfo")
        model = (info.get("modelId") or info.get("id")) if isinstance(info, dict) else None  # 3.x, SDK
        if isinstance(model, str) and model and model != self.model:
            label = f"model: {model}" if not self.model else f"model: {self.model} -> {model}"
            yield Draft("system", label, f"{locator}/modelInfo", **{**moment, "model": model})
            self.model = model


def _assistant(blocks: list, index: int, locator: str, moment: dict, calls: CallLedger,
               tool_names: tuple[str, ...]) -> Iterator[Draft]:
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_use":
            call = _native_call(block, where, moment)
            calls.called(call)
            yield call
            continue
        if kind in ("thinking", "redacted_thinking"):
            text = str(block.get("thinking", "")) if kind == "thinking" else "[redacted thinking]"
            yield Draft("thinking", text, where, **moment)
            continue
        for segment in split_assistant_text(block_text(block), tool_names):
            if segment.kind == "text":
                yield Draft("assistant", segment.text, where, **moment)
            elif segment.kind == "thinking":
                yield Draft("thinking", segment.text, where, **moment)
            else:
                call_id = str(index) if not calls.open else f"{index}.{len(calls.open) + 1}"
                call = Draft("tool_use", segment.text, where, tool_name=segment.tool_name, tool_use_id=call_id,
                             **moment)
                calls.called(call)
                yield call


def _native_call(block: dict, where: str, moment: dict) -> Draft:
    call_id = block.get("id") if isinstance(block.get("id"), str) else ""
    name = block.get("name") if isinstance(block.get("name"), str) else ""
    return Draft("tool_use", json.dumps(block.get("input"), ensure_ascii=False), where, tool_name=name,
                 tool_use_id=call_id, **moment)


@dataclass
class _Result:
    """A tool result of one user message: its call, tool, texts and where it was found."""

    tool: str
    call: Draft | None
    call_id: str
    where: str
    texts: list[str]


def _user(blocks: list, locator: str, moment: dict, calls: CallLedger) -> Iterator[Draft]:
    """A user message's rows, written once the message is read (a later note changes a decision)."""
    rows: list[Draft] = []
    pending: _Result | None = None  # an XML-era result being assembled from consecutive blocks
    last: list = []  # [result, index of its decision row or None] of the last finished result
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if pending is not None:
                last = _finish_result(pending, rows, moment)
                pending = None
            last = _finish_result(_native_result(block, where, calls, last), rows, moment)
            continue
        if isinstance(block, dict) and block.get("type") == "file":  # SDK: a mentioned file, not typed text
            if pending is not None:
                last, pending = _finish_result(pending, rows, moment), None
            rows.append(Draft("system", attachment_text(block), where, **moment))
            continue
        text = block_text(block)
        kind = classify_user_block(text) if isinstance(block, (str, dict)) and text else None
        if kind is None:
            continue
        if pending is not None and kind.kind == "user":
            pending.texts.append(kind.text)
            continue
        if pending is not None:
            last = _finish_result(pending, rows, moment)
            pending = None
        if kind.kind == "result":
            pending = _xml_result(kind, where, calls, last)
        elif kind.kind in ("not_executed", "rejected_earlier"):
            call = calls.take_named(kind.tool_name)
            rows.append(Draft("tool_result", kind.text, where, tool_name=kind.tool_name,
                              tool_use_id=call.tool_use_id if call else "", **moment))
        elif kind.kind == "feedback":
            _note_feedback(last, rows, moment)
            rows.append(Draft("user", kind.text, where, **moment))  # typed by the user after an answer
        elif kind.kind == "system":
            rows.append(Draft("system", kind.text, where, **moment))
        else:  # task or user: typed by the user
            rows.append(Draft("user", kind.text, where, **moment))
    if pending is not None:
        _finish_result(pending, rows, moment)
    yield from rows


def _approval_follow_up(last: list, tool: str) -> Draft | None:
    """The call whose approval-with-a-note result came just before: a second result block is its output."""
    if last and last[0].tool == tool and last[0].call is not None and last[1] is not None and \
            last[0].texts and permission_decision(last[0].texts[0]) == "approved with feedback":
        return last[0].call
    return None


def _xml_result(kind: UserBlock, where: str, calls: CallLedger, last: list) -> _Result:
    # the output block after an approval with a note has the same header: it answers that call, not an open one
    call = _approval_follow_up(last, kind.tool_name) or calls.take_named(kind.tool_name)
    return _Result(kind.tool_name, call, call.tool_use_id if call else "", where, [kind.text] if kind.text else [])


def _native_result(block: dict, where: str, calls: CallLedger, last: list) -> _Result:
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


def _finish_result(result: _Result, rows: list[Draft], moment: dict) -> list:
    output = "\n".join(result.texts)
    rows.append(Draft("tool_result", output, result.where, tool_name=result.tool, tool_use_id=result.call_id,
                      **moment))
    if result.call is None:
        rows.append(Draft("system", f"parser: tool result for {result.tool or 'a tool'} with no tool call before it",
                          result.where, **moment))
    decision = permission_decision(result.texts[0]) if result.texts else None
    if not decision:
        return [result, None]
    rows.append(_decision_row(decision, result, moment))
    return [result, len(rows) - 1]


def _decision_row(decision: str, result: _Result, moment: dict) -> Draft:
    return Draft("system", f"permission decision: {decision}", result.where, tool_name=result.tool,
                 tool_use_id=result.call_id, **moment)


def _note_feedback(last: list, rows: list[Draft], moment: dict) -> None:
    """A typed note after a result: a plain denial becomes ``denied with feedback``, an approval gets its row."""
    if not last or last[0].call is None:
        return
    result, decision_at = last
    if decision_at is None:
        rows.append(_decision_row("approved with feedback", result, moment))
        last[1] = len(rows) - 1
    elif rows[decision_at].text == "permission decision: denied":
        rows[decision_at] = _decision_row("denied with feedback", result, moment)


def read_ui_messages(ctx: ParseContext, flavour: TaskFlavour, beside: frozenset | None = None,
                     partial_only: bool = False) -> Iterator[Draft]:
    """ui_messages.json in the flavour's columns (formats/cline_ui.py): the transcript, or what the API lacks."""
    yield from cline_ui.read_ui_messages(ctx, flavour.columns(ctx), beside, partial_only)


def _api_row_keys(ctx: ParseContext, api: Source, flavour: TaskFlavour) -> frozenset:
    """The row keys of the task's API history (empty when it cannot be read)."""
    keys_only = replace(flavour, columns=lambda _ctx: {}, untimed=None)  # a row key has no columns: no joins
    try:
        rows = read_api_history(ParseContext(ctx.bundle, api, {}), keys_only)
        return frozenset(cline_ui.row_key(row) for row in rows)
    except MemberUnreadable:
        return frozenset()


# -- the API history beside a ui_messages.json transcript -------------------------------------------


def api_permission_rows(ctx: ParseContext, flavour: TaskFlavour) -> Iterator[Draft]:
    """The API history's permission rows alone (its ``parser:`` rows for bad records too).

    The transcript is ui_messages.json's, so each decision takes the id the ui rows give
    its call: the ts of the last tool ask at or before the API message.
    """
    asks = cline_ui.ask_times(ctx) or []
    for row in read_api_history(ctx, flavour):
        if row.text.startswith("parser: unparseable"):
            yield row
        elif row.text.startswith("permission decision: "):
            before = bisect.bisect_right(asks, (row.timestamp_ns or 0) // 1_000_000)
            yield replace(row, tool_use_id=str(asks[before - 1]) if before else "")
