"""The global state.vscdb (and its .backup, and ~/.cursor/state.vscdb): settings, then every composer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, ITEM_TABLE
from aitrail.analyzer.rows import Draft

from .composers import composer_rows
from .settings import settings_rows


def parse_state_vscdb(ctx: ParseContext) -> Iterator[Draft]:
    """The auto-run and model settings of the applicationUser blob, then each composer's rows.

    Read from the analyzer's copy with its -wal applied, so bubbles written since the
    last checkpoint are read. A database that cannot be opened or read is one
    ``parser: unparseable file`` row (the rows before the failure stay).
    """
    try:
        connection = vscode_db.open_state(ctx)
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open: {exc}")
        return
    try:
        if not (vscode_db.has_table(connection, ITEM_TABLE) or vscode_db.has_table(connection, CURSOR_TABLE)):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(ITEM_TABLE)}")
            return
        yield from settings_rows(ctx, connection)
        yield from composer_rows(ctx, connection)
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot read: {exc}")
    finally:
        connection.close()
