"""A Trae workspace ``state.vscdb``: the agent's session list, ItemTable key ``memento/icube-ai-agent-storage``.

The row's value is one JSON object rewritten whole on every change
[obs, several community parsers]::

    {"currentSessionId": "...", "list": [{"sessionId", "title", "createdAt", "updatedAt"?, "model"?,
      "messages": [{"id", "role", "content", "timestamp"?, "model"?, "agentTaskContent"?}]}]}

Only those fields are read (``currentSessionId`` is not). ``messages`` may be empty on older workspaces
(the conversation is then only named, not kept). Times: an ISO 8601 text
with its zone, or a number read by its size (13 digits: ms, 10: s); a
message without its own time takes its session's ``createdAt``
(``timestamp_source`` index). Earlier versions of the row come from the
database's ``-wal`` (analyzer/formats/sqlite_history.py; the catalog's
``workspace_state_wal`` store, ``parse_wal_history``) and from
``state.vscdb.backup`` (``workspace_state_backup``), both secondary stores:
rows equal to the live database's are dropped by the run; the others are
turns the live list no longer holds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats import sqlite_history, vscode_db
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import epoch_ns
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt
from aitrail.analyzer.formats.workspace_storage import folder_project
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

AGENT_STORAGE = "memento/icube-ai-agent-storage"
ROLES = {"user": "user", "assistant": "assistant"}


class SessionReader:
    """One entry of ``list``: its columns, the model in use, and the time its untimed messages take."""

    def __init__(self, row: vscode_db.KeyRow, session: dict, position: int, project: str) -> None:
        self.row, self.session, self.position = row, session, position
        self.session_id = label(session.get("sessionId"), 1024)
        self.project = project
        self.created_ns = epoch_ns(session.get("createdAt"))
        self.model = ""

    def where(self, *pointer) -> str:
        """The locator of a part of this session entry."""
        return self.row.locator("list", self.position, *pointer)

    def columns(self, when: int | None, source: str = "record") -> dict:
        """The columns every row of the session shares, timed by ``when`` (else the session's createdAt)."""
        if when is None:
            when, source = self.created_ns, "index"
        return {"timestamp_ns": when, "timestamp_source": source if when is not None else "none",
                "session_id": self.session_id, "project_path": self.project}

    def session_row(self, messages: list) -> Draft:
        """``session: <title> (sessionId, createdAt, updatedAt, N messages | no messages kept locally)``."""
        session = self.session
        title = as_text(session.get("title")) or "(untitled)"
        facts = [f"{key} {as_text(session[key])}" for key in ("sessionId", "createdAt", "updatedAt")
                 if session.get(key) not in (None, "")]
        facts.append(f"{len(messages)} messages" if messages else "no messages kept locally")
        return Draft("system", f"session: {title} ({', '.join(facts)})", self.where(),
                     **self.columns(self.created_ns))

    def model_rows(self) -> Iterator[Draft]:
        """``model: <id>`` for the session's ``model``, at its createdAt."""
        model = label(self.session.get("model"))
        if model:
            self.model = model
            yield Draft("system", f"model: {model}", self.where("model"), **self.columns(self.created_ns))

    def message_rows(self, message, index: int) -> Iterator[Draft]:
        """A user or assistant row (other roles as ``message (<role>):``), its model row, its agent task content."""
        if not isinstance(message, dict):
            yield bad_record(self.where("messages", index), "message is not an object", as_text(message))
            return
        columns = self.columns(epoch_ns(message.get("timestamp")))
        model = label(message.get("model"))
        if model and model != self.model:
            change = f"{self.model} -> {model}" if self.model else model
            yield Draft("system", f"model: {change}", self.where("messages", index, "model"), **columns)
            self.model = model
        role, content = as_text(message.get("role")), as_text(message.get("content"))
        where = self.where("messages", index, "content")
        if role in ROLES and content:
            yield Draft(ROLES[role], content, where, model=self.model if role == "assistant" else "", **columns)
        elif content:
            yield Draft("system", f"message ({excerpt(role, 80) or 'no role'}): {content}", where, **columns)
        task = message.get("agentTaskContent")
        if task not in (None, "", {}, []):
            yield Draft("system", f"agent task content: {as_text(task)}", self.where("messages", index,
                                                                                       "agentTaskContent"), **columns)


def storage_rows(connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
    """Every session of the storage row, each followed by its messages; damaged parts as ``parser:`` rows."""
    row = vscode_db.row_at_key(connection, AGENT_STORAGE)
    if row is None:
        return
    try:
        value = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"{AGENT_STORAGE} is not JSON: {exc}")
        return
    sessions = value.get("list") if isinstance(value, dict) else None
    if not isinstance(sessions, list):
        yield bad_record(row.locator(), f"{AGENT_STORAGE} has no list of sessions", row.text())
        return
    for position, session in enumerate(sessions):
        if not isinstance(session, dict):
            yield bad_record(row.locator("list", position), "session entry is not an object", as_text(session))
            continue
        reader = SessionReader(row, session, position, project)
        messages = session.get("messages")
        if messages is not None and not isinstance(messages, list):
            yield bad_record(reader.where("messages"), "messages is not a list", as_text(messages))
            messages = None
        yield reader.session_row(messages or [])
        yield from reader.model_rows()
        for index, message in enumerate(messages or ()):
            yield from reader.message_rows(message, index)


def parse_agent_storage(ctx: ParseContext) -> Iterator[Draft]:
    """The session list of a workspace database (the live one with its -wal applied, or the backup)."""
    project = folder_project(ctx)
    yield from each_database_row(ctx, checked(lambda connection: storage_rows(connection, project)))


def checked(rows: Callable[[sqlite3.Connection], Iterator[Draft]]) -> Callable[[sqlite3.Connection], Iterator[Draft]]:
    """``rows`` run on a database that is one and has an ItemTable; otherwise one ``parser:`` row says which.

    A file that is not a database fails the first query (each_database_row's
    ``cannot read`` row); a database without a real ItemTable is ``no such table``.
    """
    def run(connection: sqlite3.Connection) -> Iterator[Draft]:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if not vscode_db.has_table(connection, vscode_db.ITEM_TABLE):
            yield bad_file(vscode_db.missing_table(vscode_db.ITEM_TABLE))
            return
        yield from rows(connection)

    return run


def parse_wal_history(ctx: ParseContext) -> Iterator[Draft]:
    """The session list as each earlier commit of the database's -wal left it (a secondary store).

    The rows read exactly as the live list's would (locators ``wal:<commit>/...``):
    the run drops those equal to a live row, so what remains is what a later
    rewrite removed. A database without a -wal, or with one commit, gives none. A
    database that cannot be read gives the live parse's row (dropped as its copy).
    """
    project = folder_project(ctx)
    yield from each_database_row(ctx, checked(lambda connection: iter(())))
    for item in sqlite_history.earlier_snapshots(ctx):
        if isinstance(item, Draft):
            yield item
            continue
        try:
            for draft in storage_rows(item.connection, project):
                draft.locator = item.locator(draft.locator)
                yield draft
        except sqlite3.Error as exc:
            yield bad_file(f"{ctx.source.name} as of {item.described}: cannot read: {exc}")
