"""OpenCode-schema messages and their parts in one streamed query (``message LEFT JOIN part``), bounded.

The bounds are sqlite_safe's.

One query instead of one per message: a database without the ``part_message_idx``
index would otherwise be scanned once per message (quadratic); for the join
SQLite builds a transient index itself. As in ``sqlite_safe.table_rows``, only
real tables and their stored columns are read, and a value longer than
MAX_VALUE_BYTES comes back as an Oversize, never fetched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.view import sqlite_safe

MESSAGE_COLUMNS = ("id", "session_id", "time_created", "data")
PART_COLUMNS = ("id", "session_id", "time_created", "data")


def _capped(alias: str, column: str) -> str:
    value = f'{alias}."{column}"'
    return f"length({value}), CASE WHEN length({value}) <= {sqlite_safe.MAX_VALUE_BYTES} THEN {value} END"


def _rowid(connection: sqlite3.Connection, table: str, alias: str) -> str:
    try:
        connection.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
        return f"{alias}.rowid"
    except sqlite3.OperationalError:  # a WITHOUT ROWID table
        return "NULL"


def _value(length, value):
    if value is None and length is not None and length > sqlite_safe.MAX_VALUE_BYTES:
        return sqlite_safe.Oversize(length)
    return value


def message_parts(connection: sqlite3.Connection, with_parts: bool) -> Iterator[tuple[dict, dict | None]]:
    """(message, part) pairs ordered by session, message time and id, part id; part None for a partless message.

    Raises QueryAborted (an sqlite3.Error) when the query passes its budget.
    """
    message_columns = [name for name in MESSAGE_COLUMNS if name in sqlite_safe.stored_columns(connection, "message")]
    part_stored = sqlite_safe.stored_columns(connection, "part") if with_parts else []
    join = with_parts and "message_id" in part_stored and "id" in part_stored
    part_columns = [name for name in PART_COLUMNS if name in part_stored] if join else []
    select = [_rowid(connection, "message", "m")] + [_capped("m", name) for name in message_columns]
    if join:
        select += [_rowid(connection, "part", "p")] + [_capped("p", name) for name in part_columns]
    order = [f'm."{name}"' for name in ("session_id", "time_created", "id") if name in message_columns] or [select[0]]
    sql = f"SELECT {', '.join(select)} FROM message AS m"
    if join:
        sql += " LEFT JOIN part AS p ON p.message_id = m.id"
    sql += " ORDER BY " + ", ".join(order + (['p."id"'] if join else []))
    width = 1 + 2 * len(message_columns)
    for values in sqlite_safe.rows(connection, sql, (), "message and part rows"):
        message = {"_rowid": values[0], **_pairs(message_columns, values[1:width])}
        part = None
        if join and values[width] is not None or join and any(value is not None for value in values[width + 1:]):
            part = {"_rowid": values[width], **_pairs(part_columns, values[width + 1:])}
        yield message, part


def _pairs(names: list[str], values: tuple) -> dict:
    return {name: _value(values[2 * index], values[2 * index + 1]) for index, name in enumerate(names)}
