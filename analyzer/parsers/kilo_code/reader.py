"""Kilo Code's reading of api_conversation_history.json messages (the TaskFlavour.reader of the shared walk).

Kilo Code legacy (<= 5.x) writes what its Roo Code base writes, with Kilo's own
blocks and texts, all read here rather than by the walk's default reading:

* a task is locked to one tool protocol (``HistoryItem.toolProtocol``): ``xml``
  (tool calls are XML tags in assistant text, the result is the next user
  message, no ids: positional ids ``<message index>`` and ``<index>.<n>``, as
  the walk gives them) or ``native`` (``tool_use {id, name, input}`` answered by
  ``tool_result {tool_use_id, content}`` anywhere later in the file; the
  content is the tool's raw output, no ``[tool] Result:`` header). A file with
  any tool_use or tool_result block is read as native;
* native denials, approvals with a note and errors are JSON status strings at
  the start of a result (src/core/prompts/responses.ts: ``{"status":"denied",
  "message":…}``, ``{"status":"denied",…,"feedback":…}``, ``{"status":"approved",
  …,"feedback":…}``, ``{"status":"error",…}``); the XML protocol writes the plain
  texts Cline does (formats/cline_results.py reads those);
* reasoning is kept three ways (src/core/task/Task.ts ``addToApiConversationHistory``):
  an Anthropic ``thinking`` block, a ``reasoning`` block (``text`` and ``summary``,
  or only ``encrypted_content`` from OpenAI's Responses API: ``[encrypted
  reasoning]``) and a message-level ``reasoning_content`` string (DeepSeek);
  ``reasoning_details`` and ``thoughtSignature`` blocks are provider plumbing;
* a condense (src/core/condense/index.ts) inserts a summary message
  (``isSummary``, ``condenseId``) that copies the tool_use blocks its kept results
  need, and tags the messages it hides with ``condenseParent``; a sliding-window
  truncation inserts a ``isTruncationMarker`` message and tags hidden ones with
  ``truncationParent``. Hidden messages stay in the file: their rows stay, each
  text starting ``condensed: `` / ``truncated: ``; the summary's text is
  ``condense summary: `` system rows (its copied calls are not calls again), the
  marker a ``truncation marker: `` row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.cline_results import block_text, user_rows
from aitrail.analyzer.formats.cline_tasks import split_assistant_text
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.text import is_image_block
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

# packages/types/src/tool.ts:17-48 (Kilo-Org/kilocode-legacy@56b73d3b): the XML tool tags
TOOL_NAMES = (
    "execute_command", "read_file", "write_to_file", "apply_diff", "search_and_replace", "search_replace",
    "edit_file", "apply_patch", "search_files", "list_files", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "switch_mode", "new_task",
    "fetch_instructions", "codebase_search", "fast_edit_file", "new_rule", "report_bug", "condense",
    "delete_file", "update_todo_list", "run_slash_command", "generate_image", "custom_tool",
    "insert_content", "list_code_definition_names",  # older 4.x prompts
)
NATIVE_BLOCKS = frozenset({"tool_use", "tool_result"})
REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
PLUMBING_BLOCKS = frozenset({"thoughtSignature", "reasoning_details"})
UNMARKED = ("parser: ", "permission decision: ")  # fixed prefixes stay first on a hidden message's rows
# (status, has feedback) -> the decision row's word (docs/timeline.md); "error" and "guidance" are no decision
STATUS_DECISIONS = {("denied", False): "denied", ("denied", True): "denied with feedback",
                    ("approved", True): "approved with feedback"}


def content_blocks(message: dict) -> list:
    """A message's content as a list of blocks (a string is one text block; anything else none)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def holds_native_blocks(messages: list) -> bool:
    """Whether any message of the file holds a tool_use or tool_result block (the native protocol)."""
    for message in messages:
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            if any(isinstance(block, dict) and block.get("type") in NATIVE_BLOCKS for block in message["content"]):
                return True
    return False


def json_status_decision(text: str) -> str | None:
    """The decision a native result's leading JSON status records (``denied``, ...), else None."""
    head = text.lstrip()
    if not head.startswith('{"status"'):
        return None
    try:
        status = decode_json(head.split("\n", 1)[0])  # JSON.stringify output: one line
    except ValueError:
        return None
    if not isinstance(status, dict) or not isinstance(status.get("status"), str):
        return None
    return STATUS_DECISIONS.get((status["status"], bool(status.get("feedback"))))


def reasoning_text(block: dict) -> str:
    """The text of a thinking, redacted_thinking or reasoning block ('' when it holds none)."""
    kind = block.get("type")
    if kind == "thinking":
        return str(block.get("thinking") or "")
    if kind == "redacted_thinking":
        return "[redacted thinking]"
    if isinstance(block.get("text"), str) and block["text"]:
        return block["text"]
    summary = block.get("summary") if isinstance(block.get("summary"), list) else []
    parts = [str(item["text"]) for item in summary if isinstance(item, dict) and item.get("text")]
    if parts:
        return "\n".join(parts)
    return "[encrypted reasoning]" if block.get("encrypted_content") else ""


