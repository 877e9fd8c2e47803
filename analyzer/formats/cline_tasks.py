"""The Cline task folder and its forks (Roo Code, PearAI's agent): shared reading rules.

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

References: cline/cline@v3.34.0 src/core/task/tools/utils/ToolResultUtils.ts:26-45;
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:1271-1386, src/core/prompts/responses.ts:8-14,
src/core/assistant-message/parse-assistant-message.ts:6-30
(research/formats-vscode-family.md 5.4, 5.5, 6.8).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from aitrail.analyzer.formats.decode import decode_json

RESULT_HEADER = re.compile(r"^\[(?P<tool>[a-z_]+)(?P<args>.*?)\] Result:[ \t]*(?:\n(?P<rest>.*))?$", re.DOTALL)
NOT_EXECUTED = re.compile(r"^Tool \[(?P<tool>[a-z_]+)\] was not executed because")
REJECTED_EARLIER = re.compile(r"^(Skipping tool|Tool) \[?(?P<tool>[a-z_]+).*?(due to user rejecting a previous tool)", re.DOTALL)
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
