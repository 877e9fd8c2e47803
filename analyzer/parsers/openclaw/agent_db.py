"""``agents/<agentId>/agent/openclaw-agent.sqlite`` (agent schema 23): sessions, windows, transcripts and archives.

Read in this order, every table streamed (analyzer/view/sqlite_safe.py), the
copy read with its -wal applied so the newest rows are read:

* ``session_nodes``: a ``session:`` row per session key (title, creator,
  parent and spawner for sub-agent sessions, fork source, archive and pin
  times, and the shown keys of ``entry_json``);
* ``session_windows``: a ``session window:`` row per session id of a key
  (``reason``: initial, reset, rollover, fork, rewind, switch, recovery,
  compaction; the previous window; the model);
* ``transcript_events``: each session's events in ``seq`` order through the
  OpenClaw walk (walk.py). A row holds its event as ``event_json`` TEXT or as
  ``event_zstd``, a zstd frame of the same JSON; both are read (selecting
  ``event_json`` alone drops the compressed events), the frame within the
  bounds of blobs.py;
* ``session_transcript_archives``: the canonical archive of a deleted (or
  reset) session, kept in the database beside its ``*.jsonl.deleted.*`` file:
  a ``session deleted:`` row (and whether the blob still matches its recorded
  SHA-256), then the archived transcript through the walk;
* ``session_transcript_cold_archives``: a ``cold archive:`` row per session
  whose events moved to ``sessions/cold/<sha256>.jsonl.zst``; an archive
  embedded in the row (``storage: sqlite``, a backup's copy) is read as the
  file would be (files.ColdArchiveReader).

Times in these tables are epoch milliseconds (``created_at``, ``updated_at``).
Only the tables and columns named here are read: the credential tables
(``auth_profile_store``, ``auth_profile_state``, ``session_suggestions``,
the catalog's ``credential_tables``) never are.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json, decode_json_utf8
from aitrail.analyzer.view.rows import Draft, ns_from_ms

from . import blobs
from .files import ColdArchiveReader
from .settings import entry_details, entry_permission_rows, entry_title, ms_text
from .walk import DatabaseWalk

NODE_COLUMNS = ("session_key", "current_session_id", "entry_json", "updated_at", "status", "created_at",
                "created_via", "created_actor_type", "created_actor_id", "project_id", "parent_session_key",
                "spawned_by", "fork_source_session_key", "fork_source_session_id", "fork_source_entry_id", "label",
                "display_name", "category", "pinned_at", "archived_at", "last_interaction_at", "last_activity_at")
NODE_SHOWN = ("status", "created_via", "created_actor_type", "created_actor_id", "project_id", "parent_session_key",
              "spawned_by", "fork_source_session_key", "fork_source_session_id", "fork_source_entry_id", "category")
NODE_TIMES = ("pinned_at", "archived_at", "last_interaction_at", "last_activity_at", "updated_at")
WINDOW_COLUMNS = ("session_id", "session_key", "previous_session_id", "reason", "session_scope", "created_at",
                  "updated_at", "started_at", "ended_at", "status", "chat_type", "channel", "model_provider", "model",
                  "agent_harness_id", "parent_session_key", "spawned_by", "display_name")
WINDOW_SHOWN = ("session_key", "reason", "previous_session_id", "session_scope", "status", "chat_type", "channel",
                "model_provider", "agent_harness_id", "parent_session_key", "spawned_by", "display_name")
WINDOW_TIMES = ("started_at", "ended_at", "updated_at")
EVENT_COLUMNS = ("session_id", "seq", "event_json", "created_at", "event_zstd")
ARCHIVE_COLUMNS = ("session_id", "generation", "session_key", "reason", "encoding", "archive_blob", "archive_sha256",
                   "archive_name", "created_at", "published_at", "publish_attempts", "last_publish_error")
COLD_COLUMNS = ("session_id", "generation", "archive_name", "archive_sha256", "event_count", "raw_bytes",
                "archive_bytes", "last_seq", "archived_at", "storage", "archive_blob")
READ = ("session_nodes", "session_windows", "transcript_events", "session_transcript_archives",
        "session_transcript_cold_archives")


def text_of(value) -> str:
    """A column value as text ('' for NULL)."""
    return "" if value is None else value if isinstance(value, str) else setting_value(value)


def timed(value) -> dict:
    """Time columns from an epoch-ms column (untimed when it is not one)."""
    ns = ns_from_ms(value)
    return {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else {"timestamp_source": "none"}


class _State:
    """What outlives a failed query: the walk of the session being read, and the decompression budget."""

    def __init__(self) -> None:
        self.walk: DatabaseWalk | None = None
        self.budget = blobs.Budget()

    def close(self) -> Iterator[Draft]:
        """The end rows of the session being read, if any."""
        if self.walk is not None:
            walk, self.walk = self.walk, None
            yield from walk.finish()


def parse_agent_db(ctx: ParseContext) -> Iterator[Draft]:
    """openclaw-agent.sqlite: sessions, windows, every session's events, archives and cold archives."""
    state = _State()
    yield from each_database_row(ctx, lambda connection: _database_rows(ctx, connection, state))
    yield from state.close()  # also after a failed read: the session read so far still ends
    yield from state.budget.over_limit_rows()


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection, state: _State) -> Iterator[Draft]:
    tables = {name: sqlite_safe.is_real_table(connection, name) for name in READ}
    if not tables["transcript_events"] and not tables["session_nodes"]:
        yield bad_file(f"{ctx.source.name}: no transcript_events or session_nodes table")
        return
    if tables["session_nodes"]:
        for row in _table(connection, "session_nodes", NODE_COLUMNS, "ORDER BY coalesce(created_at, updated_at)"):
            yield from _node(row)
    if tables["session_windows"]:
        for row in _table(connection, "session_windows", WINDOW_COLUMNS, "ORDER BY created_at, session_id"):
            yield from _window(row)
    if tables["transcript_events"]:
        yield from _events(connection, state)
    if tables["session_transcript_archives"]:
        for row in _table(connection, "session_transcript_archives", ARCHIVE_COLUMNS, "ORDER BY created_at"):
            yield from _archive(row, state.budget)
    if tables["session_transcript_cold_archives"]:
        for row in _table(connection, "session_transcript_cold_archives", COLD_COLUMNS, "ORDER BY archived_at"):
            yield from _cold(row, state.budget)


