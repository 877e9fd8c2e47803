"""A collected SQLite database read as one file: opened, its rows given, every failure one ``parser:`` row.

A parser hands ``read_database`` a function that yields the rows of an open
connection; what cannot be opened or read (not a database, a query stopped
by its budget in analyzer/sqlite_safe.py) becomes
``parser: unparseable file (<name>: cannot open|cannot read: <reason>)``, after
the rows already given, and the connection is always closed.
``oversize_rows`` reports the values sqlite_safe left unread for their length.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer import sqlite_safe
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.rows import Draft


def read_database(ctx: ParseContext,
                  rows: Callable[[ParseContext, sqlite3.Connection], Iterator[Draft]]) -> Iterator[Draft]:
    """The rows ``rows`` gives for this source's database, or the ``parser:`` row saying why it stopped.

    Args:
        ctx: the parse context of the database source.
        rows: yields the rows of the open (read-only, -wal applied) connection.
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


def oversize_rows(row: dict, locator: str) -> Iterator[Draft]:
    """A ``parser:`` row per value too long to read (``sqlite_safe.Oversize``), which is then set to None.

    Args:
        row: a row from ``sqlite_safe.table_rows``; changed in place.
        locator: the row's locator; the column is added after a ``/``.
    """
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            row[column] = None
