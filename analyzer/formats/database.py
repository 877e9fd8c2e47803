"""One collected SQLite database read safely: opened, its rows given, closed; failures as one row.

Every parser of a database does the same around its own queries: open the
bundle's read-only copy (with its -wal applied), give the rows, and turn a
database that cannot be opened, or a query that fails or runs over its budget
(analyzer/sqlite_safe.py), into one ``parser: unparseable file (<name>: cannot
open|read: ...)`` row; the rows given before a failure stay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.rows import Draft


def database_rows(ctx: ParseContext,
                  read: Callable[[ParseContext, sqlite3.Connection], Iterator[Draft]]) -> Iterator[Draft]:
    """The rows ``read(ctx, connection)`` gives from this source's database, then the connection is closed.

    Args:
        ctx: the parse context of the database source.
        read: yields the rows from an open connection; any sqlite3.Error it raises
            ends the reading with one ``cannot read`` row.
    """
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open: {exc}")
        return
    try:
        yield from read(ctx, connection)
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot read: {exc}")
    finally:
        connection.close()
