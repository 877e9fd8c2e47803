"""Rows of a rewritten store's earlier versions (WAL commits), each written once, secondary.

A store that rewrites one value whole on every change (Void's thread blob, Kilo
Code's ``taskHistory`` in a ``state.vscdb``) leaves its earlier versions in the
``-wal`` (formats/sqlite_history.py). Each version is read with the reader of
the live database; ``earlier_versions`` gives those rows ``origin="secondary"``
and the locator ``wal:<k>/<locator>``, and leaves out every row an earlier
reading (the live database, an earlier commit) already wrote: N commits of an
unchanged value give its rows once, not N times. The engine then drops a
secondary row equal to a primary one, so what remains is what only an older
version holds.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from aitrail.analyzer.formats import sqlite_history
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

MAX_KEYS = 1 << 18  # 8-byte row keys held (about 2 MB of ints in a set); past it, repeats are written


class RowRepeats:
    """The rows already written by one parse, as 64-bit keys of (turn type, session, call id, text)."""

    def __init__(self) -> None:
        self.keys: set[int] = set()

    def first(self, row: Draft) -> bool:
        """Note the row; False when a row of the same kind, session, call and text was noted before."""
        key = int.from_bytes(hashlib.blake2b(
            f"{row.turn_type}\0{row.session_id}\0{row.tool_use_id}\0{' '.join(row.text.split())}".encode(),
            digest_size=8).digest(), "big")
        if key in self.keys:
            return False
        if len(self.keys) < MAX_KEYS:
            self.keys.add(key)
        return True


def earlier_versions(ctx: ParseContext, read: Callable[[sqlite3.Connection], Iterable[Draft]],
                     repeats: RowRepeats) -> Iterator[Draft]:
    """The rows ``read`` gives for each earlier WAL commit of the context's database, secondary, each once.

    ``read`` is the live reader (it may raise sqlite3.Error: that commit is then one
    ``parser:`` row); sqlite_history's own ``parser:`` rows pass through.
    """
    for item in sqlite_history.earlier_snapshots(ctx):
        if isinstance(item, Draft):
            yield item
            continue
        try:
            rows = list(read(item.connection))  # the connection is valid only until the next snapshot
        except (sqlite3.Error, MemoryError) as exc:  # QueryAborted is a sqlite3.Error
            yield Draft("system", f"parser: the database as of {item.described} could not be read ({exc})",
                        item.locator("sqlite:ItemTable"), timestamp_source="none")
            continue
        for row in rows:
            if repeats.first(row):
                yield replace(row, locator=item.locator(row.locator), origin="secondary")
