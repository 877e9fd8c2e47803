"""formats/sqlite_file.py: a database read as one file, failures as one parser row each."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from aitrail.analyzer import sqlite_safe
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.sqlite_file import oversize_rows, read_database
from aitrail.analyzer.rows import Draft
from tests.analyzer.fakes import FakeBundle


def context(data: bytes) -> ParseContext:
    bundle = FakeBundle({("x.db_store", "x.db"): data})
    return ParseContext(bundle, bundle.source("x.db"), {})


def small_database() -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "x.db"
        connection = sqlite3.connect(path)
        connection.executescript("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b');")
        connection.commit()
        connection.close()
        return path.read_bytes()


def test_the_rows_of_the_open_connection_are_given():
    def rows(ctx, connection):
        for (value,) in connection.execute("SELECT v FROM t ORDER BY v"):
            yield Draft("system", value, "sqlite:t")

    assert [row.text for row in read_database(context(small_database()), rows)] == ["a", "b"]


def test_a_file_that_is_no_database_is_one_parser_row():
    def rows(ctx, connection):
        yield from (Draft("system", str(row), "x") for row in connection.execute("SELECT * FROM t"))

    [row] = read_database(context(b"not a database at all, just text" * 4), rows)
    assert row.text.startswith("parser: unparseable file (x.db: cannot read: ") and row.locator == "file"


def test_a_failure_after_some_rows_keeps_them_and_closes_the_connection():
    seen = []

    def rows(ctx, connection):
        seen.append(connection)
        yield Draft("system", "first", "sqlite:t")
        connection.execute("SELECT * FROM missing")

    out = list(read_database(context(small_database()), rows))
    assert out[0].text == "first"
    assert out[1].text == "parser: unparseable file (x.db: cannot read: no such table: missing)"
    try:
        seen[0].execute("SELECT 1")
        closed = False
    except sqlite3.ProgrammingError:
        closed = True
    assert closed


def test_an_oversize_value_is_reported_and_left_out():
    row = {"_rowid": 3, "data": sqlite_safe.Oversize(70_000_000), "id": "a"}
    [problem] = oversize_rows(row, "sqlite:part:3")
    assert problem.locator == "sqlite:part:3/data" and "value too long to read (70000000 long" in problem.text
    assert row == {"_rowid": 3, "data": None, "id": "a"}
