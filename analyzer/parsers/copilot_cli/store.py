"""session-store.db: the Copilot CLI's cross-session index (secondary; SQLite in WAL mode).

Schema 4 (npm @github/copilot 1.0.56 app.js ``ensureSchema``): ``sessions(id,
cwd, repository, host_type, branch, summary, created_at, updated_at)``,
``turns(session_id, turn_index, user_message, assistant_response, timestamp)``,
``checkpoints(session_id, checkpoint_number, title, overview, history,
work_done, technical_details, important_files, next_steps, created_at)``,
``session_files(session_id, file_path, tool_name, turn_index, first_seen_at)``,
``session_refs(session_id, ref_type, ref_value, turn_index, created_at)``,
``forge_trajectory_events`` and an FTS5 ``search_index`` (a virtual table: never
opened). Times are ``toISOString()`` text or SQLite's ``datetime('now')``
(both UTC). The CLI deletes nothing from these tables, so the prompts and
replies of a deleted session stay.

Rows: ``session: <summary> (cwd=…, repository=…, branch=…)`` per session
(workspace.yaml writes the same text); per turn a ``user`` and an ``assistant``
row written as events.jsonl writes them (a repeat is dropped by the run, a
turn of a deleted or rewound session stays); ``file touched:``,
``reference:`` and ``trajectory event`` rows always (events.jsonl has no such
record); checkpoints as ``compaction:`` rows only for a session whose
events.jsonl is not in the bundle (its compaction event holds the same summary).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

from .values import as_text, at, label, session_key
from .workspace import session_row_text

MAX_SESSIONS = 200_000  # sessions whose folder and branch are held for their turns' rows
SECTIONS = ("overview", "history", "work_done", "technical_details", "important_files", "next_steps")


def parse_session_store(ctx: ParseContext) -> Iterator[Draft]:
    """session-store.db: sessions, turns, checkpoints, touched files, references and trajectory events."""
    yield from each_database_row(ctx, lambda connection: _rows(ctx, connection))


def _logged_sessions(ctx: ParseContext) -> frozenset[str]:
    """Session ids whose events.jsonl is in the bundle (from paths; nothing is read)."""
    return ctx.cached(("copilot-events-sessions",), lambda: frozenset(
        session_key(source.path) for store in ("events", "events_xdg") for source in ctx.related(store)))


def _rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "sessions"):
        yield bad_file(f"{ctx.source.name}: no sessions table")
        return
    places: dict[str, tuple[str, str]] = {}
    yield from _session_rows(connection, places)
    logged = _logged_sessions(ctx)
    tables = (("turns", _turn_rows), ("checkpoints", lambda row, where: _checkpoint_rows(row, where, logged)),
              ("session_files", _file_rows), ("session_refs", _ref_rows), ("forge_trajectory_events", _event_rows))
    for table, rows in tables:
        if not sqlite_safe.is_real_table(connection, table):
            continue
        for row in sqlite_safe.table_rows(connection, table, f"{table} rows"):
            locator = f"sqlite:{table}:{as_text(row.get('_rowid'))}"
            if _oversize(row):
                yield bad_record(locator, f"value too long to read in {', '.join(_oversize(row))}")
                continue
            session = label(row.get("session_id"))
            cwd, branch = places.get(session, ("", ""))
            yield from rows(row, {"locator": locator, "session_id": session, "project_path": cwd, "git_branch": branch})


def _oversize(row: dict) -> list[str]:
    return [column for column, value in row.items() if isinstance(value, sqlite_safe.Oversize)]


def _session_rows(connection: sqlite3.Connection, places: dict[str, tuple[str, str]]) -> Iterator[Draft]:
    over: Draft | None = None
    for row in sqlite_safe.table_rows(connection, "sessions", "sessions rows"):
        locator = f"sqlite:sessions:{as_text(row.get('_rowid'))}"
        if _oversize(row):
            yield bad_record(locator, f"value too long to read in {', '.join(_oversize(row))}")
            continue
        session, cwd, branch = label(row.get("id")), as_text(row.get("cwd")), as_text(row.get("branch"))
        title = as_text(row.get("summary")) or "(untitled)"
        draft = Draft("system", session_row_text(title, cwd, as_text(row.get("repository")), branch),
                      f"{locator}/summary", session_id=session, project_path=cwd, git_branch=branch,
                      **at(row.get("updated_at") or row.get("created_at"), source="index"))
        if len(places) < MAX_SESSIONS:
            places[session] = (cwd, branch)
        elif over is None:
            over = draft
        yield draft
    if over is not None:
        yield over_limit("sessions", f"{MAX_SESSIONS} held with their folder and branch", "the turns and files of "
                         "the sessions after it carry no project_path or git_branch", over.locator)


def _turn_rows(row: dict, where: dict) -> Iterator[Draft]:
    locator = where.pop("locator")
    when = at(row.get("timestamp"))
    if row.get("user_message") is not None:
        yield Draft("user", as_text(row["user_message"]), f"{locator}/user_message", **where, **when)
    if row.get("assistant_response") is not None:
        yield Draft("assistant", as_text(row["assistant_response"]), f"{locator}/assistant_response", **where, **when)
    if row.get("user_message") is None and row.get("assistant_response") is None:
        yield Draft("system", f"turn {as_text(row.get('turn_index'))}: no prompt or reply recorded (session-store.db)",
                    locator, **where, **when)


def _checkpoint_rows(row: dict, where: dict, logged: frozenset[str]) -> Iterator[Draft]:
    if where["session_id"] in logged:
        return  # the session's compaction event holds the same summary
    locator = where.pop("locator")
    body = "\n".join(f"{section}: {as_text(row[section])}" for section in SECTIONS if row.get(section))
    yield Draft("system", f"compaction: checkpoint {as_text(row.get('checkpoint_number'))} "
                          f"{as_text(row.get('title'))} (session-store.db; the session's events.jsonl is not in the "
                          f"bundle)\n{body}", locator, **where, **at(row.get("created_at")))


def _file_rows(row: dict, where: dict) -> Iterator[Draft]:
    locator = where.pop("locator")
    yield Draft("system", f"file touched: {as_text(row.get('file_path'))} (tool={as_text(row.get('tool_name'))}, "
                          f"turn {as_text(row.get('turn_index'))}; session-store.db)", locator, **where,
                **at(row.get("first_seen_at")))


def _ref_rows(row: dict, where: dict) -> Iterator[Draft]:
    locator = where.pop("locator")
    yield Draft("system", f"reference: {as_text(row.get('ref_type'))} {as_text(row.get('ref_value'))} "
                          f"(turn {as_text(row.get('turn_index'))}; session-store.db)", locator, **where,
                **at(row.get("created_at")))


EVENT_FACTS = ("command", "exit_code", "event_key", "event_value", "turn_index")


def _event_rows(row: dict, where: dict) -> Iterator[Draft]:
    locator = where.pop("locator")
    known = ", ".join(f"{key}={as_text(row[key])}" for key in EVENT_FACTS if row.get(key) not in (None, ""))
    text = f"trajectory event {as_text(row.get('event_type'))}: {known}"
    if row.get("output") not in (None, ""):
        text = f"{text}\n{as_text(row['output'])}"
    yield Draft("system", text, locator, tool_use_id=label(row.get("tool_call_id")), **where,
                **at(row.get("created_at")))