def _ids_of(messages: list, flag: str, key: str) -> frozenset[str]:
    """The ``key`` values (condenseId, truncationId) of the messages that carry ``flag``."""
    return frozenset(message[key] for message in messages
                     if isinstance(message, dict) and message.get(flag) and isinstance(message.get(key), str)
                     and message[key])


class KiloReader:
    """The MessageReader of one api_conversation_history.json (module docstring): every message read here."""

    def __init__(self, messages: list) -> None:
        self.native = holds_native_blocks(messages)
        self.calls = BoundedLedger()
        self.summaries = _ids_of(messages, "isSummary", "condenseId")
        self.markers = _ids_of(messages, "isTruncationMarker", "truncationId")

    def rows(self, message: dict, index: int, moment: dict, default: Iterator[Draft]) -> Iterator[Draft]:
        """One message's rows (the walk's ``default`` reading is not used), marked when a condense hides it."""
        locator = f"json:/{index}"
        if message.get("isTruncationMarker"):
            text = "\n".join(block_text(block) for block in content_blocks(message))
            rows: Iterator[Draft] = iter([Draft("system", f"truncation marker: {text}", f"{locator}/content",
                                                **moment)])
        elif message.get("role") == "assistant":
            rows = self._assistant(message, index, locator, moment)
        else:
            rows = self._user(message, locator, moment)
        mark = self._mark(message)
        for row in rows:
            if mark and not row.text.startswith(UNMARKED):
                row.text = mark + row.text
            yield row

    def finish(self) -> Iterator[Draft]:
        """A ``no result recorded`` row per call never answered, and the ledger's limit row."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()

    def _mark(self, message: dict) -> str:
        condensed, truncated = message.get("condenseParent"), message.get("truncationParent")
        if isinstance(condensed, str) and condensed in self.summaries:
            return "condensed: "
        if isinstance(truncated, str) and truncated in self.markers:
            return "truncated: "
        return ""

    # -- assistant messages ------------------------------------------------------------------------

    def _assistant(self, message: dict, index: int, locator: str, moment: dict) -> Iterator[Draft]:
        if not self.native:
            yield from self.calls.orphans()  # XML: the user message after a call answers it, or none does
        summary = bool(message.get("isSummary"))
        if isinstance(message.get("reasoning_content"), str) and message["reasoning_content"].strip():
            yield Draft("thinking", message["reasoning_content"], f"{locator}/reasoning_content", **moment)
        for position, block in enumerate(content_blocks(message)):
            where = f"{locator}/content/{position}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_use":
                yield from self._tool_use(block, where, moment, summary)
            elif kind in REASONING_BLOCKS:
                text = reasoning_text(block)
                if text:
                    yield Draft("thinking", text, where, **moment)
            elif kind in PLUMBING_BLOCKS:
                continue  # a provider's signature or reasoning details, carried for the next request
            elif summary:
                text = block_text(block)
                if text.strip():
                    yield Draft("system", f"condense summary: {text}", where, **moment)
            elif kind == "text" or is_image_block(block):
                yield from self._assistant_text(block_text(block), index, where, moment)
            else:
                yield Draft("system", f"content block {kind}: {setting_value(block)[:2000]}", where, **moment)

    def _assistant_text(self, text: str, index: int, where: str, moment: dict) -> Iterator[Draft]:
        if self.native:  # a native task's text is prose: XML-looking tags in it are not calls
            if text.strip():
                yield Draft("assistant", text.strip("\n"), where, **moment)
            return
        for segment in split_assistant_text(text, TOOL_NAMES):
            if segment.kind == "tool":
                call_id = str(index) if not self.calls.open_count else f"{index}.{self.calls.open_count + 1}"
                call = Draft("tool_use", segment.text, where, tool_name=segment.tool_name, tool_use_id=call_id,
                             **moment)
                self.calls.called(call)
                yield call
            else:
                yield Draft("assistant" if segment.kind == "text" else "thinking", segment.text, where, **moment)

    def _tool_use(self, block: dict, where: str, moment: dict, summary: bool) -> Iterator[Draft]:
        call_id = block.get("id") if isinstance(block.get("id"), str) else ""
        name = block.get("name") if isinstance(block.get("name"), str) else ""
        if summary and call_id and self.calls.was_called(call_id):
            return  # the condense summary's copy of a call made earlier in the file
        call = Draft("tool_use", json.dumps(block.get("input"), ensure_ascii=False), where, tool_name=name,
                     tool_use_id=call_id, **moment)
        self.calls.called(call)
        yield call

    # -- user messages ---------------------------------------------------------------------------

    def _user(self, message: dict, locator: str, moment: dict) -> Iterator[Draft]:
        blocks = content_blocks(message)
        for row in user_rows(blocks, locator, moment, self.calls):
            yield row
            if row.turn_type == "tool_result" and self.native:
                decision = json_status_decision(row.text)
                if decision:
                    yield Draft("system", f"permission decision: {decision}", row.locator, tool_name=row.tool_name,
                                tool_use_id=row.tool_use_id, **moment)
        if not self.native:
            yield from self.calls.orphans()