def _table(connection: sqlite3.Connection, table: str, columns: tuple, order: str) -> Iterator[dict]:
    return sqlite_safe.table_rows(connection, table, f"{table} rows", columns, f"1 {order}")


def _details(row: dict, shown: tuple, times: tuple) -> list[str]:
    parts = [f"{key}={text_of(row[key])}" for key in shown if row.get(key) not in (None, "")]
    return parts + [f"{key}={ms_text(row[key])}" for key in times if row.get(key) is not None]


# -- sessions and windows ---------------------------------------------------------------------------------------


def _node(row: dict) -> Iterator[Draft]:
    where = f"sqlite:session_nodes:{row.get('_rowid')}"
    yield from oversize_rows(row, where)
    key, session_id = text_of(row.get("session_key")), text_of(row.get("current_session_id"))
    entry, problem = _json_object(row.get("entry_json"), f"{where}/entry_json")
    if problem is not None:
        yield problem
    title = text_of(row.get("display_name")) or text_of(row.get("label")) or entry_title(entry, key)
    parts = [f"key={key}", f"current session {session_id or '(none)'}", *_details(row, NODE_SHOWN, NODE_TIMES),
             *entry_details(entry)]
    times = timed(row.get("created_at") if row.get("created_at") is not None else row.get("updated_at"))
    yield Draft("system", f"session: {title} ({', '.join(parts)})", where, session_id=session_id, **times)
    yield from entry_permission_rows(entry, key, session_id, f"{where}/entry_json", times, "session_nodes")


