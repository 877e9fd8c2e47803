"""The events.jsonl parser: every line's event through the handlers of events.py and events_session.py."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from . import events, events_session

HANDLERS = {**events.HANDLERS, **events_session.HANDLERS}


def parse_events(ctx: ParseContext) -> Iterator[Draft]:
    """session-state/<id>/events.jsonl: the rows of each event in order, calls joined to results by toolCallId."""
    session = events.Session(ctx)
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            yield from events.event_rows(session, line, HANDLERS)
        else:
            yield line
    yield from session.limit_rows()
