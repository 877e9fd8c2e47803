"""The extension's hook transcripts (secondary): GitHub.copilot-chat/transcripts/<sessionId>.jsonl.

One envelope a line, ``{type, data, id, timestamp (ISO), parentId}``:
``session.start`` (``context.cwd``), ``user.message`` (``content``),
``assistant.turn_start`` / ``turn_end``, ``assistant.message`` (``content``,
``toolRequests[{toolCallId, name, arguments}]``, ``reasoningText``),
``tool.execution_start`` and ``tool.execution_complete`` (``success``,
``result.content`` or ``error.message``). Tool ids are the model's, without ``__vscode-<n>``.

Rows are written as the session file's: the prompt as a user row; the
assistant messages of one request (one per model call) joined by blank lines
as ONE assistant row, at the last of them; a tool_use per tool request and a
tool_result per completed execution. Repeats of the session are then dropped
by the run, and what a deleted session leaves here stays, marked secondary.
Envelope lines are ``session start:``, ``turn started:``, ``turn complete:``
and ``tool started:`` rows; an unknown type a ``system`` row naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, over_limit

from .project import project_of

# Assistant text of one request held until its next prompt joins it into one row: each message costs
# its characters plus MESSAGE_COST (its locator, columns and list slots). A request has tens of model
# calls, hundreds at most; millions of assistant.message lines without a prompt held them all. Past it
# the reply so far is written as a row, one parser: row says so, and joining starts again.
PENDING_BUDGET = 64 * 1024 * 1024
MESSAGE_COST = 512


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _compact(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class TranscriptReader:
    """The rows of one transcript file, line by line, holding the current request's assistant text."""

    def __init__(self, ctx: ParseContext):
        self.session = ctx.source.name.rsplit(".", 1)[0]
        self.project = project_of(ctx).path
        self.ledger = BoundedLedger()  # at most call_budget.MAX_CALL_IDS ids
        self.pending: list[str] = []  # assistant texts of the request so far
        self.pending_at: list[tuple[str, dict, bool]] = []  # their lines: locator, columns, gave rows of its own
        self.held = 0  # PENDING_BUDGET spent by ``pending``

    def columns(self, line: Line) -> dict:
        """The time (the line's ISO timestamp) and session columns of a row of ``line``."""
        ns = ns_from_iso(_text(line.value.get("timestamp")))
        return {"timestamp_ns": ns, "timestamp_source": "record" if ns is not None else "none",
                "session_id": self.session, "project_path": self.project}

    def flush(self) -> Iterator[Draft]:
        """The joined assistant row of the request so far, at the newest of its lines.

        An earlier line that gave only text (no tool request, no reasoning) is
        cited by a row saying where its text went, so every line has a row.
        """
        if self.pending:
            last, columns, _ = self.pending_at[-1]
            for locator, earlier, had_rows in self.pending_at[:-1]:
                if not had_rows:
                    yield Draft("system", f"transcript entry assistant.message: text joined into the reply at {last}",
                                locator, **earlier)
            yield Draft("assistant", "\n\n".join(self.pending), last, **columns)
        self.pending, self.pending_at, self.held = [], [], 0

    def rows(self, line: Line) -> Iterator[Draft]:
        """The rows of one envelope line."""
        kind, data = _text(line.value.get("type")), line.value.get("data")
        data = data if isinstance(data, dict) else {}
        columns = self.columns(line)
        if kind == "user.message":
            yield from self.flush()
            yield Draft("user", _text(data.get("content")), line.locator, **columns)
        elif kind == "assistant.message":
            yield from self._assistant(data, line, columns)
        elif kind == "tool.execution_complete":
            yield from self._complete(data, line, columns)
        elif kind == "session.start":
            self.session = _text(data.get("sessionId")) or self.session
            context = data.get("context")
            cwd = _text(context.get("cwd")) if isinstance(context, dict) else ""
            self.project = self.project or cwd
            columns.update(session_id=self.session, project_path=self.project)
            yield Draft("system", f"session start: cwd={cwd or '(none)'} copilot {_text(data.get('copilotVersion'))} "
                                  f"vscode {_text(data.get('vscodeVersion'))}", line.locator, **columns)
        elif kind in ("assistant.turn_start", "assistant.turn_end"):
            verb = "started" if kind.endswith("start") else "complete"
            yield Draft("system", f"turn {verb}: {_text(data.get('turnId'))}", line.locator, **columns)
        elif kind == "tool.execution_start":
            yield Draft("system", f"tool started: {_text(data.get('toolName'))} {_text(data.get('toolCallId'))}",
                        line.locator, tool_name=_text(data.get("toolName")),
                        tool_use_id=_text(data.get("toolCallId")), **columns)
        else:
            yield Draft("system", f"transcript entry {kind or '(no type)'}: {excerpt(_compact(data))}",
                        line.locator, **columns)

    def _assistant(self, data: dict, line: Line, columns: dict) -> Iterator[Draft]:
        reasoning = _text(data.get("reasoningText"))
        if reasoning.strip():
            yield Draft("thinking", reasoning, line.locator, **columns)
        content = _text(data.get("content")).strip()
        requests = data.get("toolRequests")
        calls = [request for request in requests if isinstance(request, dict)] if isinstance(requests, list) else []
        if content:
            yield from self._make_room(len(content) + MESSAGE_COST, line, columns)
            self.held += len(content) + MESSAGE_COST
            self.pending.append(content)
            self.pending_at.append((line.locator, columns, bool(reasoning.strip() or calls)))
        for request in calls:
            use = Draft("tool_use", _compact(request.get("arguments", "")), line.locator,
                        tool_name=_text(request.get("name")), tool_use_id=_text(request.get("toolCallId")), **columns)
            yield use
            self.ledger.called(use)
        if not content and not calls and not reasoning.strip():
            yield Draft("system", "transcript entry assistant.message: (empty)", line.locator, **columns)

    def _make_room(self, cost: int, line: Line, columns: dict) -> Iterator[Draft]:
        """Past PENDING_BUDGET, the reply held so far as its row and a ``parser:`` row at this line."""
        if not self.pending or self.held + cost <= PENDING_BUDGET:
            return
        held = self.held
        yield from self.flush()
        yield over_limit("assistant text of one request", f"{PENDING_BUDGET} characters held, each message counting "
                         f"{MESSAGE_COST} more; {held} held", "the reply before this line is its own assistant row, "
                         "and joining starts again here", line.locator, session_id=columns["session_id"],
                         project_path=columns["project_path"])

    def _complete(self, data: dict, line: Line, columns: dict) -> Iterator[Draft]:
        call_id = _text(data.get("toolCallId"))
        call = self.ledger.take(call_id)
        result = data.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        error = data.get("error")
        message = _text(error.get("message")) if isinstance(error, dict) else ""
        if content is not None:
            text = _compact(content)
        elif message:
            text = f"error: {message}"
        else:
            text = "succeeded" if data.get("success") is True else "failed"
        name = call.tool_name if call is not None else ""
        yield Draft("tool_result", text, line.locator, tool_name=name, tool_use_id=call_id, **columns)


def parse_hook_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """A hook transcript (secondary): user, assistant, tool rows as the session file gives them."""
    reader = TranscriptReader(ctx)
    yield from each_line(ctx, reader.rows)
    yield from reader.flush()
    yield from reader.ledger.orphans()
    yield from reader.ledger.over_limit_rows()
