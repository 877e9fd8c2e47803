"""opencode.db (v1.2.0+): the shared OpenCode-schema walk (analyzer/formats/opencode_db.py), and its ids.

The rows are the walk's: sessions, their messages and parts, todos, the parts whose
message is gone and the stored approvals, read from the read-only copy with its -wal
applied. What is OpenCode's own is here: the ids the database holds, which the legacy
storage/ tree's parser (storage.py) uses to tell a migrated copy from a session that
only the tree still holds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import opencode_db
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.opencode_parts import text_of
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

# The sessions' ids and directories held for their messages and todos (opencode_db.SESSIONS_HELD_BYTES);
# read when a file is parsed, so a test can lower it here.
SESSIONS_HELD_BYTES = opencode_db.SESSIONS_HELD_BYTES


def parse_database(ctx: ParseContext) -> Iterator[Draft]:
    """opencode.db: a ``session metadata:`` row per session, then its messages' part rows, todos and rules."""
    yield from each_database_row(ctx, lambda connection: opencode_db.database_rows(ctx, connection,
                                                                                  SESSIONS_HELD_BYTES))


def database_ids(ctx: ParseContext, among: frozenset[str]) -> frozenset[str]:
    """The ids of ``among`` that the bundle's opencode.db files hold (sessions, messages, parts, permission projects).

    ``among`` is what the storage/ tree names (the callers' files): only those are held,
    not every id of a database, which has no limit on its rows. The storage/ tree's files
    with these ids are copies the 1.2 migration left, so they give no rows of their own. A
    database that cannot be read adds no ids (its own parser reports it).
    """
    ids: set[str] = set()
    if among:
        for source in sorted(ctx.related("opencode_db"), key=lambda found: found.member):
            ids.update(_ids_of(ctx, source, among))
    return frozenset(ids)


def _ids_of(ctx: ParseContext, source, among: frozenset[str]) -> set[str]:
    ids: set[str] = set()
    try:
        connection = ctx.sqlite(source)
    except sqlite3.Error:
        return ids
    try:
        for table, column, prefix in (("session", "id", ""), ("message", "id", ""), ("part", "id", ""),
                                      ("permission", "project_id", "permission:")):
            if sqlite_safe.is_real_table(connection, table):
                for row in sqlite_safe.table_rows(connection, table, f"{table} ids", (column,)):
                    found = prefix + text_of(row.get(column))
                    if found in among:
                        ids.add(found)
    except sqlite3.Error:
        pass  # the ids read so far still count; the database's own rows report the problem
    finally:
        connection.close()
    return ids


def has_database(ctx: ParseContext) -> bool:
    """Whether the bundle holds an opencode.db (so a session missing from it was deleted or never migrated)."""
    return ctx.cached(("opencode-has-db",), lambda: bool(ctx.related("opencode_db")))  # not a list copy per file
