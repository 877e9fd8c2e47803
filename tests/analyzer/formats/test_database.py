"""formats.database: a database's rows, and one row when it cannot be opened or read."""

from __future__ import annotations

import os
import sqlite3
import tempfile

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.database import database_rows
from aitrail.analyzer.rows import Draft
from tests.analyzer.fakes import FakeBundle


def context(data: bytes) -> ParseContext:
    bundle = FakeBundle({("x.db", "x.sqlite"): data})
    return ParseContext(bundle, bundle.source("x.sqlite"), {})


def a_database() -> bytes:
    handle, path = tempfile.mkstemp()
    os.close(handle)
    try:
        connection = sqlite3.connect(path)
        connection.executescript("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b');")
        connection.close()
        with open(path, "rb") as stream:
            return stream.read()
    finally:
        os.unlink(path)


def values(ctx, connection):
    for (value,) in connection.execute("SELECT v FROM t ORDER BY v"):
        yield Draft("system", value, "file")


def test_the_rows_of_the_reader_are_given():
    assert [row.text for row in database_rows(context(a_database()), values)] == ["a", "b"]


def test_a_failing_query_is_one_cannot_read_row_after_the_rows_before_it():
    def failing(ctx, connection):
        yield Draft("system", "before", "file")
        connection.execute("SELECT * FROM missing")

    rows = list(database_rows(context(a_database()), failing))
    assert [row.text for row in rows][0] == "before"
    assert rows[1].text.startswith("parser: unparseable file (x.sqlite: cannot read: no such table")


def test_bytes_that_are_no_database_are_one_parser_row():
    rows = list(database_rows(context(b"not a database at all, just text" * 4), values))
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (x.sqlite: cannot ")