def _window(row: dict) -> Iterator[Draft]:
    where = f"sqlite:session_windows:{row.get('_rowid')}"
    yield from oversize_rows(row, where)
    session_id, model = text_of(row.get("session_id")), text_of(row.get("model"))
    parts = _details(row, WINDOW_SHOWN, WINDOW_TIMES) + ([f"model={model}"] if model else [])
    yield Draft("system", f"session window: {session_id} ({', '.join(parts)})", where, session_id=session_id,
                model=model, **timed(row.get("created_at")))


def _json_object(value, locator: str) -> tuple[dict, Draft | None]:
    if value is None:
        return {}, None
    try:
        decoded = decode_json(value if isinstance(value, str) else bytes(value).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, TypeError) as exc:
        return {}, bad_record(locator, f"not JSON: {exc}", text_of(value)[:2000])
    if not isinstance(decoded, dict):
        return {}, bad_record(locator, f"a JSON {type(decoded).__name__}, not an object", text_of(value)[:2000])
    return decoded, None


# -- transcript events ------------------------------------------------------------------------------------------


def _events(connection: sqlite3.Connection, state: _State) -> Iterator[Draft]:
    """Every session's events in seq order, one walk per session id."""
    current = None
    for ordinal, row in enumerate(_table(connection, "transcript_events", EVENT_COLUMNS, "ORDER BY session_id, seq")):
        rowid = row.get("_rowid")
        number = rowid if isinstance(rowid, int) else ordinal
        where = f"sqlite:transcript_events:{rowid}"
        yield from oversize_rows(row, where)
        session_id = text_of(row.get("session_id"))
        if state.walk is None or session_id != current:
            yield from state.close()
            current = session_id
            state.walk = DatabaseWalk(session_id, lambda n: f"sqlite:transcript_events:{n}")
        line, problem = _event_line(row, number, where, state.budget)
        if problem is not None:
            yield problem
        if line is not None:
            state.walk.row_ns = ns_from_ms(row.get("created_at"))
            yield from state.walk.rows(line)
            state.walk.row_ns = None
    yield from state.close()


def _event_line(row: dict, number: int, where: str, budget: blobs.Budget) -> tuple[Line | None, Draft | None]:
    """The row's event as a decoded Line: from event_json, or from event_zstd decompressed within bounds."""
    text, frame = row.get("event_json"), row.get("event_zstd")
    if isinstance(text, (str, bytes)):
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    elif isinstance(frame, bytes):
        try:
            raw = budget.decompress(frame, blobs.EVENT_LIMIT, f"{where}/event_zstd")
        except blobs.Unreadable as exc:
            return None, bad_record(f"{where}/event_zstd", f"event_zstd: {exc}")
        if raw is None:
            return None, None  # over the database's budget: counted, one row at the end
    else:
        return None, bad_record(where, "neither event_json nor an event_zstd frame")
    try:
        value = decode_json_utf8(raw)
    except UnicodeDecodeError as not_utf8:
        return None, bad_record(where, f"not UTF-8 at byte {not_utf8.start}", raw)
    except ValueError as exc:
        return None, bad_record(where, f"invalid JSON: {exc}", raw)
    if not isinstance(value, dict):
        return None, bad_record(where, f"a JSON {type(value).__name__}, not an object", raw)
    line = Line(number, 0, raw, True)
    line.value, line.locator = value, where
    return line, None


# -- archives ---------------------------------------------------------------------------------------------------


