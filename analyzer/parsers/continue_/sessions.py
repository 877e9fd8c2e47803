"""Continue session files and their index: sessions/<sessionId>.json, sessions/sessions.json.

The walk is the shared one (formats/continue_sessions.py), in Continue's stores
``sessions`` and ``session_index``; it tells the generations apart by key
presence (no tool fields, ``toolCallState``, ``toolCallStates``).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import continue_sessions as walk
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_session(ctx: ParseContext) -> Iterator[Draft]:
    """A session file (~/.continue/sessions/<id>.json): one row per history message, call and result.

    Rows take the session's ``dateCreated`` from sessions.json (``index`` time; none
    when the session is not listed), a reasoning block its own ``startAt``; tool calls
    are ``tool_use`` rows joined by id to the ``role: "tool"`` items that answer them.
    """
    yield from walk.read_session(ctx, index_store="session_index")


def parse_session_index(ctx: ParseContext) -> Iterator[Draft]:
    """sessions.json: bad entries, and a ``session:`` row per entry whose file is not in the bundle."""
    yield from walk.unlisted_sessions(ctx, sessions_store="sessions")
