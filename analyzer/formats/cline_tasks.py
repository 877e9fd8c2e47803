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
notices): ``classify_user_block`` keeps them out of ``user`` rows (the reading
of user-role messages is formats/cline_results.py).

``read_task_file`` walks one task file into rows for any fork, given its
``TaskFlavour`` (tool names, and how a task's session and project are found).

From 3.35 calls are native ``tool_use`` blocks answered by ``tool_result`` blocks
with the same id (their content the same ``[tool …] Result:`` header and output);
a typed note after an answer is a ``The user provided the following feedback:``
block. ``TaskFlavour`` options say whether ``modelInfo`` gives model rows, what
time an untimed message takes and what ui_messages.json gives beside the API history.

What the walk holds over one file: the decoded document (within MAX_DOCUMENT_BYTES and
MAX_DECODE_COST), the open tool calls and call ids (a BoundedLedger: at most
MAX_CALL_IDS, formats/call_budget.py), the model in use and the untimed columns. Rows
are written as they are read: assistant text is split one segment at a time and a
user message's rows are not held back (formats/cline_results.py); beside
ui_messages.json the API rows are streamed, never collected (formats/cline_ui.py).

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

from aitrail.analyzer.formats import cline_ui
from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.cline_results import block_text, user_rows
from aitrail.analyzer.formats.cline_ui import ui_tool_name  # noqa: F401 (kept importable from here)
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms

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


def split_assistant_text(text: str, tool_names: tuple[str, ...]) -> Iterator[Segment]:
    """Prose, <thinking> blocks and XML tool calls of assistant text, in order, one at a time.

    A tag without its closing tag (a reply cut off mid-call) runs to the end of
    the text and is marked incomplete. A generator: one 60 MiB text block can
    hold millions of tags, and a list of them all took gigabytes.
    """
    opening = _opening_tags(tool_names)
    position = 0
    while position < len(text):
        found = opening.search(text, position)
        if found is None:
            yield from _text_segment(text[position:])
            break
        start, tag = found.start(), found.group(1)
        yield from _text_segment(text[position:start])
        closing = f"</{tag}>"
        end = text.find(closing, found.end())  # from the opening on: each part of the text is searched once
        complete = end >= 0
        stop = end + len(closing) if complete else len(text)
        if tag == _THINKING:
            inner = text[found.end(): end if complete else stop]
            yield Segment("thinking", inner.strip("\n"), complete=complete)
        else:
            yield Segment("tool", text[start:stop], tool_name=tag, complete=complete)
        position = stop


def _text_segment(text: str) -> Iterator[Segment]:
    if text.strip():
        yield Segment("text", text.strip("\n"))


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
            yield from read_ui_messages(ctx, flavour, beside=lambda: _api_rows(ctx, api, flavour))
        elif cline_ui.holds_partial(ctx.data):  # a cut stream's reply is in no API message
            yield from read_ui_messages(ctx, flavour, beside=lambda: _api_rows(ctx, api, flavour), partial_only=True)


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
    yield from walk.calls.over_limit_rows()


class _ApiWalk:
    """The state of one API history walk: open calls, the model in use, the task's columns."""

    def __init__(self, flavour: TaskFlavour, base: dict, untimed: dict, reader: MessageReader | None = None):
        self.flavour, self.base, self.untimed, self.reader = flavour, base, untimed, reader
        self.calls = BoundedLedger()  # native ids, or (XML) the message index joined by tool name
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
            yield from user_rows(blocks, locator, moment, self.calls)
            yield from self.calls.orphans()  # the next user message answers the calls before it, or none does

    def _model(self, message: dict, locator: str, moment: dict) -> Iterator[Draft]:
        info = message.get("modelInfo")
        model = (info.get("modelId") or info.get("id")) if isinstance(info, dict) else None  # 3.x, SDK
        if isinstance(model, str) and model and model != self.model:
            label = f"model: {model}" if not self.model else f"model: {self.model} -> {model}"
            yield Draft("system", label, f"{locator}/modelInfo", **{**moment, "model": model})
            self.model = model


def _assistant(blocks: list, index: int, locator: str, moment: dict, calls: BoundedLedger,
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
                call_id = str(index) if not calls.open_count else f"{index}.{calls.open_count + 1}"
                call = Draft("tool_use", segment.text, where, tool_name=segment.tool_name, tool_use_id=call_id,
                             **moment)
                calls.called(call)
                yield call


def _native_call(block: dict, where: str, moment: dict) -> Draft:
    call_id = block.get("id") if isinstance(block.get("id"), str) else ""
    name = block.get("name") if isinstance(block.get("name"), str) else ""
    return Draft("tool_use", json.dumps(block.get("input"), ensure_ascii=False), where, tool_name=name,
                 tool_use_id=call_id, **moment)


def read_ui_messages(ctx: ParseContext, flavour: TaskFlavour, beside: Callable[[], Iterable[Draft]] | None = None,
                     partial_only: bool = False) -> Iterator[Draft]:
    """ui_messages.json in the flavour's columns (formats/cline_ui.py): the transcript, or what the API lacks.

    ``beside`` gives the rows of the task's API history (read once, as the ui file asks).
    """
    yield from cline_ui.read_ui_messages(ctx, flavour.columns(ctx), beside, partial_only)


def _api_rows(ctx: ParseContext, api: Source, flavour: TaskFlavour) -> Iterator[Draft]:
    """The rows of the task's API history without columns (none when it cannot be read), streamed."""
    keys_only = replace(flavour, columns=lambda _ctx: {}, untimed=None)  # a row key has no columns: no joins
    try:
        yield from read_api_history(ParseContext(ctx.bundle, api, {}), keys_only)
    except MemberUnreadable:
        return


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
