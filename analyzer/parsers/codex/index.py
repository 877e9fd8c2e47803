"""Codex side records of past use: prompt history, thread names, and the state database.

* ``history.jsonl`` (secondary): ``{"session_id": "<uuid>", "ts": <Unix s>, "text": "<prompt>"}``,
  one line per prompt of every thread; the TypeScript CLI's ``history.json`` is an
  array of ``{"command": "<prompt>", "timestamp": <ms>}``. Their user rows carry
  the prompt exactly as the rollout's user row does, so a prompt whose rollout
  survives is dropped by the run's dedup and a prompt of a lost rollout stays.
* ``session_index.jsonl``: ``{"id", "thread_name", "updated_at"}``, append-only renames.
* ``state_5.sqlite`` (secondary): the ``threads`` index (title, cwd, model, approval
  mode, sandbox policy, first prompt, rollout path) and ``thread_spawn_edges``.

A thread whose rollout is in the bundle is told by the rollout; these stores add a
``session:`` row (and its settings) only for threads whose rollout is not.

References: openai/codex@ed6e5cf919 codex-rs/message-history/src/lib.rs:1-15,46-60,189-262;
codex-rs/rollout/src/session_index.rs:17-53; codex-rs/state/src/extract.rs:44-125;
codex-rs/state/migrations/0001_threads.sql, 0021_thread_spawn_edges.sql, 0025_thread_timestamps_millis.sql;
openai/codex@75febbdefa codex-cli/src/utils/storage/command-history.ts:7-31,98
(research/formats-cli-agents.md 2.5, 2.6).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.jsonl import Line, each_line, read_jsonl
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, json_document
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import (
    Draft,
    format_timestamp,
    ns_from_iso,
    ns_from_ms,
    ns_from_seconds,
    over_limit,
)

from .items import as_text, json_value
from .rollout import thread_id_from_name

ROLLOUT_STORES = ("rollouts", "rollouts_compressed", "archived_rollouts", "archived_rollouts_compressed",
                  "rollouts_untagged_flat", "rollouts_legacy_json")
# Child thread ids held to date the edge rows by their child's creation (estimated bytes: each id's
# characters and ID_COST); a real state database has hundreds of threads.
MAX_CHILD_BYTES = 64 * 1024 * 1024
ID_COST = 128  # an id's set and dict slots, besides its characters
STATE_FIELDS = ("rollout_path", "source", "cli_version", "thread_source", "agent_nickname", "agent_role",
                "git_sha", "git_origin_url", "archived")


def rollout_ids(ctx: ParseContext) -> frozenset[str]:
    """Thread ids of every rollout in the bundle (from file names; nothing is read)."""
    def load() -> frozenset[str]:
        ids = {thread_id_from_name(source.name) for store in ROLLOUT_STORES for source in ctx.related(store)}
        return frozenset(ids - {""})

    return ctx.cached(("codex-rollout-ids",), load)


# -- history.jsonl and history.json ------------------------------------------------------------


def parse_history(ctx: ParseContext) -> Iterator[Draft]:
    """history.jsonl (secondary): one user row per prompt, at its ``ts`` (seconds), with its session id."""
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        text = line.value.get("text")
        if not isinstance(text, str):
            yield bad_line(line.number, "no prompt text", line.raw)
            continue
        session_id = line.value.get("session_id", line.value.get("conversation_id"))
        yield Draft("user", text, line.locator, timestamp_ns=ns_from_seconds(line.value.get("ts")),
                    session_id=as_text(session_id))


def parse_history_legacy_json(ctx: ParseContext) -> Iterator[Draft]:
    """The TypeScript CLI's history.json: one user row per ``command``, at its ``timestamp`` (ms)."""
    entries, problem = json_document(ctx.data, "history.json", list)
    if problem is not None:
        yield problem
        return
    for position, entry in enumerate(entries):
        locator = f"json:/{position}"
        command = entry.get("command") if isinstance(entry, dict) else None
        if not isinstance(command, str):
            yield bad_record(locator, "history entry without a command", json.dumps(entry)[:2000])
            continue
        yield Draft("user", command, locator, timestamp_ns=ns_from_ms(entry.get("timestamp")))


