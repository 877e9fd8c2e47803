"""sessions/<project key>/<session id>.jsonl: one Factory Droid session, one event per line.

The first line is ``session_start`` (Droid refuses a file without it: "Invalid session
file: missing session_start event") and may be rewritten in place when the title
changes; the other lines are appended under ``<file>.events.lock``:

* ``session_start {id, title, isSessionTitleManuallySet?, owner, organizationId?, parent?,
  callingSessionId?, callingToolUseId?, version: 2, cwd, lastCwd?, hostId?,
  decompSessionType?}`` (older files: ``sessionTitle`` for ``title``, ``sessionId`` for ``id``);
  no time of its own;
* ``message {id, timestamp (ISO 8601 UTC, Z), message {role, content, ...extras}, parentId?,
  tokens?, compactionSummaryId?}``; the extras include ``userMessageSource`` (cli_tui,
  cli_exec, slack, automation, ...), ``visibility`` (both, llm_only, user_only),
  ``hookEventName`` and the other ``hook*`` fields, ``modelId``, ``apiProvider``,
  ``reasoningEffort``;
* ``todo_state {id, timestamp, todos[{id, content, status, priority?}], messageIndex}``
  (the last one is the list);
* ``compaction_state {id, timestamp, summaryText, summaryTokens, summaryKind,
  anchorMessage?, removedCount, systemInfo}``.

Rows: ``session metadata:`` for session_start (untimed: it has no time); per message
block ``user`` (typed text; text Droid injected for the model only is ``injected
context (llm_only):``, text shown to the user only ``shown to the user only:``, a hook's
``hook <event>:``, a prompt an automation wrote ``automated prompt (<source>):``),
``assistant``, ``thinking`` (redacted thinking says so, never its data), ``tool_use``
(tool_use_id = the block's ``id``) and ``tool_result`` joined by ``tool_use_id``, with a
``permission decision:`` row where the result records one (content.py);
``attachment:`` for documents, image placeholders; ``model:`` where ``modelId`` is first
seen or changes; ``task:`` per todo; ``compaction:`` per compaction; ``event <type>:``
for a type this parser does not know.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_record, excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .content import blocks_of, compact, decision, document_text, label, result_text

# userMessageSource values of prompts no person typed (bundle enum: automation, readiness and wiki jobs)
AUTOMATED_SOURCES = frozenset({"automation", "readiness-remediation", "readiness-evaluation", "wiki-generation",
                               "wiki-ci-setup"})


class _Session:
    """What one transcript carries from line to line: session, project, current model, open calls."""

    def __init__(self, ctx: ParseContext):
        self.session_id = PurePosixPath(ctx.source.path).name.removesuffix(".jsonl")
        self.project = ""
        self.model = ""
        self.calls = BoundedLedger()  # at most call_budget.MAX_CALL_IDS ids

    def columns(self, record: dict, model: str = "") -> dict:
        """Session, project, the record's own time (``none`` without one) and the model."""
        moment = ns_from_iso(record.get("timestamp"))
        return {"session_id": self.session_id, "project_path": self.project, "timestamp_ns": moment,
                "timestamp_source": "record" if moment is not None else "none", "model": model}


def parse_session(ctx: ParseContext) -> Iterator[Draft]:
    """A session transcript: rows per event, tool calls joined to their results by id."""
    session = _Session(ctx)
    yield from each_line(ctx, lambda line: _line_rows(session, line))
    # the calls left open once the file ends: their results were never written (or were cut off)
    yield from session.calls.orphans()
    yield from session.calls.over_limit_rows()


def _line_rows(session: _Session, line: Line) -> Iterator[Draft]:
    record = line.value
    kind = record.get("type")
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is not None:
        yield from handler(session, record, line.locator)
        return
    shown = {key: value for key, value in record.items() if key not in ("type", "timestamp")}
    yield Draft("system", f"event {label(kind) or '(no type)'}: {excerpt(compact(shown))}", line.locator,
                **session.columns(record))


