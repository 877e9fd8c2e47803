"""kilo.db: the OpenCode-schema walk (analyzer/formats/opencode_db.py), then Kilo's shared agent board.

Kilo CLI 7.x forked OpenCode and kept its database schema: ``session``, ``message``,
``part``, ``todo`` and ``permission`` give the rows OpenCode's do (docs/agents/opencode.md),
``permission`` in its later one-approval-a-row shape. Kilo adds the agent board
(board.py). The tables that hold tokens (``account``, ``control_account``,
``credential``, ``session_share``: the catalog's ``credential_tables``) are never
selected; neither are the experimental event-sourced tables (``event``,
``session_message``, ``session_input``: written only with KILO_EXPERIMENTAL_EVENT_SYSTEM
or workspaces, and emptied by Kilo's own migrations).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import opencode_db
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .board import board_rows


def parse_database(ctx: ParseContext) -> Iterator[Draft]:
    """kilo.db: the OpenCode-schema rows (sessions, parts, todos, approvals), then the agent board's rows."""
    yield from each_database_row(ctx, lambda connection: _rows(ctx, connection))


def _rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    yield from opencode_db.database_rows(ctx, connection)
    yield from board_rows(connection)
