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

References: cline/cline@v3.34.0 src/core/task/tools/utils/ToolResultUtils.ts:26-45;
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:1271-1386, src/core/prompts/responses.ts:8-14,
src/core/assistant-message/parse-assistant-message.ts:6-30
(research/formats-vscode-family.md 5.4, 5.5, 6.8).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.formats.text import bad_record, json_document
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

    kind: str  # result | not_executed | rejected_earlier | system | task | user
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
    if text.lstrip().startswith(SYSTEM_PREFIXES):
        return UserBlock("system", text)
    task = _TASK.match(text)
    if task:
        return UserBlock("task", task.group("task"))
    return UserBlock("user", text)


def permission_decision(text: str) -> str | None:
    """``denied``, ``denied with feedback`` or ``approved with feedback`` from a result's text."""
    stripped = text.lstrip()
    for prefix, decision in PERMISSION_TEXTS:
        if stripped.startswith(prefix):
            return decision
    return None


def block_text(block) -> str:
    """One API content block as text (images as a placeholder, unknown blocks as JSON)."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        if block.get("type") == "text":
            return str(block.get("text", ""))
        if block.get("type") == "image":
            return "[image]"
    return json.dumps(block, sort_keys=True)


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


def ui_tool_name(ask: str, text: str) -> str:
    """The tool an ask of ui_messages.json names (its text is a JSON object for ``tool`` asks)."""
    if ask == "tool":
        try:
            return str(decode_json(text).get("tool", "tool"))
        except (ValueError, AttributeError):
            return "tool"
    return {"command": "execute_command", "use_mcp_server": "use_mcp_tool"}.get(ask, ask)


# -- the task walk: api_conversation_history.json and ui_messages.json -------------------------------


@dataclass(frozen=True)
class TaskFlavour:
    """What differs between Cline forks for the task walk.

    Attributes:
        tool_names: the fork's XML tool tags (``execute_command``, ...), in its parser's list.
        columns: ``session_id`` and ``project_path`` for every row of the task file in ``ctx``
            (usually the task folder's name and the workspace from the task history).
    """

    tool_names: tuple[str, ...]
    columns: Callable[[ParseContext], dict]
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
    """A task folder's file: the API history, else ui_messages.json when the API history is missing.

    task_metadata.json (files in context) and a ui_messages.json beside its API history add no rows.
    """
    name = ctx.source.name
    if name == "api_conversation_history.json":
        yield from read_api_history(ctx, flavour)
    elif name == "ui_messages.json" and ctx.sibling("api_conversation_history.json") is None:
        yield from read_ui_messages(ctx, flavour)


def read_api_history(ctx: ParseContext, flavour: TaskFlavour) -> Iterator[Draft]:
    """api_conversation_history.json: prose, thinking, XML tool calls and their results, in order.

    A tool call's id is its assistant message's index (``3``, then ``3.2`` for the
    second call of the same message); a ``[tool for 'arg'] Result:`` block in the next
    user message answers the first open call of that tool. Calls the next assistant
    message finds open get the ``no result recorded`` row.
    """
    messages, problem = json_document(ctx.data, "api_conversation_history.json", list)
    if problem is not None:
        yield problem
        return
    base = flavour.columns(ctx)
    calls = CallLedger()  # ids are the assistant message's index: calls join results by position and tool name
    reader = flavour.reader(ctx, messages) if flavour.reader is not None else None
    for index, message in enumerate(messages):
        locator = f"json:/{index}"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            yield bad_record(locator, "not a user or assistant message", json.dumps(message)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(message.get("ts")), "timestamp_source": "record", **base}
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            yield bad_record(f"{locator}/content", "content is neither text nor a list of blocks")
            continue
        rows = _message_rows(message["role"], blocks, index, locator, moment, calls, flavour)
        yield from reader.rows(message, index, moment, rows) if reader is not None else rows
    if reader is not None:
        yield from reader.finish()
    yield from calls.orphans()


def _message_rows(role: str, blocks: list, index: int, locator: str, moment: dict, calls: CallLedger,
                  flavour: TaskFlavour) -> Iterator[Draft]:
    if role == "assistant":
        yield from calls.orphans()
        yield from _assistant(blocks, index, locator, moment, calls, flavour.tool_names)
    else:
        yield from _user(blocks, locator, moment, calls)
        calls.forget()  # the next user message answers the next assistant message's calls only


def _assistant(blocks: list, index: int, locator: str, moment: dict, calls: CallLedger,
               tool_names: tuple[str, ...]) -> Iterator[Draft]:
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
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


def _user(blocks: list, locator: str, moment: dict, calls: CallLedger) -> Iterator[Draft]:
    result: dict | None = None  # the tool result being assembled from consecutive blocks
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        text = block_text(block)
        kind = classify_user_block(text) if isinstance(block, (str, dict)) and text else None
        if kind is None:
            continue
        if result is not None and kind.kind == "user":
            result["texts"].append(kind.text)
            continue
        if result is not None:
            yield from _finish_result(result, moment)
            result = None
        if kind.kind == "result":
            call = calls.take_named(kind.tool_name)
            result = {"tool": kind.tool_name, "call": call, "texts": [kind.text] if kind.text else [], "where": where}
        elif kind.kind in ("not_executed", "rejected_earlier"):
            call = calls.take_named(kind.tool_name)
            yield Draft("tool_result", kind.text, where, tool_name=kind.tool_name,
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind.kind == "system":
            yield Draft("system", kind.text, where, **moment)
        else:  # task or user: typed by the user
            yield Draft("user", kind.text, where, **moment)
    if result is not None:
        yield from _finish_result(result, moment)


def _finish_result(result: dict, moment: dict) -> Iterator[Draft]:
    call = result["call"]
    call_id = call.tool_use_id if call else ""
    output = "\n".join(result["texts"])
    yield Draft("tool_result", output, result["where"], tool_name=result["tool"], tool_use_id=call_id, **moment)
    if call is None:
        yield Draft("system", f"parser: tool result for {result['tool']} with no tool call before it",
                    result["where"], **moment)
    decision = permission_decision(result["texts"][0]) if result["texts"] else None
    if decision:
        yield Draft("system", f"permission decision: {decision}", result["where"], tool_name=result["tool"],
                    tool_use_id=call_id, **moment)


def read_ui_messages(ctx: ParseContext, flavour: TaskFlavour) -> Iterator[Draft]:
    """ui_messages.json, the fallback transcript when the task's API history is not in the bundle.

    ``say text`` is the prompt (first) or a reply; an ``ask`` for a tool is a call whose
    id is its ``ts``, answered by the next output event (the last open ask).
    """
    events, problem = json_document(ctx.data, "ui_messages.json", list)
    if problem is not None:
        yield problem
        return
    base = flavour.columns(ctx)
    seen_prompt, asks = False, CallLedger()  # ask ids are timestamps, not unique: joined by event
    for index, event in enumerate(events):
        locator = f"json:/{index}"
        if not isinstance(event, dict) or event.get("type") not in ("ask", "say"):
            yield bad_record(locator, "not an ask or say event", json.dumps(event)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(event.get("ts")), "timestamp_source": "record", **base}
        kind, text = event.get(event["type"]) or "", str(event.get("text") or "")
        if event.get("partial"):
            continue  # a streaming placeholder, superseded by the final event with the same ts
        if event["type"] == "say" and kind == "text":
            yield Draft("assistant" if seen_prompt else "user", text, locator, **moment)
            seen_prompt = True
        elif kind == "user_feedback":
            yield Draft("user", text, locator, **moment)
        elif kind == "reasoning":
            yield Draft("thinking", text, locator, **moment)
        elif event["type"] == "ask" and kind in ("tool", "command", "use_mcp_server", "browser_action_launch"):
            call = Draft("tool_use", text, locator, tool_name=ui_tool_name(kind, text),
                         tool_use_id=str(event.get("ts", "")), **moment)
            asks.called(call, key=locator)
            yield call
        elif kind in ("command_output", "mcp_server_response", "browser_action_result"):
            call = asks.take_last()
            yield Draft("tool_result", text, locator, tool_name=call.tool_name if call else "",
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind in ("completion_result", "followup"):
            yield Draft("assistant", text, locator, **moment)
        else:
            yield Draft("system", f"ui {event['type']} {kind}: {text}", locator, **moment)
    yield from asks.orphans()  # ui_messages.json keeps no output for file tools
