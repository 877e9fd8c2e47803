"""``history.jsonl`` of the ``agy`` CLI: one line per prompt typed, across conversations.

Record [obs: three third-party readers of agy 1.x, index copies, repository
unresolved; the research marks the shape unconfirmed]: ``{display, timestamp,
workspace, conversationId}``, ``timestamp`` in epoch milliseconds. Each line
with ``display`` text is a user row (the store is secondary: a prompt its
transcript also holds adds no row) in its conversation and workspace; a
``timestamp`` given as RFC 3339 text is read as such; a line without
``display`` text is a ``parser:`` row (the shape this parser knows is not there).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

from .project import uri_path


def _time(value: object) -> int | None:
    if isinstance(value, str):
        return ns_from_iso(value)
    return None if isinstance(value, bool) else ns_from_ms(value)


def _prompt_row(line: Line) -> Iterator[Draft]:
    record = line.value
    text = record.get("display")
    if not isinstance(text, str) or not text:
        yield bad_line(line.number, "no display text", line.raw)
        return
    when = _time(record.get("timestamp"))
    conversation = record.get("conversationId")
    yield Draft("user", text, line.locator, timestamp_ns=when, timestamp_source="record" if when else "none",
                session_id=conversation if isinstance(conversation, str) else "",
                project_path=uri_path(record.get("workspace")))


def parse_history(ctx: ParseContext) -> Iterator[Draft]:
    """A user row per prompt line of history.jsonl (see the module docstring)."""
    yield from each_line(ctx, _prompt_row)
