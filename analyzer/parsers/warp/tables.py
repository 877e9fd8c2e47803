"""warp.sqlite read defensively: only the tables and columns this parser knows, each one checked first.

The schema is Warp's (warpdotdev/warp@19548aec62 crates/persistence/src/schema.rs),
but a collected database can be of any build since 2021, or hostile. So:

* a table is read only when it is a real table (``sqlite_safe.is_real_table``),
  and only the columns named here (``sqlite_safe.table_rows`` with an explicit
  column list): the credential tables (catalog ``credential_tables``) and every
  other column are never selected;
* a missing table is one ``parser:`` row and nothing is read from it; a missing
  column is one ``parser:`` row and the rows are read without it (a column a
  later migration added is missing in older builds, which is why the row names
  that possibility);
* a value over the length limit is one ``parser:`` row (``sqlite_values``).

Times: every DATETIME/TIMESTAMP column this parser reads is written in UTC
without a zone: ``start_ts``/``completed_ts`` through chrono's ``naive_utc()``
(app/src/persistence/block_list.rs:79,316-317), ``last_modified_at`` by
SQLite's ``CURRENT_TIMESTAMP`` default and update triggers (migration
2025-06-09-013710_create_agent_conversations_table), UTC by SQLite's
definition. They are read as UTC for that reason and no other
(``sqlite_chat.ns_from_sqlite_text``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.sqlite_chat import ns_from_sqlite_text
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.rows import Draft

# table -> the columns read, and the migration that added the ones older builds lack
COLUMNS = {
    "agent_conversations": ("conversation_id", "conversation_data", "last_modified_at", "summary"),
    "agent_tasks": ("conversation_id", "task_id", "last_modified_at"),  # task: its length only, never its bytes
    "ai_queries": ("exchange_id", "conversation_id", "start_ts", "input", "working_directory", "output_status",
                   "model_id"),
    "blocks": ("block_id", "stylized_command", "stylized_output", "pwd", "git_branch", "git_branch_name",
               "exit_code", "did_execute", "start_ts", "completed_ts", "ai_metadata"),
}


def missing_table(table: str) -> Draft:
    """The row for an expected table that is not there (or is a view or a virtual table)."""
    return Draft("system", f"parser: table {table} is missing (a Warp build from before it, or another schema): "
                           "nothing was read from it", f"sqlite:{table}", timestamp_source="none")


def missing_columns(connection: sqlite3.Connection, table: str) -> Iterator[Draft]:
    """One row per column of COLUMNS[table] the table does not store."""
    stored = set(sqlite_safe.stored_columns(connection, table))
    for column in COLUMNS[table]:
        if column not in stored:
            yield missing_column(table, column)


def missing_column(table: str, column: str) -> Draft:
    """The row for an expected column that the table does not store."""
    return Draft("system", f"parser: table {table} has no column {column} (a Warp build from before it, or another "
                           "schema): its rows are read without it", f"sqlite:{table}", timestamp_source="none")


def has_column(connection: sqlite3.Connection, table: str, column: str) -> bool:
    """True when ``table`` stores ``column`` (not a generated column)."""
    return column in sqlite_safe.stored_columns(connection, table)


def read_table(connection: sqlite3.Connection, table: str, where: str = "", order: str = "rowid") -> Iterator[
        tuple[dict, list[Draft]]]:
    """Each row of ``table`` (only COLUMNS[table]) with the ``parser:`` rows of its values too long to read.

    The caller has checked that the table is real. ``where`` may only name
    columns the caller has checked are stored.
    """
    clause = f"{where} ORDER BY {order}" if where else f"1 ORDER BY {order}"
    for row in sqlite_safe.table_rows(connection, table, f"{table} rows", COLUMNS[table], where=clause):
        locator = f"sqlite:{table}:{row.get('_rowid')}"
        yield row, list(oversize_rows(row, locator))


def when(value) -> dict:
    """The time columns of a UTC DATETIME text (see the module docstring); untimed when it is not one."""
    ns = ns_from_sqlite_text(value) if isinstance(value, str) else None
    return {"timestamp_ns": ns, "timestamp_source": "record" if ns is not None else "none"}


def text_value(value) -> str:
    """A column value as text: '' for NULL, bytes decoded as UTF-8 (replacing what is not)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
