"""sessions/sessions.db (Goose 1.10+, schema versions 1 to 13): sessions, messages, thread copies.

[src] block/goose@865e4a030a crates/goose/src/session/storage.rs (``create_schema``,
``get_conversation``, ``delete_session``, ``replace_conversation_inner``) and
migrations.rs (v2 user_recipe_values_json, v3 messages.metadata_json, v4 name,
v5 session_type, v6 provider_name and model_config_json, v7 message_id, v8
goose_mode, v10 thread_id, threads and thread_messages, v12 archived_at and
project_id, v13 accumulated_cost). Every column is optional here: a database
of any version is read with the columns it has.

Walked by ``formats/sqlite_chat.py``: sessions by creation, then messages by
session, ``created_timestamp`` (Unix seconds) and id, as Goose reads them
back; the -wal is applied, so messages not yet checkpointed are read. Then
``threads`` and ``thread_messages`` (v10): a thread message is a copy of a
conversation message and may outlive its session (``delete_session`` removes
only ``messages`` and ``sessions`` rows). A copy whose ``message_id`` is still
in ``messages`` gives no row (one indexed probe); the others are the only
record left of their message and give its rows, marked ``origin=secondary``.
The provider inventory tables (v11) hold no activity and are not read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.sqlite_chat import (
    ChatTables,
    HeldSessions,
    SessionFacts,
    as_text,
    ns_from_sqlite_text,
    real_table_rows,
    walk_chat_store,
)
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_seconds

from .content import message_rows
from .sessions import session_rows

# message ids held (as hashes) when messages has no index on them, to tell a copy from a lost message
MAX_HELD_IDS = 1_000_000
TABLES = ChatTables(sessions="sessions", session_id="id", session_order="created_at, id", messages="messages",
                    message_session="session_id", message_order="session_id, created_timestamp, id")


def parse_sessions_db(ctx: ParseContext) -> Iterator[Draft]:
    """sessions.db with its -wal: each session's rows, its messages' rows, then the thread copies (secondary)."""
    yield from walk_chat_store(ctx, TABLES, session_rows, _message, _threads)


def decoded(row: dict, column: str, locator: str) -> tuple[object, Draft | None]:
    """A JSON column's value (None when empty), or the ``parser: unparseable record`` row when it is not JSON."""
    raw = row.get(column)
    if raw is None or raw == "":
        return None, None
    text = as_text(raw)
    try:
        return decode_json(text), None
    except ValueError as exc:
        return None, bad_record(f"{locator}/{column}", f"{column} is not JSON: {exc}", text)


def _message(row: dict, locator: str, facts: SessionFacts, ledger: BoundedLedger, origin: str | None = None
             ) -> Iterator[Draft]:
    """One messages (or thread_messages) row: its content blocks' rows at the message's time."""
    content, problem = decoded(row, "content_json", locator)
    if problem is not None:
        yield problem
        return
    metadata, _ = decoded(row, "metadata_json", locator)  # Goose itself ignores metadata it cannot read
    moment = ns_from_seconds(row.get("created_timestamp"))
    if moment is None:  # no created time: the row's insert time (SQLite UTC text), if any
        moment = ns_from_sqlite_text(row.get("timestamp"))
    base = {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none",
            "origin": origin, **facts.columns()}
    message = {"role": as_text(row.get("role")), "content": content, "metadata": as_dict(metadata)}
    yield from message_rows(message, f"{locator}/content_json", base, ledger, unpaired_rows=origin is None)


def _threads(connection: sqlite3.Connection) -> Iterator[Draft]:
    """Schema v10+: a ``thread:`` row per thread, then the thread_messages copies as secondary rows."""
    threads = HeldSessions()  # thread id -> its working directory, for the copies' project_path
    for row in real_table_rows(connection, "threads", "created_at, id"):
        locator = f"sqlite:threads:{as_text(row.get('_rowid'))}"
        yield from oversize_rows(row, locator)
        threads.add(SessionFacts(as_text(row.get("id")), project_path=as_text(row.get("working_dir"))), locator)
        yield _thread_row(row, locator)
    yield from threads.over_limit_rows()
    # The copies' calls are paired with their results by id, one thread at a time; a copy left
    # unpaired says nothing of the conversation (a thread may hold only part of a session), so the
    # ledger's open calls are dropped, never reported, and a result without its call gets no row.
    current: object = None
    ledger = BoundedLedger()
    originals = _originals(connection)
    for row in real_table_rows(connection, "thread_messages", "thread_id, created_timestamp, id"):
        locator = f"sqlite:thread_messages:{as_text(row.get('_rowid'))}"
        yield from oversize_rows(row, locator)
        if originals(as_text(row.get("message_id"))):
            continue  # the message itself is in messages and gave its rows there
        thread = as_text(row.get("thread_id"))
        if thread != current:
            ledger, current = BoundedLedger(), thread
        facts = SessionFacts(as_text(row.get("session_id")) or thread, threads.get(thread).project_path)
        yield from _message(row, locator, facts, ledger, origin="secondary")


def _originals(connection: sqlite3.Connection) -> Callable[[str], bool]:
    """A test: is a message with this message_id still in ``messages``?

    With an index on ``message_id`` (every Goose database since schema v7) each
    copy costs one indexed probe. Without one (a database altered by hand) a probe
    would scan the table for every copy, so the ids are read once instead, as
    hashes, at most MAX_HELD_IDS of them; past that a copy counts as gone (its
    rows are given, marked secondary: a repeat, never a loss).
    """
    if not sqlite_safe.is_real_table(connection, "messages") or \
            "message_id" not in sqlite_safe.stored_columns(connection, "messages"):
        return lambda message_id: False
    if _indexed(connection):
        return lambda message_id: bool(message_id) and _probe(connection, message_id)
    held: set[int] = set()
    for row in sqlite_safe.table_rows(connection, "messages", "messages message_id", ("message_id",)):
        if len(held) >= MAX_HELD_IDS:
            break
        held.add(hash(as_text(row.get("message_id"))))
    return lambda message_id: bool(message_id) and hash(message_id) in held


def _indexed(connection: sqlite3.Connection) -> bool:
    """Whether an index of ``messages`` begins with ``message_id``."""
    for index in sqlite_safe.rows(connection, "SELECT name FROM pragma_index_list('messages')", (),
                                  "messages indexes"):
        first = connection.execute("SELECT name FROM pragma_index_info(?) WHERE seqno = 0", (index[0],)).fetchone()
        if first is not None and first[0] == "message_id":
            return True
    return False


def _probe(connection: sqlite3.Connection, message_id: str) -> bool:
    probe = sqlite_safe.rows(connection, "SELECT 1 FROM messages WHERE message_id = ? LIMIT 1", (message_id,),
                             "messages message_id")
    try:
        return next(probe, None) is not None
    finally:
        probe.close()


def _thread_row(row: dict, locator: str) -> Draft:
    facts = {key: as_text(row.get(key)) for key in ("id", "working_dir", "updated_at", "archived_at")
             if row.get(key) not in (None, "")}
    moment = ns_from_sqlite_text(row.get("created_at"))
    text = f"thread: {as_text(row.get('name'))} ({', '.join(f'{k}={v}' for k, v in facts.items())})"
    metadata = as_text(row.get("metadata_json"))
    if metadata not in ("", "{}"):
        text += f" metadata={excerpt(metadata)}"
    return Draft("system", text, locator, timestamp_ns=moment,
                 timestamp_source="record" if moment is not None else "none",
                 project_path=as_text(row.get("working_dir")))
