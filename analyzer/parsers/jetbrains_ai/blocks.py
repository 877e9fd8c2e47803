"""The agent UI's block events (Junie and AI Assistant agent sessions) as rows, coalesced by ``stepId``.

[obs] The same ``com.intellij.ml.llm.aui.events.api`` block kinds appear in
AI Assistant's ``aia-task-history/*.events`` (sfinktah/junie-export@eaa5838705
``extract_aichat.py`` ``summarize_block``) and, under their short names, in
Junie's ``events.jsonl`` (research section 8.4; community Junie readers):

* ``TerminalBlockUpdatedEvent {command, output | details, status, stepId}``;
* ``ToolBlockUpdatedEvent {toolCall, text, details, status, stepId}``;
* ``ViewFilesBlockUpdatedEvent {files[{relativePath}], status, stepId}``;
* ``FileChangesBlockUpdatedEvent {changes[{beforeRelativePath,
  afterRelativePath}], status, stepId}``;
* ``ResultBlockUpdatedEvent {result, changes, cancelled, errorCode, stepId}``
  (the agent's answer);
* ``AgentThoughtBlockUpdatedEvent {text}``.

A block is re-sent whole at every update under the same ``stepId`` (IN_PROGRESS,
then COMPLETED or FAILED, then once more unchanged): only the last snapshot of
each (``stepId``, kind) is a row, at its own line (``Steps``). A call and its
result are one record: the block gives a ``tool_use`` row (what was asked)
and, once its status is final, a ``tool_result`` row (what came back), both
joined by the ``stepId`` (``line:N`` where there is none: a positional id).
The tool names are aitrail's, after the block kind: ``terminal``,
``view_files``, ``file_changes``; a ToolBlock's own tool name where its
``toolCall`` gives one, else ``tool``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft, over_limit

FINAL = ("COMPLETED", "FAILED", "CANCELLED", "DONE", "ERROR")
STEPS_BUDGET = 200_000  # (stepId, kind) pairs held per file; a session has hundreds
BLOCKS = ("TerminalBlockUpdatedEvent", "ToolBlockUpdatedEvent", "ViewFilesBlockUpdatedEvent",
          "FileChangesBlockUpdatedEvent", "ResultBlockUpdatedEvent", "AgentThoughtBlockUpdatedEvent")


def short_kind(kind: object) -> str:
    """``com.intellij...TerminalBlockUpdatedEvent`` -> ``TerminalBlockUpdatedEvent``."""
    return as_text(kind).rsplit(".", 1)[-1][:120]


class Steps:
    """The last line of each (stepId, kind) block, found in a first pass; at most STEPS_BUDGET held."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str], int] = {}
        self.count: dict[tuple[str, str], int] = {}
        self.over_at = ""

    def note(self, event: dict, line: int) -> None:
        """Remember ``line`` as the newest snapshot of the event's step (blocks with a stepId only)."""
        key = _key(event)
        if key is None:
            return
        if key in self.last or len(self.last) < STEPS_BUDGET:
            self.last[key] = line
            self.count[key] = self.count.get(key, 0) + 1
        else:
            self.over_at = self.over_at or f"line:{line}"

    def superseded(self, event: dict, line: int) -> bool:
        """True for a snapshot a later line of the same step replaces."""
        key = _key(event)
        return key is not None and key in self.last and self.last[key] != line

    def updates(self, event: dict) -> int:
        """How many snapshots of the event's step the file holds (1 when it has no stepId)."""
        key = _key(event)
        return self.count.get(key, 1) if key is not None else 1

    def over_limit_rows(self) -> Iterator[Draft]:
        """One ``parser:`` row when steps past the budget were given without coalescing."""
        if self.over_at:
            yield over_limit("agent steps", f"{STEPS_BUDGET} steps held", "the later steps' updates were each "
                             "written, not coalesced", self.over_at)


def _key(event: dict) -> tuple[str, str] | None:
    step = event.get("stepId")
    kind = short_kind(event.get("kind"))
    if not isinstance(step, str) or not step or kind not in BLOCKS:
        return None
    return step, kind


def block_rows(event: dict, locator: str, columns: dict, updates: int = 1) -> Iterator[Draft]:
    """The rows of one (last) block snapshot; None of them when ``event`` is not a block."""
    kind = short_kind(event.get("kind"))
    step = label(event.get("stepId")) or locator
    status = as_text(event.get("status"))
    note = f" ({updates} updates of step {step}; the last is shown)" if updates > 1 else ""
    if kind == "AgentThoughtBlockUpdatedEvent":
        yield Draft("thinking", as_text(event.get("text")), locator, **columns)
    elif kind == "ResultBlockUpdatedEvent":
        yield from _result_block(event, locator, columns, note)
    elif kind in BLOCKS:
        name, asked, answer = _call_parts(kind, event)
        yield Draft("tool_use", asked + note, locator, tool_name=name, tool_use_id=step, **columns)
        if status.upper() in FINAL or answer:
            yield Draft("tool_result", _answer(answer, status), locator, tool_name=name, tool_use_id=step, **columns)
        else:
            yield Draft("system", f"parser: no result recorded for tool call {step} ({name})", locator,
                        tool_name=name, tool_use_id=step, **columns)


def _answer(answer: str, status: str) -> str:
    """What came back, and the block's status when it is not plain success (or when nothing else came back)."""
    if not answer:
        return f"(status {status}; no output recorded)" if status else "(no output recorded)"
    return f"{answer} (status {status})" if status and status.upper() != "COMPLETED" else answer


def _call_parts(kind: str, event: dict) -> tuple[str, str, str]:
    """(tool name, what was asked, what came back) of a call block."""
    if kind == "TerminalBlockUpdatedEvent":
        return "terminal", as_text(event.get("command")), as_text(event.get("output") or event.get("details"))
    if kind == "ViewFilesBlockUpdatedEvent":
        return "view_files", "view files: " + ", ".join(_paths(event.get("files"), "relativePath")), ""
    if kind == "FileChangesBlockUpdatedEvent":
        changed = _paths(event.get("changes"), "afterRelativePath", "beforeRelativePath")
        return "file_changes", "change files: " + ", ".join(changed), ""
    call = event.get("toolCall")
    name = label(call.get("name") or call.get("toolName")) if isinstance(call, dict) else ""
    asked = as_text(event.get("text")) or (compact(call) if call is not None else "")
    return name or "tool", asked, as_text(event.get("details"))


def _paths(items: object, key: str, before: str = "") -> list[str]:
    """The ``key`` path of each entry; an entry with only its ``before`` path was deleted."""
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get(key):
            found.append(as_text(item[key]))
        elif isinstance(item, dict) and before and item.get(before):
            found.append(f"{as_text(item[before])} (deleted)")
    return found


def _result_block(event: dict, locator: str, columns: dict, note: str) -> Iterator[Draft]:
    text = as_text(event.get("result"))
    changed = _paths(event.get("changes"), "afterRelativePath", "beforeRelativePath")
    if changed:
        text += ("\n" if text else "") + "files: " + ", ".join(changed)
    facts = [f"{key}={as_text(event[key])}" for key in ("cancelled", "errorCode") if event.get(key) not in (None, "")]
    if facts:
        text += f" ({', '.join(facts)})"
    yield Draft("assistant", text + note, locator, **columns)


def other_block(event: dict, locator: str, columns: dict) -> Draft:
    """A block or event kind this parser does not know: named, with its content cut."""
    return Draft("system", f"event {short_kind(event.get('kind'))}: {excerpt(compact(event))}", locator, **columns)
