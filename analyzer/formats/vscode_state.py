"""VS Code ``state.vscdb``: the ItemTable key/value store, from a read-only copy.

Schema: ``ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``; values
are text (often JSON) written into a BLOB column. An extension's globalState is
one row keyed by its identifier with the manifest's casing (e.g.
``PearAI.pearai-roo-cline``), holding one JSON object. ``secret://`` rows are
encrypted SecretStorage entries: never selected, never decoded.

References: voideditor/void@b3166e7e src/vs/base/parts/storage/node/storage.ts:329-331;
src/vs/workbench/api/common/extHostMemento.ts:109-121 (research/formats-vscode-family.md 1.3, 1.5, 1.6).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from aitrail.analyzer import sqlite_safe
from aitrail.analyzer.bundle import Source
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.decode import decode_json


class StateUnreadable(Exception):
    """The database, or the row asked for, cannot be read; the message says why."""


@dataclass
class ItemRow:
    key: str
    rowid: int
    value: str

    def locator(self) -> str:
        return f"sqlite:ItemTable:{self.rowid}"


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def read_row(ctx: ParseContext, key: str, source: Source | None = None) -> ItemRow | None:
    """The ItemTable row with this exact key, or None; StateUnreadable if the database is damaged."""
    try:
        connection = ctx.sqlite(source)
    except sqlite3.Error as exc:
        raise StateUnreadable(f"cannot open state.vscdb: {exc}") from exc
    try:
        if not sqlite_safe.is_real_table(connection, "ItemTable"):  # a view could compute anything
            raise StateUnreadable("cannot query ItemTable: no such table: ItemTable")
        if "value" not in sqlite_safe.stored_columns(connection, "ItemTable"):  # generated columns are not read
            raise StateUnreadable("cannot query ItemTable: no such column: value")
        found = next(sqlite_safe.table_rows(connection, "ItemTable", f"ItemTable row {key!r}", ("value",),
                                            "key = ?", (key,)), None)
    except (sqlite3.Error, MemoryError) as exc:
        raise StateUnreadable(f"cannot query ItemTable: {exc}") from exc
    finally:
        connection.close()
    if found is None:
        return None
    if isinstance(found.get("value"), sqlite_safe.Oversize):
        raise StateUnreadable(f"row {key!r} is too large to read ({found['value'].describe()})")
    return ItemRow(key, found["_rowid"], _text(found.get("value")))


def extension_state(row: ItemRow) -> dict:
    """The JSON object of an extension's globalState row; StateUnreadable if it is not one."""
    try:
        value = decode_json(row.value)
    except ValueError as exc:
        raise StateUnreadable(f"row {row.key!r} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise StateUnreadable(f"row {row.key!r} is a JSON {type(value).__name__}, not an object")
    return value
