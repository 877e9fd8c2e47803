"""Values a SQLite query left unread for their length, as ``parser:`` rows.

``sqlite_safe.table_rows`` never fetches a value longer than MAX_VALUE_BYTES:
it gives an ``Oversize`` (the length) instead. ``oversize_rows`` turns each into
``parser: unparseable record (value too long to read (N long, limit L))`` at
``<locator>/<column>`` and clears the value, so the rest of the row is still read.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.rows import Draft


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