def _session_start(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    session.session_id = label(record.get("id")) or label(record.get("sessionId")) or session.session_id
    session.project = label(record.get("cwd")) or label(record.get("lastCwd")) or session.project
    title = record.get("title", record.get("sessionTitle"))
    facts = [f"{key}={compact(record[key])}" for key in ("owner", "version", "cwd", "lastCwd", "decompSessionType")
             if record.get(key) not in (None, "")]
    if record.get("isSessionTitleManuallySet") is True:
        facts.append("title set by the user")
    if record.get("parent"):
        facts.append(f"parent (sub-agent of)={compact(record['parent'])}")
    if record.get("callingSessionId") or record.get("callingToolUseId"):
        facts.append(f"called by tool call {compact(record.get('callingToolUseId', ''))} in session "
                     f"{compact(record.get('callingSessionId', ''))}")
    yield Draft("system", f"session metadata: {compact(title) if title is not None else ''} ({', '.join(facts)})",
                locator, **session.columns(record))


def _message(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    message = as_dict(record.get("message"))
    role = message.get("role")
    model = label(message.get("modelId"))
    if role == "assistant" and model and model != session.model:
        text = f"model: {session.model} -> {model}" if session.model else f"model: {model}"
        session.model = model
        yield Draft("system", text, f"{locator}/message/modelId", **session.columns(record, model))
    columns = session.columns(record, model or (session.model if role == "assistant" else ""))
    kind = _text_kind(message) if role == "user" else ("assistant" if role == "assistant" else "")
    blocks = blocks_of(message.get("content"))
    if not blocks:  # an empty or unreadable content still leaves its mark (the line is cited)
        yield Draft("system", f"message without content: {label(record.get('id'))} ({label(role) or 'no role'})",
                    f"{locator}/message", **columns)
    for position, block in enumerate(blocks):
        where = f"{locator}/message/content/{position}"
        yield from _block(session, block, kind or f"message role {label(role) or '(none)'}", where, columns)


def _text_kind(message: dict) -> str:
    """What a user message's text is: typed (``user``), or the prefix of the system row it becomes."""
    hook = label(message.get("hookEventName"))
    if hook:
        return f"hook {hook}"
    visibility = message.get("visibility")
    if visibility == "llm_only" or message.get("hiddenFromUserViews") is True:
        return "injected context (llm_only)"
    if visibility == "user_only":
        return "shown to the user only"
    source = message.get("userMessageSource")
    if isinstance(source, str) and source in AUTOMATED_SOURCES:
        return f"automated prompt ({source})"
    return "user"


def _block(session: _Session, block, kind: str, locator: str, columns: dict) -> Iterator[Draft]:
    block_type = block.get("type") if isinstance(block, dict) else None
    if block_type == "text":
        text = compact(block.get("text", ""))
        if kind in ("user", "assistant"):
            yield Draft(kind, text, locator, **columns)
        else:
            yield Draft("system", f"{kind}: {text}", locator, **columns)
    elif block_type == "thinking":
        yield Draft("thinking", compact(block.get("thinking", "")), locator, **columns)
    elif block_type == "redacted_thinking":
        yield Draft("thinking", "(redacted thinking: encrypted by the provider, not shown)", locator, **columns)
    elif block_type == "tool_use":
        call = Draft("tool_use", compact(block.get("input", {})), locator, tool_name=label(block.get("name")),
                     tool_use_id=label(block.get("id")), **columns)
        session.calls.called(call)
        yield call
    elif block_type == "tool_result":
        yield from _result(session, block, locator, columns)
    elif block_type == "document":
        yield Draft("system", document_text(block), locator, **columns)
    elif is_image_block(block):
        yield Draft("user" if kind == "user" else "system", image_placeholder(block), locator, **columns)
    else:
        yield Draft("system", f"block {label(block_type) or '(no type)'}: {excerpt(compact(block))}", locator,
                    **columns)


def _result(session: _Session, block: dict, locator: str, columns: dict) -> Iterator[Draft]:
    call_id = label(block.get("tool_use_id"))
    call = session.calls.take(call_id)
    name = call.tool_name if call is not None else ""
    text = result_text(block.get("content"))
    yield Draft("tool_result", text, locator, tool_name=name, tool_use_id=call_id, **columns)
    if call is None:
        yield Draft("system", f"parser: tool result for {call_id or '(no id)'} with no tool call before it", locator,
                    tool_use_id=call_id, **columns)
    said = decision(text)
    if said:
        yield Draft("system", f"permission decision: {said}", locator, tool_name=name, tool_use_id=call_id,
                    **columns)


def _todo_state(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    todos = record.get("todos")
    if not isinstance(todos, list):
        yield bad_record(f"{locator}/todos", "todos is not a list", compact(todos))
        return
    if not todos:
        yield Draft("system", "task: (none: the todo list is empty)", f"{locator}/todos", **session.columns(record))
    for position, todo in enumerate(todos):
        todo = as_dict(todo)
        facts = [f"status={compact(todo.get('status', ''))}"]
        if todo.get("priority") is not None:
            facts.append(f"priority={compact(todo['priority'])}")
        yield Draft("system", f"task: {compact(todo.get('content', ''))} | {' '.join(facts)}",
                    f"{locator}/todos/{position}", **session.columns(record))


def _compaction(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    facts = [f"{key}={compact(record[key])}" for key in ("removedCount", "summaryKind", "summaryTokens")
             if record.get(key) is not None]
    yield Draft("system", f"compaction: {', '.join(facts)}: {compact(record.get('summaryText', ''))}", locator,
                **session.columns(record))


_HANDLERS = {
    "session_start": _session_start,
    "message": _message,
    "todo_state": _todo_state,
    "compaction_state": _compaction,
}
