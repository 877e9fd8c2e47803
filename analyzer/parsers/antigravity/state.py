"""The editor's global state.vscdb: the trajectory summary map, one ``session:`` row per conversation.

ItemTable key ``antigravityUnifiedStateSync.trajectorySummaries`` (older builds
``unifiedStateSync.trajectorySummaries``) [obs: cli-continues ``SUMMARY_STATE_KEYS``]:
base64 of a map whose entry field 2 wraps the summary in a second base64 text
(formats/trajectory_summaries.py, ``wrapped=True``). Each summary row names the
conversation's files in the bundle by the id they share (``conversations/<id>.pb``,
``.db``, ``brain/<id>/.../transcript.jsonl``), so a conversation known only
from an encrypted file still has its title, times and workspace on the
timeline. ``jetskiStateSync.agentManagerInitState`` is not read (UI state).

The map is rewritten whole, so earlier versions in the database's ``-wal``
are read too (formats/sqlite_history.py): secondary rows located
``wal:<commit>/...``, leaving out those equal to a live row or to a row of
an earlier commit already given.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import sqlite_history, vscode_db
from aitrail.analyzer.formats import trajectory_summaries as summaries
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .project import SUMMARY_KEYS, project_of

FILE_STORES = {  # store -> what the summary row says of a file of it
    "conversations_pb": "encrypted, not read",
    "conversations_db": "protobuf in SQLite, not read",
    "transcripts": "read",
}


def conversation_files(ctx: ParseContext) -> dict[str, list[str]]:
    """Conversation id -> ``<path> (<what of it>)`` for each of its files in the bundle, read once per worker."""
    def load() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for store, said in FILE_STORES.items():
            for source in ctx.related(store):
                if source.companion_of:
                    continue  # a -wal or -shm goes with its database
                parts = source.path.split("/")
                key = parts[parts.index("brain") + 1] if "brain" in parts[:-1] else source.name.rsplit(".", 1)[0]
                found.setdefault(key, []).append(f"{source.path} ({said})")
        return found

    return ctx.cached(("antigravity.conversation_files",), load)  # type: ignore[return-value]


def file_note(ctx: ParseContext, conversation_id: str) -> str:
    """What of the conversation is in the bundle, for the summary row."""
    files = conversation_files(ctx).get(conversation_id)
    if not files:
        return "no conversation file for it is in the bundle"
    return f"its files in the bundle: {', '.join(files)}"


def parse_state_vscdb(ctx: ParseContext) -> Iterator[Draft]:
    """A ``session:`` row (and a ``model:`` row) per trajectory summary of the live database or its backup."""
    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        if not vscode_db.has_table(connection, vscode_db.ITEM_TABLE):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(vscode_db.ITEM_TABLE)}")
            return
        yield from summaries.with_earlier_versions(_database_rows(ctx, connection), _earlier(ctx))

    yield from each_database_row(ctx, rows)


def _earlier(ctx: ParseContext) -> Iterator:
    """Each earlier commit of the -wal: its rows (read whole) and its ``wal:<commit>/`` locator function."""
    for item in sqlite_history.earlier_snapshots(ctx):
        if isinstance(item, Draft):
            yield item
        elif vscode_db.has_table(item.connection, vscode_db.ITEM_TABLE):
            yield iter(list(_database_rows(ctx, item.connection))), item.locator


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    for key in SUMMARY_KEYS:
        row = vscode_db.row_at_key(connection, key)
        if row is not None:
            yield from _map_rows(ctx, row)


def _map_rows(ctx: ParseContext, row: vscode_db.KeyRow) -> Iterator[Draft]:
    try:
        value = row.text()
    except ValueError as exc:
        yield bad_record(row.locator(), str(exc))
        return
    found = summaries.read_map(value, wrapped=True)
    if found.problem:
        yield bad_record(row.locator(), found.problem)
    for summary in found.summaries:
        note = file_note(ctx, summary.conversation_id)
        project = summary.workspace_path() or project_of(ctx, summary.conversation_id)
        yield from summaries.summary_rows(summary, row.locator(summary.position), project, note)