def _archive(row: dict, budget: blobs.Budget) -> Iterator[Draft]:
    """A deleted or reset session's canonical archive: its row, then the archived transcript."""
    where = f"sqlite:session_transcript_archives:{row.get('_rowid')}"
    yield from oversize_rows(row, where)
    session_id, reason = text_of(row.get("session_id")), text_of(row.get("reason"))
    blob = row.get("archive_blob") if isinstance(row.get("archive_blob"), bytes) else None
    head = "session deleted" if reason == "deleted" else f"session archive ({reason or 'no reason'})"
    parts = [f"key={text_of(row.get('session_key'))}", f"archive {text_of(row.get('archive_name'))}",
             f"encoding {text_of(row.get('encoding'))}", _digest_words(blob, text_of(row.get("archive_sha256"))),
             _publication(row)]
    yield Draft("system", f"{head}: {session_id} ({', '.join(parts)})", where, session_id=session_id,
                **timed(row.get("created_at")))
    if blob is None:
        return
    content = blob
    if text_of(row.get("encoding")) == "zstd":
        try:
            content = budget.decompress(blob, blobs.ARCHIVE_LIMIT, f"{where}/archive_blob")
        except blobs.Unreadable as exc:
            yield bad_record(f"{where}/archive_blob", f"archive_blob: {exc}")
            return
    if content is not None:
        yield from _walk_document(content, session_id, f"{where}/archive_blob")


def _digest_words(blob: bytes | None, recorded: str) -> str:
    if blob is None:
        return "no archive blob"
    actual = hashlib.sha256(blob).hexdigest()
    return "blob matches its sha256" if actual == recorded.lower() else \
        f"blob sha256 {actual} does not match the recorded {recorded or '(none)'}"


def _publication(row: dict) -> str:
    if row.get("published_at") is not None:
        return f"file published {ms_text(row['published_at'])}"
    error = text_of(row.get("last_publish_error"))
    return (f"file not published ({text_of(row.get('publish_attempts')) or 0} attempts"
            + (f", last error: {error})" if error else ")"))


def _walk_document(content: bytes, session_id: str, prefix: str) -> Iterator[Draft]:
    walk = DatabaseWalk(session_id, lambda n: f"{prefix}/line:{n}", words="line", container="this archive")
    for item in blobs.document_lines(content, lambda n: f"{prefix}/line:{n}"):
        yield from walk.rows(item) if isinstance(item, Line) else (item,)
    yield from walk.finish()


def _cold(row: dict, budget: blobs.Budget) -> Iterator[Draft]:
    """A session whose events moved to a cold archive; an archive embedded in the row is read too."""
    where = f"sqlite:session_transcript_cold_archives:{row.get('_rowid')}"
    yield from oversize_rows(row, where)
    session_id, storage = text_of(row.get("session_id")), text_of(row.get("storage"))
    parts = [f"{text_of(row.get('event_count'))} events to seq {text_of(row.get('last_seq'))}",
             f"{text_of(row.get('raw_bytes'))} bytes, {text_of(row.get('archive_bytes'))} compressed",
             f"sha256 {text_of(row.get('archive_sha256'))}", f"generation {text_of(row.get('generation'))}",
             f"storage {storage}"]
    yield Draft("system", f"cold archive: session {session_id} moved to sessions/cold/"
                          f"{text_of(row.get('archive_name'))} ({', '.join(parts)})", where, session_id=session_id,
                **timed(row.get("archived_at")))
    blob = row.get("archive_blob")
    if not isinstance(blob, bytes):
        return
    prefix = f"{where}/archive_blob"
    try:
        content = budget.decompress(blob, blobs.ARCHIVE_LIMIT, prefix)
    except blobs.Unreadable as exc:
        yield bad_record(prefix, f"archive_blob: {exc}")
        return
    if content is None:
        return
    reader = ColdArchiveReader(lambda sid: DatabaseWalk(sid, lambda n: f"{prefix}/line:{n}", words="line",
                                                        container="this archive"))
    for item in blobs.document_lines(content, lambda n: f"{prefix}/line:{n}"):
        yield from reader.rows(item) if isinstance(item, Line) else (item,)
    yield from reader.finish()
