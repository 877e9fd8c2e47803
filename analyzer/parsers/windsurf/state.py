"""Windsurf's global state.vscdb: the Cascade trajectory summaries inside the ``codeium.windsurf`` row.

The ItemTable row ``codeium.windsurf`` (the bundled extension's globalState) is
one JSON object. Two families of its keys matter, each suffixed with the
workspaceStorage id of the window that wrote it [obs]:

* ``windsurf.state.cachedTrajectorySummaries:<workspace id>``: base64 protobuf,
  a map of Cascade id to summary (read by formats/trajectory_summaries.py,
  unwrapped: entry field 2 is the summary itself);
* ``windsurf.state.cachedActiveTrajectory:<workspace id>``: base64 protobuf of
  the window's current trajectory. No schema is published, and no field of it is
  named by the research this parser follows: it is not decoded, and one
  ``parser: ... cannot be read`` row says that it exists and how large it is.

Nothing else of the row is read (it also holds account state); ``secret://``
rows never leave formats/vscode_db.py.

The row is rewritten whole whenever a summary changes, so the database's
``-wal`` can hold earlier versions of it: each earlier commit is read with the
same code (formats/sqlite_history.py) and its rows are secondary, located
``wal:<commit>/sqlite:ItemTable:...``; a row equal to a live row (or to one
of an earlier commit already given) is left out, so only summaries since
removed or changed remain, each once. The
active-trajectory row is not repeated for earlier commits (every turn
rewrites it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import sqlite_history, vscode_db
from aitrail.analyzer.formats import trajectory_summaries as summaries
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record, base64_size
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .workspaces import workspace_projects

STATE_KEY = "codeium.windsurf"
SUMMARIES_PREFIX = "windsurf.state.cachedTrajectorySummaries:"
ACTIVE_PREFIX = "windsurf.state.cachedActiveTrajectory:"
CONVERSATION_STORES = ("cascade", "implicit")
UNREADABLE = "encrypted at rest, not read"
ACTIVE_REASON = "protobuf trajectory with no public schema"


def parse_state_vscdb(ctx: ParseContext) -> Iterator[Draft]:
    """A ``session:`` row (and ``model:`` row) per cached trajectory summary; a row per active trajectory blob.

    The live database and its ``.backup`` (secondary) are read alike; a summary
    the live copy no longer holds survives as the backup's row.
    """
    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        if not vscode_db.has_table(connection, vscode_db.ITEM_TABLE):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(vscode_db.ITEM_TABLE)}")
            return
        yield from summaries.with_earlier_versions(_database_rows(ctx, connection, active=True), _earlier(ctx))

    yield from each_database_row(ctx, rows)


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection, active: bool) -> Iterator[Draft]:
    row = vscode_db.row_at_key(connection, STATE_KEY)
    if row is not None:
        yield from _state_rows(ctx, row, active)


def _earlier(ctx: ParseContext) -> Iterator:
    """Each earlier commit of the -wal: its rows and the function that prefixes their locators ``wal:<commit>/``."""
    for item in sqlite_history.earlier_snapshots(ctx):
        if isinstance(item, Draft):
            yield item
        elif vscode_db.has_table(item.connection, vscode_db.ITEM_TABLE):
            # read whole before the next commit is asked for: the snapshot's connection ends then
            yield iter(list(_database_rows(ctx, item.connection, active=False))), item.locator


def _state_rows(ctx: ParseContext, row: vscode_db.KeyRow, active: bool) -> Iterator[Draft]:
    try:
        state = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"{STATE_KEY} is not JSON: {exc}")
        return
    if not isinstance(state, dict):
        yield bad_record(row.locator(), f"{STATE_KEY} is a JSON {type(state).__name__}, not an object")
        return
    projects = workspace_projects(ctx)
    files = summaries.conversation_files(ctx, CONVERSATION_STORES)
    for key, value in state.items():
        if key.startswith(SUMMARIES_PREFIX):
            yield from _summary_rows(row, key, value, projects.get(key[len(SUMMARIES_PREFIX):], ""), files)
        elif key.startswith(ACTIVE_PREFIX) and active:
            size = f"{base64_size(value)} bytes" if isinstance(value, str) else f"a JSON {type(value).__name__}"
            yield Draft("system", f"parser: {STATE_KEY} {key} cannot be read: {ACTIVE_REASON}; {size}",
                        row.locator(key), timestamp_source="none",
                        project_path=projects.get(key[len(ACTIVE_PREFIX):], ""))


def _summary_rows(row: vscode_db.KeyRow, key: str, value: object, window_project: str,
                  files: dict[str, str]) -> Iterator[Draft]:
    if not isinstance(value, str):
        yield bad_record(row.locator(key), f"{key} is a JSON {type(value).__name__}, not base64 text")
        return
    found = summaries.read_map(value, wrapped=False)
    if found.problem:
        yield bad_record(row.locator(key), found.problem)
    for summary in found.summaries:
        project = summary.workspace_path() or window_project
        note = summaries.file_note(files, summary.conversation_id, UNREADABLE)
        yield from summaries.summary_rows(summary, row.locator(key, summary.position), project, note)
