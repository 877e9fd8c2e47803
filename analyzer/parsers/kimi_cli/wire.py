"""wire.jsonl: a Kimi CLI session's event log, with a float-seconds time on every record.

A metadata line ``{"type": "metadata", "protocol_version"}`` (absent before
protocol 1.10: such files are protocol 1.1), then one record per merged wire
message: ``{"timestamp": <time.time()>, "message": {"type": <class name>,
"payload": {...}}}`` (wire/file.py:18-40,117-131; wire/types.py:634-660). Only
complete (merged) messages are written, never stream deltas
(wire/__init__.py:18-33). Each record is timed by its own ``timestamp``, read as
the decimal written (formats/float_seconds.py), ``record``.

A sub-agent's events reach the parent's log wrapped in ``SubagentEvent``
records; each sub-agent gets a stream of its own (its calls joined apart from
the parent's), and its rows read exactly as its own wire.jsonl (a secondary
store) would give them, so the two copies are one row. The row rules per message
type are in wire_events.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.float_seconds import ns_from_float_seconds
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

from .paths import place_of, work_dir_of

MAX_STREAMS = 10_000  # sub-agent streams of one wire log (each holds its own call ledger)
MAX_REQUESTS = 100_000  # approval requests held to join their answers to their calls


class Stream:
    """One agent's events in a wire log: the session columns, its open calls and its approval requests."""

    def __init__(self, columns: dict, subagent: bool):
        self.columns = columns
        self.subagent = subagent  # a sub-agent's events: its first prompt was written by the parent
        self.calls = BoundedLedger()
        self.requests: dict[str, tuple[str, str]] = {}  # request id -> (tool_call_id, sender)
        self.requests_over = False

    def row(self, turn_type: str, text: str, locator: str, when: dict, **columns) -> Draft:
        """A row of this stream at ``locator`` and time ``when``."""
        return Draft(turn_type, text, locator, **self.columns, **when, **columns)

    def closing_rows(self) -> Iterator[Draft]:
        """The calls never answered, and the limits reached."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()


def parse_wire(ctx: ParseContext) -> Iterator[Draft]:
    """sessions/<md5>/<id>/[subagents/<agent>/]wire.jsonl: rows per record, timed by its float-seconds time."""
    from .wire_events import message_rows  # the handlers use Stream: imported here, no cycle at import time

    place = place_of(ctx.source.path)
    columns = {"session_id": place.session_id, "project_path": work_dir_of(ctx, place.bucket)}
    top = Stream(columns, subagent=bool(place.subagent))
    nested: dict[str, Stream] = {}
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            line.session_id = place.session_id
            yield line
            continue
        record = line.value
        if record.get("type") == "metadata" and "message" not in record:
            yield top.row("system", f"wire metadata: protocol_version={as_text(record.get('protocol_version'))}",
                          line.locator, {"timestamp_source": "none"})
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            yield _no_message(line, place.session_id)
            continue
        when = _when(record)
        if when["timestamp_source"] == "none":
            yield _untimed(line, record, place.session_id)
        yield from message_rows(top, message, line.locator, when, nested)
    yield from top.closing_rows()
    for stream in nested.values():
        yield from stream.closing_rows()


def nested_stream(nested: dict[str, Stream], top: Stream, key: str) -> Stream | None:
    """The stream of one sub-agent in the parent's log (None past MAX_STREAMS: its events are rows, unjoined)."""
    stream = nested.get(key)
    if stream is None and len(nested) < MAX_STREAMS:
        stream = nested[key] = Stream(top.columns, subagent=True)
    return stream


def remember_request(stream: Stream, request_id: str, call_id: str, sender: str, locator: str) -> Iterator[Draft]:
    """Hold an approval request's call id for its answer; one row when the budget is reached."""
    if not request_id:
        return
    if len(stream.requests) >= MAX_REQUESTS:
        if not stream.requests_over:
            stream.requests_over = True
            yield over_limit("approval requests", f"{MAX_REQUESTS} held to join their answers", "later answers "
                             "are not joined to their calls", locator, session_id=stream.columns["session_id"])
        return
    stream.requests[request_id] = (call_id, sender)


def _when(record: dict) -> dict:
    moment = ns_from_float_seconds(record.get("timestamp"))
    return {"timestamp_ns": moment, "timestamp_source": "record"} if moment is not None else \
        {"timestamp_source": "none"}


def _untimed(line: Line, record: dict, session_id: str) -> Draft:
    """The row saying a record's ``timestamp`` is missing or not Unix seconds (its rows are then untimed)."""
    shown = excerpt(as_text(record.get("timestamp")), 80) if "timestamp" in record else "missing"
    return Draft("system", f"parser: unparseable record (timestamp is not Unix seconds: {shown}); the record's rows "
                           "are untimed", line.locator, session_id=session_id, timestamp_source="none")


def _no_message(line: Line, session_id: str) -> Draft:
    row = bad_line(line.number, "a wire record without a message object", line.raw)
    row.session_id = session_id
    return row


def key_of(payload: dict) -> str:
    """The sub-agent a SubagentEvent belongs to: its agent id, else the parent's call id (legacy task_tool_call_id)."""
    return (label(payload.get("agent_id")) or label(payload.get("parent_tool_call_id"))
            or label(payload.get("task_tool_call_id")))
