"""state.db (Hermes Agent, schema version 22): sessions, messages, model usage, async delegations.

[src] pypi hermes-agent 0.19.0 ``hermes_state.py`` ``SCHEMA_SQL`` and the
writers named in messages.py. Walked by ``formats/sqlite_chat.py``: sessions
by ``started_at`` (REAL Unix seconds), then messages by session,
``timestamp`` (REAL Unix seconds) and id; the -wal is applied, so messages not
yet checkpointed are read (Hermes keeps the database in WAL mode, DELETE
journal on network file systems). Then ``session_model_usage`` (token counts
per model) and ``async_delegations`` (background sub-agent tasks).

Not read: ``messages_fts`` and ``messages_fts_trigram`` (FTS5 indexes of
``content || tool_name || tool_calls``, kept in step with ``messages`` by
triggers, deletes included: they hold no text ``messages`` does not, and
reading them would double every row), ``api_content`` (the prompt as sent,
with Hermes' injected memory and plugin context), ``reasoning_details`` and
the ``codex_*`` items (provider-shaped, possibly encrypted, copies of the
reasoning), ``gateway_routing``, ``compression_locks``, ``state_meta``.

Compaction keeps the summarised messages (``active=0, compacted=1``,
``archive_and_compact``): they give their rows as they are (so a snapshot or
history copy of them is still recognised), and the first active message after
them is preceded by a ``compaction:`` row. A message taken back by /rewind or
/undo (``active=0, compacted=0``, ``rewind_to``) is followed by a ``rewound:``
row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.sqlite_chat import SessionFacts, as_text, real_table_rows, walk_chat_store
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_seconds

from .messages import message_rows
from .sessions import TABLES, session_rows

USAGE_COUNTS = ("api_call_count", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                "reasoning_tokens", "estimated_cost_usd", "actual_cost_usd")


def parse_state_db(ctx: ParseContext) -> Iterator[Draft]:
    """state.db with its -wal: each session's rows, its messages' rows, model usage and delegations."""
    walk = _Walk()
    yield from walk_chat_store(ctx, TABLES, session_rows, walk.message, _more)


def at_seconds(value) -> dict:
    """The time columns of a REAL Unix-seconds value (untimed when it is not one)."""
    moment = ns_from_seconds(value)
    return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none"}


class _Walk:
    """The message callback, remembering per session whether the previous message was compacted away."""

    def __init__(self) -> None:
        self.ledger: BoundedLedger | None = None  # the walk gives a new ledger for each session
        self.after_compacted = False

    def message(self, row: dict, locator: str, facts: SessionFacts, ledger: BoundedLedger) -> Iterator[Draft]:
        """One messages row's rows, with a ``compaction:`` row before the first active message after a compaction."""
        if ledger is not self.ledger:
            self.ledger, self.after_compacted = ledger, False
        base = {**at_seconds(row.get("timestamp")), **facts.columns()}
        inactive = row.get("active") in (0, False)
        compacted = inactive and row.get("compacted") in (1, True)
        if self.after_compacted and not inactive:
            yield Draft("system", "compaction: the messages before this one were summarised away (kept in "
                                  "state.db with active=0, compacted=1)", locator, **base)
        self.after_compacted = compacted
        yield from message_rows(row, locator, base, ledger)
        if inactive and not compacted:
            yield Draft("system", "rewound: this message was taken back by /rewind or /undo (kept in state.db "
                                  "with active=0)", locator, **base)


def _more(connection: sqlite3.Connection) -> Iterator[Draft]:
    for row in real_table_rows(connection, "session_model_usage", "session_id, first_seen, model"):
        locator = f"sqlite:session_model_usage:{as_text(row.get('_rowid'))}"
        yield from oversize_rows(row, locator)
        yield _usage_row(row, locator)
    for row in real_table_rows(connection, "async_delegations", "dispatched_at, delegation_id"):
        locator = f"sqlite:async_delegations:{as_text(row.get('_rowid'))}"
        yield from oversize_rows(row, locator)
        yield from _delegation_rows(row, locator)


def _usage_row(row: dict, locator: str) -> Draft:
    """A model's token counts and cost in one session (and task), at the last time it was used."""
    model = as_text(row.get("model"))
    counts = " ".join(f"{key}={as_text(row.get(key))}" for key in USAGE_COUNTS if row.get(key) not in (None, ""))
    facts = [f"{key}={as_text(row[key])}" for key in ("billing_provider", "task", "cost_status")
             if row.get(key) not in (None, "")]
    suffix = f"; {', '.join(facts)}" if facts else ""
    when = row.get("last_seen") if row.get("last_seen") is not None else row.get("first_seen")
    return Draft("system", f"tokens generated: model={model} {counts} (from session_model_usage{suffix})", locator,
                 session_id=as_text(row.get("session_id")), model=model, **at_seconds(when))


def _delegation_rows(row: dict, locator: str) -> Iterator[Draft]:
    """A background sub-agent task: what was delegated, when, and (once done) its result."""
    session = as_text(row.get("parent_session_id")) or as_text(row.get("origin_session"))
    state = as_text(row.get("state"))
    yield Draft("system", f"delegation: {as_text(row.get('delegation_id'))} state={state} (origin session "
                          f"{as_text(row.get('origin_session'))}): {as_text(row.get('task_json'))}",
                f"{locator}/task_json", session_id=session, **at_seconds(row.get("dispatched_at")))
    if row.get("result_json") not in (None, ""):
        yield Draft("system", f"delegation result: {as_text(row.get('result_json'))}", f"{locator}/result_json",
                    session_id=session, **at_seconds(row.get("completed_at")))
