"""warp.sqlite (with its -wal): the agent's prompts, conversations, task blobs and the commands it ran.

``parse_warp_db`` opens the read-only copy with the -wal applied
(formats/database.py), so the newest rows, not yet checkpointed, are read,
and reads, each only when it is a real table: ``agent_conversations``
(conversations.py), ``ai_queries`` (queries.py), ``agent_tasks`` (one
``parser:`` row per undecoded blob), ``blocks`` with ``ai_metadata`` (blocks.py)
and the legacy output tables. The credential tables (catalog
``credential_tables``: ``mcp_environment_variables``,
``mcp_server_installations``) and every table not named here are never
selected (tables.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .blocks import block_rows, legacy_output_rows
from .conversations import conversation_rows, task_rows
from .queries import query_rows
from .tables import missing_columns, missing_table

READERS: tuple[tuple[str, Callable[[sqlite3.Connection], Iterator[Draft]]], ...] = (
    ("agent_conversations", conversation_rows),
    ("ai_queries", query_rows),
    ("agent_tasks", task_rows),
    ("blocks", block_rows),
)


def parse_warp_db(ctx: ParseContext) -> Iterator[Draft]:
    """Every table this parser knows, in turn; a missing table or column is a ``parser:`` row, never a stop."""
    yield from each_database_row(ctx, _database_rows)


def _database_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    for table, reader in READERS:
        if not sqlite_safe.is_real_table(connection, table):
            yield missing_table(table)
            continue
        yield from missing_columns(connection, table)
        yield from reader(connection)
    yield from legacy_output_rows(connection)
