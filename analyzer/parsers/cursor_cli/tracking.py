"""Cursor's AI-tracking database, ~/.cursor/ai-tracking/ai-code-tracking.db (shared with the editor).

Three of its tables ([obs], column names only) say what the agent did:

* ``conversation_summaries``: ``session: <title> (…; mode=…)`` and, where the summary has
  text, ``summary: <tldr> | <overview> | <bullets>`` rows, at ``updatedAt``, session =
  ``conversationId``, model = ``model``;
* ``ai_deleted_files``: ``file deleted by the agent: <gitPath> (…)`` at ``deletedAt``;
* ``scored_commits``: ``commit scored: <hash> | v1AiPercentage=… v2AiPercentage=… lines…
  | <message>`` at ``scoredAt``, branch = ``branchName``.

Times are Unix ms or ISO text with a zone (both are normalised; anything else is no
time). The per-line hashes (``ai_code_hashes``), ``tracked_file_content`` and
``tracking_state`` are not read: they hold code, not activity.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import plain, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

SOURCE = "from ai-code-tracking.db"
COMMIT_COUNTS = ("linesAdded", "linesDeleted", "composerLinesAdded", "composerLinesDeleted", "tabLinesAdded",
                 "tabLinesDeleted", "humanLinesAdded", "humanLinesDeleted", "blankLinesAdded", "blankLinesDeleted")


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else plain(value)


def _time(value) -> dict:
    """A row's time from a ms number or an ISO text with a zone; ``none`` for anything else."""
    moment = ns_from_iso(value) if isinstance(value, str) and not value.strip().isdigit() else ns_from_ms(value)
    return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none"}


def _rows(connection: sqlite3.Connection, table: str) -> Iterator[tuple[str, dict]]:
    """(locator, row) of a real table, the values too long to read left out with a row each."""
    if not sqlite_safe.is_real_table(connection, table):
        return
    for row in sqlite_safe.table_rows(connection, table, f"{table} rows"):
        yield f"sqlite:{table}:{row.get('_rowid')}", row


def _oversize(locator: str, row: dict) -> Iterator[Draft]:
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            row[column] = None


def _bullets(value) -> str:
    """summaryBullets: a JSON array of strings (as text), joined with ``; ``; other text as it is."""
    text = _text(value)
    if text.lstrip().startswith("["):
        try:
            items = decode_json(text)
            if isinstance(items, list):
                return "; ".join(item if isinstance(item, str) else setting_value(item) for item in items)
        except ValueError:
            pass
    return text


def _summary_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    for locator, row in _rows(connection, "conversation_summaries"):
        yield from _oversize(locator, row)
        base = {**_time(row.get("updatedAt")), "session_id": _text(row.get("conversationId")),
                "model": _text(row.get("model"))}
        mode = f"; mode={_text(row['mode'])}" if row.get("mode") not in (None, "") else ""
        yield Draft("system", f"session: {_text(row.get('title'))} ({SOURCE} conversation_summaries{mode})",
                    locator, **base)
        parts = [_text(row.get("tldr")), _text(row.get("overview")), _bullets(row.get("summaryBullets"))]
        if any(part.strip() for part in parts):
            yield Draft("system", "summary: " + " | ".join(part for part in parts if part.strip()),
                        f"{locator}/tldr", **base)


def _deleted_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    for locator, row in _rows(connection, "ai_deleted_files"):
        yield from _oversize(locator, row)
        session = _text(row.get("conversationId")) or _text(row.get("composerId"))
        yield Draft("system", f"file deleted by the agent: {_text(row.get('gitPath'))} ({SOURCE} ai_deleted_files)",
                    locator, session_id=session, model=_text(row.get("model")), **_time(row.get("deletedAt")))


def _commit_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    for locator, row in _rows(connection, "scored_commits"):
        yield from _oversize(locator, row)
        shares = " ".join(f"{key}={_text(row[key])}" for key in ("v1AiPercentage", "v2AiPercentage")
                          if row.get(key) not in (None, ""))
        counts = " ".join(f"{key}={_text(row[key])}" for key in COMMIT_COUNTS if row.get(key) not in (None, ""))
        message = _text(row.get("commitMessage")).strip()
        text = " | ".join(part for part in (_text(row.get("commitHash")), shares, counts, message) if part)
        yield Draft("system", f"commit scored: {text} ({SOURCE} scored_commits)", locator,
                    git_branch=_text(row.get("branchName")), **_time(row.get("scoredAt")))


def _tracking_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    tables = ("conversation_summaries", "ai_deleted_files", "scored_commits")
    if not any(sqlite_safe.is_real_table(connection, table) for table in tables):
        yield bad_file(f"{ctx.source.name}: none of the tables {', '.join(tables)}")
        return
    yield from _summary_rows(connection)
    yield from _deleted_rows(connection)
    yield from _commit_rows(connection)


def parse_ai_tracking(ctx: ParseContext) -> Iterator[Draft]:
    """ai-code-tracking.db: conversation summaries, files the agent deleted, commits with their AI share."""
    yield from each_database_row(ctx, lambda connection: _tracking_rows(ctx, connection))
