"""A collected database read whole by one parser: its rows, or the one ``parser:`` row saying why not.

Every parser of a database opens the bundle's read-only copy (``ctx.sqlite()``, the
-wal and -shm applied), streams rows from it, and must turn a copy that does not open
(not a database, encrypted) or a query that fails part-way (a damaged page, a budget
of analyzer/sqlite_safe.py spent) into a row rather than an exception, keeping the
rows given before the failure. ``database_rows`` is that frame.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.rows import Draft


def database_rows(ctx: ParseContext, rows: Callable[[ParseContext, sqlite3.Connection], Iterable[Draft]]
                  ) -> Iterator[Draft]:
    """The rows ``rows(ctx, connection)`` gives for this source's database, the connection closed after.

    A copy that cannot be opened is ``parser: unparseable file (<name>: cannot open: …)``;
    a read that fails part-way adds ``parser: unparseable file (<name>: cannot read: …)``
    after the rows already given.
    """
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open: {exc}")
        return
    try:
        yield from rows(ctx, connection)
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot read: {exc}")
    finally:
        connection.close()
