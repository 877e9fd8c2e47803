"""database_rows: a database's rows, or the one parser row saying why it could not be read."""

from __future__ import annotations

import sqlite3

from aitrail.analyzer.formats.sqlite_file import database_rows
from aitrail.analyzer.rows import Draft


class _Source:
    name = "state.db"


class _Context:
    source = _Source()

    def __init__(self, connection=None, error: Exception | None = None):
        self.connection, self.error = connection, error

    def sqlite(self):
        if self.error is not None:
            raise self.error
        return self.connection


class _Connection:
    closed = False

    def close(self):
        self.closed = True


def test_rows_are_given_and_the_connection_is_closed():
    connection = _Connection()
    rows = list(database_rows(_Context(connection), lambda ctx, conn: [Draft("user", "hi", "sqlite:t:1")]))
    assert [row.text for row in rows] == ["hi"] and connection.closed


def test_a_copy_that_does_not_open_is_one_row():
    rows = list(database_rows(_Context(error=sqlite3.DatabaseError("file is not a database")), lambda c, n: []))
    assert [row.text for row in rows] == ["parser: unparseable file (state.db: cannot open: file is not a database)"]


def test_a_read_that_fails_keeps_the_rows_before_it_and_closes():
    connection = _Connection()

    def rows(ctx, conn):
        yield Draft("user", "first", "sqlite:t:1")
        raise sqlite3.OperationalError("database disk image is malformed")

    texts = [row.text for row in database_rows(_Context(connection), rows)]
    assert texts == ["first", "parser: unparseable file (state.db: cannot read: database disk image is malformed)"]
    assert connection.closed
