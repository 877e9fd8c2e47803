"""Opening a Cursor state.vscdb copy for a parser: one ``parser:`` row when it cannot be read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def database_rows(ctx: ParseContext, tables: tuple[str, ...],
                  rows: Callable[[sqlite3.Connection], Iterator[Draft]]) -> Iterator[Draft]:
    """``rows(connection)`` on the context's database (its copy with the -wal applied).

    A database that cannot be opened, that has none of ``tables``, or whose query
    stops (a damaged page, a limit) is one ``parser: unparseable file`` row; the rows
    given before a failure stay (formats/database.py).
    """
    def checked(connection: sqlite3.Connection) -> Iterator[Draft]:
        if not any(vscode_db.has_table(connection, table) for table in tables):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(tables[0])}")
            return
        yield from rows(connection)

    yield from each_database_row(ctx, checked)
