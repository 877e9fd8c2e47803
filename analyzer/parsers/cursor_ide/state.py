"""The global state.vscdb (and its .backup, and ~/.cursor/state.vscdb): settings, then every composer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, ITEM_TABLE
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .composers import composer_rows
from .database import database_rows
from .settings import settings_rows


def parse_state_vscdb(ctx: ParseContext) -> Iterator[Draft]:
    """The auto-run and model settings of the applicationUser blob, then each composer's rows.

    Read from the analyzer's copy with its -wal applied, so bubbles written since the
    last checkpoint are read. A database that cannot be opened or read is one
    ``parser: unparseable file`` row (the rows before the failure stay).
    """
    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        yield from settings_rows(ctx, connection)
        yield from composer_rows(ctx, connection)

    yield from database_rows(ctx, (ITEM_TABLE, CURSOR_TABLE), rows)
