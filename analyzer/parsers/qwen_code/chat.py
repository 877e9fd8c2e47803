"""Qwen Code session transcripts: one ``ChatRecord`` per JSONL line, read in file order.

``projects/<sanitized cwd>/chats/<sessionId>.jsonl`` (and ``chats/archive/``),
and the sub-agent transcripts ``projects/<sanitized cwd>/subagents/<sessionId>/agent-<agentId>.jsonl``
(``isSidechain: true``, the parent's ``sessionId``). Every record carries
``uuid``, ``parentUuid``, ``sessionId``, ``timestamp`` (ISO 8601 UTC, ``Z``),
``type``, ``cwd``, ``version`` and ``gitBranch``; ``message`` is a Gemini
``Content {role, parts[]}``.

Rows per record ``type``:

* ``user``: what the user typed (``systemPayload.displayText`` when the parts
  were expanded, else the text parts) as a ``user`` row; subtypes
  ``notification``, ``cron`` and ``goal_runtime`` are written by the CLI
  (``notification:``, ``cron prompt:``, ``goal runtime:`` system rows); in a
  sub-agent transcript the prompt the parent sent is ``subagent prompt:``; a
  hook's ``hookContext`` adds ``injected context (hook): …``;
* ``assistant``: ``model:`` where ``model`` first appears or changes, then the
  parts through ``formats.gemini_content.ContentWalk`` (``thinking``, the text,
  one ``tool_use`` per ``functionCall``), and ``tokens generated: …`` from
  ``usageMetadata``;
* ``tool_result``: one ``tool_result`` per ``functionResponse``, joined to its
  call by ``functionCall.id`` = ``functionResponse.id``; a result refused by a
  rule (``toolCallResult.errorType`` ``execution_denied``) adds
  ``permission decision: denied by a rule (execution_denied)``;
* ``system``: by subtype (``records.py``).

The first record with ``forkedFrom`` (every record of a ``/branch`` copy has
it) adds ``forked from: …``. Rows are in file order: a ``rewind`` record
re-roots the ``parentUuid`` chain, and the records it cut off stay rows.

    {"uuid":"a1…3","parentUuid":"a1…2","sessionId":"3b8f6a4e-…","timestamp":"2026-08-02T06:40:21.470Z",
     "type":"assistant","cwd":"/home/mei/proj/etl","version":"0.24.4","gitBranch":"main","model":"qwen3-coder-plus",
     "message":{"role":"model","parts":[{"functionCall":{"id":"call_5d2","name":"read_file","args":{…}}}]}}

References: npm @qwen-code/qwen-code@0.24.4 chunks/chunk-DPEB6S2R.js (packages/core/src/services/
chatRecordingService.ts: ``createBaseRecord``, ``recordUserMessage``, ``recordMidTurnUserMessage``,
``createNotificationRecord``, ``recordAssistantTurn``, ``recordToolResult``; packages/core/src/agents/
agent-transcript.ts: ``attachJsonlTranscriptWriter``; ``createErrorResponse``, ``evaluatePermissionFlow``);
QwenLM/qwen-code@015346f1d5 packages/core/src/services/chatRecordingService.ts (``ChatRecord``).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import MAX_CALL_IDS, BoundedLedger
from aitrail.analyzer.formats.gemini_content import (
    ContentWalk,
    compact,
    function_response,
    is_thought,
    moment,
    part_text,
    parts_of,
    result_groups,
)
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .records import system_rows
from .values import as_dict, as_text

# user-record subtypes the CLI writes itself (a notice, a timer, the goal runtime), never typed by the user
_WRITTEN_BY_CLI = {"notification": "notification", "cron": "cron prompt", "goal_runtime": "goal runtime"}


class ChatState:
    """What one transcript carries from record to record: the model, the call walk, the decided calls."""

    def __init__(self):
        self.model = ""
        self.walk = ContentWalk(BoundedLedger(), MAX_CALL_IDS)
        self.decided: set[str] = set()  # call ids whose approval or refusal a telemetry record gave
        self.forked = False

    def decide(self, call_id: str) -> None:
        """A recorded decision for this call (its result text then gives no second one)."""
        if call_id and len(self.decided) < MAX_CALL_IDS:
            self.decided.add(call_id)


def columns_of(record: dict) -> dict:
    """Session, project, branch and time of a record (every ChatRecord carries them)."""
    return {"session_id": as_text(record.get("sessionId")), "project_path": as_text(record.get("cwd")),
            "git_branch": as_text(record.get("gitBranch")), **moment(record.get("timestamp"))}


def parts_at(record: dict) -> list:
    """The parts of the record's ``message`` Content (none when it has no message)."""
    return parts_of(as_dict(record.get("message")).get("parts"))


def parse_chat(ctx: ParseContext) -> Iterator[Draft]:
    """A session or sub-agent transcript: rows per record, calls joined to results by id across the file."""
    state = ChatState()
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            yield from record_rows(state, line.value, line.locator)
        else:
            yield line
    yield from state.walk.finish()


