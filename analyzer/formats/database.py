"""One collected SQLite database read safely: opened, its rows given, every failure a ``parser:`` row.

``each_database_row(ctx, rows)`` opens the read-only copy of this source
(with its -wal applied; analyzer/view/sqlite_safe.py bounds every query), gives
whatever ``rows(connection)`` yields, and turns a database that cannot be
opened, or a query that fails or hits a limit part-way, into one
``parser: unparseable file (<name>: cannot open|cannot read: <why>)`` row:
the rows before the failure stay. The connection is always closed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator

from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def each_database_row(ctx: ParseContext, rows: Callable[[sqlite3.Connection], Iterable[Draft]]) -> Iterator[Draft]:
    """The rows ``rows`` gives for this source's database, then one ``parser:`` row if opening or reading failed."""
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open: {exc}")
        return
    try:
        yield from rows(connection)
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot read: {exc}")
    finally:
        connection.close()
