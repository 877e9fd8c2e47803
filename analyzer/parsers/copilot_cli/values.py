"""Small helpers of the Copilot CLI modules: times, where a file sits (and the JSON text helpers, re-exported).

A session's files live in ``session-state/<session id>/``; the session id of a
file is that directory's name, taken from the member's path.
"""

from __future__ import annotations

import re

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.json_values import as_text, compact, facts, label, mapping
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import ns_from_iso

SESSION_DIR = "session-state"
# SQLite's datetime('now') text: UTC by SQLite's definition, the DEFAULT of the CLI's time columns
_SQLITE_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


def session_of(ctx: ParseContext) -> str:
    """The session directory name of a file under ``session-state/<id>/`` ('' otherwise)."""
    return session_key(ctx.source.path)


def session_key(path: str) -> str:
    """The session directory name in a member path (the part after the last ``session-state``)."""
    parts = path.split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == SESSION_DIR:
            return parts[index + 1]
    return ""


def stored_time(value) -> int | None:
    """A time the CLI wrote: ISO 8601 with a zone, or SQLite's ``YYYY-MM-DD HH:MM:SS`` (UTC); None otherwise.

    The second form is what SQLite's ``datetime('now')`` writes, the DEFAULT of
    every time column of session-store.db and session.db: UTC by SQLite's
    definition. Any other text without a zone is not a time.
    """
    if not isinstance(value, str):
        return None
    if _SQLITE_UTC.match(value):
        return ns_from_iso(f"{value[:10]}T{value[11:]}Z")
    return ns_from_iso(value)


def at(value, ctx: ParseContext | None = None, source: str = "record") -> dict:
    """Time columns for a stored time; the file's mtime (or none) when the value is not a time."""
    moment = stored_time(value)
    if moment is not None:
        return {"timestamp_ns": moment, "timestamp_source": source}
    if ctx is not None:
        return file_mtime(ctx)
    return {"timestamp_ns": None, "timestamp_source": "none"}


__all__ = ["SESSION_DIR", "as_text", "at", "compact", "facts", "label", "mapping", "session_key", "session_of",
           "stored_time"]