def record_rows(state: ChatState, record: dict, locator: str) -> Iterator[Draft]:
    """The rows of one record, by its ``type``; a record that gives none is said to be empty."""
    columns = columns_of(record)
    yield from _fork_rows(state, record, locator, columns)
    kind = record.get("type")
    if kind == "user":
        rows = _user(state, record, locator, columns)
    elif kind == "assistant":
        rows = _assistant(state, record, locator, columns)
    elif kind == "tool_result":
        rows = _tool_result(state, record, locator, columns)
    elif kind == "system":
        rows = system_rows(state, record, locator, columns)
    else:
        rows = iter((Draft("system", f"record {compact(kind)}: {excerpt(compact(record))}", locator, **columns),))
    produced = False
    for row in rows:
        produced = True
        yield row
    if not produced:
        yield Draft("system", f"record {as_text(kind) or '(no type)'} with no text, thoughts or tool calls", locator,
                    **columns)


def _fork_rows(state: ChatState, record: dict, locator: str, columns: dict) -> Iterator[Draft]:
    fork = record.get("forkedFrom")
    if isinstance(fork, dict) and not state.forked:
        state.forked = True
        yield Draft("system", f"forked from: session {as_text(fork.get('sessionId'))} at message "
                              f"{as_text(fork.get('messageUuid'))} (/branch copy)", f"{locator}/forkedFrom", **columns)


def _part_locator(locator: str):
    return lambda index: f"{locator}/message/parts/{index}"


# -- user -------------------------------------------------------------------------------------------------


def _user(state: ChatState, record: dict, locator: str, columns: dict) -> Iterator[Draft]:
    parts = parts_at(record)
    if any(function_response(part) is not None for part in parts):  # results in a user turn: never a prompt
        yield from _results(state, record, parts, locator, columns)
        return
    payload = as_dict(record.get("systemPayload"))
    display = payload.get("displayText")
    text = display if isinstance(display, str) and display.strip() else \
        "".join(part_text(part) for part in parts if not is_thought(part))
    subtype = as_text(record.get("subtype"))
    if text.strip():
        if subtype in _WRITTEN_BY_CLI:
            yield Draft("system", f"{_WRITTEN_BY_CLI[subtype]}: {text}", locator, **columns)
        elif record.get("isSidechain") is True:  # a sub-agent's "user" turn is what its parent sent it
            yield Draft("system", f"subagent prompt: {text}", locator, **columns)
        elif subtype in ("", "mid_turn_user_message", "realtime_message"):
            yield Draft("user", text, locator, **columns)
        else:
            yield Draft("system", f"user record ({subtype}): {text}", locator, **columns)
    hook = payload.get("hookContext")
    if isinstance(hook, str) and hook.strip():
        yield Draft("system", f"injected context (hook): {hook}", f"{locator}/systemPayload/hookContext", **columns)


# -- assistant --------------------------------------------------------------------------------------------


def _assistant(state: ChatState, record: dict, locator: str, columns: dict) -> Iterator[Draft]:
    model = as_text(record.get("model"))
    if model and model != state.model:
        text = f"model: {state.model} -> {model}" if state.model else f"model: {model}"
        state.model = model
        yield Draft("system", text, f"{locator}/model", model=model, **columns)
    fields = {**columns, "model": model}
    yield from state.walk.model_rows(parts_at(record), _part_locator(locator), locator, fields)
    usage = record.get("usageMetadata")
    if isinstance(usage, dict) and usage:
        counts = [f"{key}={value}" for key, value in usage.items()
                  if isinstance(value, (int, float)) and not isinstance(value, bool)]
        if isinstance(record.get("contextWindowSize"), int):
            counts.append(f"contextWindowSize={record['contextWindowSize']}")
        yield Draft("system", f"tokens generated: model={model} {' '.join(counts)}".rstrip(),
                    f"{locator}/usageMetadata", **fields)


# -- tool results -------------------------------------------------------------------------------------------


def _tool_result(state: ChatState, record: dict, locator: str, columns: dict) -> Iterator[Draft]:
    yield from _results(state, record, parts_at(record), locator, columns)


def _results(state: ChatState, record: dict, parts: list, locator: str, columns: dict) -> Iterator[Draft]:
    part_at = _part_locator(locator)
    outcome = as_dict(record.get("toolCallResult"))
    for index, (call_id, name, text) in enumerate(result_groups(parts)):
        where = part_at(index) if len(parts) > 1 else locator
        yield from state.walk.result_rows(call_id, name, text, where, columns,
                                          decision=call_id not in state.decided)
        if outcome.get("errorType") == "execution_denied" and as_text(outcome.get("callId")) in ("", call_id):
            yield Draft("system", "permission decision: denied by a rule (execution_denied)", where,
                        tool_name=name or state.walk.calls.called_name(call_id), tool_use_id=call_id, **columns)