# -- session_index.jsonl -----------------------------------------------------------------------


def parse_session_index(ctx: ParseContext) -> Iterator[Draft]:
    """session_index.jsonl: a thread's name, or a ``session:`` row when its rollout is not in the bundle."""
    known = rollout_ids(ctx)
    yield from each_line(ctx, lambda line: _thread_name_row(line, known))


def _thread_name_row(line: Line, known: frozenset[str]) -> Iterator[Draft]:
    thread_id, name = line.value.get("id"), as_text(line.value.get("thread_name"))
    if not isinstance(thread_id, str) or not thread_id:
        yield bad_line(line.number, "no thread id", line.raw)
        return
    if thread_id in known:
        text = f"thread name: {name}"
    else:
        text = f"session: {name} (thread name in session_index.jsonl; its rollout is not in the bundle)"
    yield Draft("system", text, line.locator, timestamp_ns=ns_from_iso(line.value.get("updated_at")),
                session_id=thread_id)


# -- state_5.sqlite ----------------------------------------------------------------------------


def _table(connection: sqlite3.Connection, table: str) -> Iterator[dict] | None:
    """The rows of a real table as dicts (with ``_rowid``), streamed; None when there is no such table.

    A view or virtual table of that name is not read (it could compute
    anything); generated columns are left out and long values are Oversize
    (analyzer/view/sqlite_safe.py).
    """
    if not sqlite_safe.is_real_table(connection, table):
        return None
    return sqlite_safe.table_rows(connection, table, f"{table} rows")


def _oversize_rows(row: dict, locator: str) -> Iterator[Draft]:
    """A row per value too long to read; the value is left out of the row's other columns."""
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            row[column] = None


def _created_ns(thread: dict) -> int | None:
    return ns_from_ms(thread.get("created_at_ms")) or ns_from_seconds(thread.get("created_at"))


def _iso(value_seconds) -> str:
    return format_timestamp(ns_from_seconds(value_seconds))


def _setting(value) -> str:
    """A column holding JSON text (sandbox_policy) as compact JSON; other text as a JSON string."""
    if isinstance(value, str):
        try:
            return json_value(decode_json(value))
        except ValueError:
            pass
    return json_value(value)


def _lost_thread_rows(thread: dict, locator: str, moment: dict) -> Iterator[Draft]:
    fields = [f"{key}={as_text(thread[key])}" for key in STATE_FIELDS if thread.get(key) not in (None, "")]
    for key in ("updated_at", "archived_at"):
        if thread.get(key):
            fields.append(f"{key}={_iso(thread[key])}")
    title = as_text(thread.get("title"))
    yield Draft("system", f"session: {title} (from state_5.sqlite threads; its rollout is not in the bundle; "
                          f"{', '.join(fields)})", locator, **moment)
    if thread.get("model"):
        yield Draft("system", f"model: {as_text(thread['model'])} (the thread's last model, from state_5.sqlite "
                              "threads)",
                    f"{locator}/model", **moment)
    for column, key in (("approval_mode", "approval_policy"), ("sandbox_policy", "sandbox_policy")):
        if thread.get(column) not in (None, ""):
            yield Draft("system", f"permission setting: {key}={_setting(thread[column])} "
                                  f"(from state_5.sqlite threads, the thread's last turn)", f"{locator}/{column}",
                        **moment)
    if thread.get("tokens_used"):
        yield Draft("system", f"tokens generated: model={as_text(thread.get('model'))} "
                              f"total_tokens={as_text(thread['tokens_used'])} (thread total, from state_5.sqlite "
                              "threads)",
                    f"{locator}/tokens_used", **moment)


