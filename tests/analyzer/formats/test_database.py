"""formats/database.py: a database that cannot be opened or read is one parser: row, the rows before it stay."""

from __future__ import annotations

import sqlite3

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.view.rows import Draft


class Context:
    """Just what each_database_row uses of a ParseContext."""

    def __init__(self, connect):
        self._connect = connect
        self.source = type("Source", (), {"name": "chat.db"})()

    def sqlite(self):
        return self._connect()


def test_rows_are_given_and_the_connection_is_closed():
    connection = sqlite3.connect(":memory:")
    rows = list(each_database_row(Context(lambda: connection), lambda c: [Draft("system", "one", "sqlite:t:1")]))
    assert [row.text for row in rows] == ["one"]
    try:
        connection.execute("SELECT 1")
        raise AssertionError("the connection should be closed")
    except sqlite3.ProgrammingError:
        pass


def test_a_database_that_cannot_be_opened_is_one_parser_row():
    def refuse():
        raise sqlite3.DatabaseError("file is not a database")

    rows = list(each_database_row(Context(refuse), lambda c: []))
    assert [row.text for row in rows] == ["parser: unparseable file (chat.db: cannot open: file is not a database)"]


def test_a_query_that_fails_part_way_keeps_the_rows_before_it():
    def rows(connection):
        yield Draft("system", "first", "sqlite:t:1")
        connection.execute("SELECT * FROM missing")

    out = list(each_database_row(Context(lambda: sqlite3.connect(":memory:")), rows))
    assert [row.text for row in out] == ["first",
                                         "parser: unparseable file (chat.db: cannot read: no such table: missing)"]
