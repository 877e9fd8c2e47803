"""The context-mode extension's per-project SQLite: hook events that outlive the session files.

context-mode (mksglu/context-mode, src/session/db.ts) keeps
``~/.pi/context-mode/sessions/<sha256(project)[:16]>[__<worktree>].db`` with
``session_events`` (one row per captured hook event: type, category,
priority, data, project_dir, source_hook, created_at), ``session_meta`` (per
session: project_dir, started_at, event_count, compact_count),
``session_resume`` (the snapshot handed to a resumed session) and
``tool_calls`` (per-tool call counts). Every row here is a ``system`` row of a
secondary store. ``created_at``/``started_at`` are SQLite ``datetime('now')``
values, which SQLite defines as UTC; they are read as UTC for that reason.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

TABLES = ("session_meta", "session_events", "session_resume", "tool_calls")


def sqlite_utc_ns(value) -> int | None:
    """A SQLite ``datetime('now')`` text (``YYYY-MM-DD HH:MM:SS``, UTC by SQLite's definition) to ns."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.strptime(value.strip()[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(moment.timestamp()) * 1_000_000_000


def text_of(value) -> str:
    """A column value as text (an Oversize as its length)."""
    if isinstance(value, sqlite_safe.Oversize):
        return f"<{value.describe()}>"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def when(value) -> dict:
    """The time columns for a ``datetime('now')`` column value."""
    ns = sqlite_utc_ns(value)
    return {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else {"timestamp_source": "none"}


def row_text(table: str, row: dict) -> str:
    """The text of one row of a context-mode table."""
    if table == "session_events":
        return (f"context-mode event {text_of(row.get('type'))} ({text_of(row.get('category'))}, "
                f"hook {text_of(row.get('source_hook'))}): {text_of(row.get('data'))}")
    if table == "session_meta":
        return (f"context-mode session: {text_of(row.get('event_count'))} events, "
                f"{text_of(row.get('compact_count'))} compactions, last event {text_of(row.get('last_event_at'))}")
    if table == "session_resume":
        return (f"context-mode resume snapshot ({text_of(row.get('event_count'))} events, "
                f"consumed={text_of(row.get('consumed'))}): {text_of(row.get('snapshot'))}")
    return (f"context-mode tool calls: {text_of(row.get('tool'))} called {text_of(row.get('calls'))} times, "
            f"{text_of(row.get('bytes_returned'))} bytes returned")


TIME_COLUMN = {"session_events": "created_at", "session_meta": "started_at", "session_resume": "created_at",
               "tool_calls": "updated_at"}


def table_drafts(connection: sqlite3.Connection, table: str) -> Iterator[Draft]:
    """The rows of one table, streamed, in rowid order."""
    for row in sqlite_safe.table_rows(connection, table, f"{table} rows"):
        locator = f"sqlite:{table}:{text_of(row.get('_rowid'))}"
        for column, value in row.items():
            if isinstance(value, sqlite_safe.Oversize):
                yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
        yield Draft("system", row_text(table, row), locator, session_id=text_of(row.get("session_id")),
                    project_path=text_of(row.get("project_dir")), **when(row.get(TIME_COLUMN[table])))


def parse_context_mode_db(ctx: ParseContext) -> Iterator[Draft]:
    """A context-mode session database: one ``system`` row per row of its four tables."""

    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        present = [table for table in TABLES if sqlite_safe.is_real_table(connection, table)]
        if not present:
            yield bad_file(f"{ctx.source.name}: none of the context-mode tables ({', '.join(TABLES)})")
        for table in present:
            yield from table_drafts(connection, table)

    yield from each_database_row(ctx, rows)