def _thread_rows(thread: dict, known: frozenset[str]) -> Iterator[Draft]:
    thread_id = as_text(thread.get("id"))
    locator = f"sqlite:threads:{as_text(thread.get('_rowid'))}"
    moment = {"timestamp_ns": _created_ns(thread), "timestamp_source": "index", "session_id": thread_id,
              "project_path": as_text(thread.get("cwd")), "git_branch": as_text(thread.get("git_branch")),
              "model": as_text(thread.get("model"))}
    if not thread_id:
        yield bad_record(locator, "thread without an id", json_value({k: as_text(v) for k, v in thread.items()}))
        return
    if thread_id not in known:
        yield from _lost_thread_rows(thread, locator, moment)
    prompt = thread.get("first_user_message")
    if isinstance(prompt, str) and prompt.strip():
        yield Draft("user", prompt, f"{locator}/first_user_message", **moment)


def _edge_rows(edge: dict, created: dict[str, int | None], known: frozenset[str]) -> Iterator[Draft]:
    child, parent = as_text(edge.get("child_thread_id")), as_text(edge.get("parent_thread_id"))
    if child in known:
        return
    text = (f"session: sub-agent thread {child} of thread {parent} (status={as_text(edge.get('status'))}; "
            "from state_5.sqlite thread_spawn_edges; its rollout is not in the bundle)")
    yield Draft("system", text, f"sqlite:thread_spawn_edges:{as_text(edge.get('_rowid'))}",
                timestamp_ns=created.get(child), timestamp_source="index", session_id=child)


def parse_state_db(ctx: ParseContext) -> Iterator[Draft]:
    """Threads and spawn edges of state_5.sqlite, streamed: memory does not grow with the threads."""
    yield from each_database_row(ctx, lambda connection: _state_rows(ctx, connection))


def _state_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    if _table(connection, "threads") is None:
        yield bad_file(f"{ctx.source.name}: no threads table")
        return
    known = rollout_ids(ctx)
    has_edges = sqlite_safe.is_real_table(connection, "thread_spawn_edges")
    # an edge row gives its child's creation time: keep it only for the children edges name
    wanted, over_at = _edge_children(connection, known) if has_edges else (set(), None)
    if over_at is not None:
        yield over_limit("spawn edge children", f"about {MAX_CHILD_BYTES} bytes of child thread ids held for their "
                         "creation time", "from this edge on, an edge row whose child was not held has no time",
                         f"sqlite:thread_spawn_edges:{over_at}")
    created: dict[str, int | None] = {}
    for thread in _table(connection, "threads"):
        locator = f"sqlite:threads:{as_text(thread.get('_rowid'))}"
        yield from _oversize_rows(thread, locator)
        yield from _thread_rows(thread, known)
        thread_id = as_text(thread.get("id"))
        if thread_id in wanted:
            created[thread_id] = _created_ns(thread)  # the last row of an id wins, as a dict by id did
    for edge in _table(connection, "thread_spawn_edges") if has_edges else ():
        yield from _oversize_rows(edge, f"sqlite:thread_spawn_edges:{as_text(edge.get('_rowid'))}")
        yield from _edge_rows(edge, created, known)


def _edge_children(connection: sqlite3.Connection, known: frozenset[str]) -> tuple[set[str], object]:
    """Child thread ids of the edges that will be rows (their child's rollout is not in the bundle).

    At most MAX_CHILD_BYTES of them; with it, the rowid of the edge at which that was reached (else None).
    """
    edges = sqlite_safe.table_rows(connection, "thread_spawn_edges", "thread_spawn_edges child ids",
                                   ("child_thread_id",))
    children: set[str] = set()
    spent = 0
    for edge in edges:
        child = as_text(edge.get("child_thread_id"))
        if child in known or child in children:
            continue
        spent += len(child) + ID_COST
        if spent > MAX_CHILD_BYTES:
            return children, edge.get("_rowid")
        children.add(child)
    return children, None
