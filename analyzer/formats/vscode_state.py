"""VS Code ``state.vscdb``: the ItemTable key/value store, from a read-only copy.

Schema: ``ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``; values
are text (often JSON) written into a BLOB column. An extension's globalState is
one row keyed by its identifier with the manifest's casing (e.g.
``PearAI.pearai-roo-cline``), holding one JSON object. ``secret://`` rows are
encrypted SecretStorage entries: never selected, never decoded.

Cline and its forks keep their task list (``taskHistory``) and their
auto-approval switches (``alwaysAllow*``, ``allowedCommands``) in that row:
``global_state_rows`` turns them into ``task:`` and ``permission setting:``
rows, and ``task_workspaces`` gives the task walk each task's workspace.

References: voideditor/void@b3166e7e src/vs/base/parts/storage/node/storage.ts:329-331;
src/vs/workbench/api/common/extHostMemento.ts:109-121 (research/formats-vscode-family.md 1.3, 1.5, 1.6).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.cline_tasks import task_row_text
from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_file, bad_record, json_document
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms


class StateUnreadable(Exception):
    """The database, or the row asked for, cannot be read; the message says why."""


@dataclass
class ItemRow:
    """One ItemTable row: its key, rowid and value as text."""

    key: str
    rowid: int
    value: str

    def locator(self) -> str:
        """``sqlite:ItemTable:<rowid>``, the row's locator."""
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


# -- an extension's globalState: task history and auto-approval keys ----------------------------


def global_state_rows(ctx: ParseContext, extension_row: str, approval_keys: Iterable[str]) -> Iterator[Draft]:
    """One ``permission setting:`` row per auto-approval key set, then one ``task:`` row per taskHistory entry.

    Args:
        ctx: a ``state.vscdb`` (or its ``.backup``).
        extension_row: the ItemTable key of the extension's globalState (manifest casing).
        approval_keys: the keys that are standing permissions, in the order rows are written.

    Settings take the file's mtime (the database records no time for them); tasks take
    their own ``ts``, id and workspace. An unreadable database or row is one ``parser:`` row.
    """
    found = yield from read_extension_state(ctx, extension_row)
    if found is None:
        return
    row, state = found
    yield from approval_rows(ctx, state, row, extension_row, approval_keys)
    yield from task_history_rows(state, row.locator())


def read_extension_state(ctx: ParseContext, extension_row: str) -> Generator[Draft, None, tuple[ItemRow, dict] | None]:
    """The extension's row and its state object (the generator's return value), or None.

    Yields the one ``parser:`` row of an unreadable database or row; a database without
    the row gives None and no row. Use as ``found = yield from read_extension_state(...)``.
    """
    try:
        row = read_row(ctx, extension_row)
        state = extension_state(row) if row is not None else None
    except StateUnreadable as exc:
        yield bad_file(f"{ctx.source.name}: {exc}")
        return None
    return None if state is None else (row, state)


def approval_rows(ctx: ParseContext, state: dict, row: ItemRow, extension_row: str,
                  approval_keys: Iterable[str]) -> Iterator[Draft]:
    """``permission setting: <key>=<value> (from state.vscdb <extension>, file mtime)`` per key present."""
    locator, mtime = row.locator(), file_mtime(ctx)
    for key in approval_keys:
        if key in state:
            # "state.vscdb" even for the .backup copy: the source column names the file, and
            # the same text lets a setting unchanged since the backup deduplicate against the live one
            yield Draft("system", f"permission setting: {key}={setting_value(state[key])} (from state.vscdb "
                                  f"{extension_row.lower()}, file mtime)", f"{locator}/{key}", **mtime)


def task_history_rows(state: dict, locator: str) -> Iterator[Draft]:
    """A ``task:`` row per taskHistory entry, at its ``ts``, with its id and workspace."""
    history = state.get("taskHistory")
    if history is not None and not isinstance(history, list):
        yield bad_record(f"{locator}/taskHistory", "taskHistory is not an array")
        return
    for position, item in enumerate(history or ()):
        where = f"{locator}/taskHistory/{position}"
        if not isinstance(item, dict) or not item.get("id"):
            yield bad_record(where, "task history entry without an id", json.dumps(item)[:2000])
            continue
        yield Draft("system", task_row_text(item), where, timestamp_ns=ns_from_ms(item.get("ts")),
                    session_id=str(item["id"]), project_path=str(item.get("workspace") or ""))


def task_workspaces(ctx: ParseContext, extension_row: str, store: str = "global_state") -> dict[str, str]:
    """TaskHistory id -> workspace, from every ``store`` database of the bundle (read once per worker)."""
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for source in ctx.related(store):
            try:
                row = read_row(ctx, extension_row, source)
                history = extension_state(row).get("taskHistory") if row else None
            except StateUnreadable:
                continue
            for item in history if isinstance(history, list) else ():
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item.get("workspace"):
                    found.setdefault(item["id"], str(item["workspace"]))
        return found

    return ctx.cached(("task-workspaces", extension_row, store), load)


def editor_setting_rows(ctx: ParseContext, keys: Iterable[str]) -> Iterator[Draft]:
    """An editor's ``User/settings.json`` (JSONC): a ``permission setting:`` row per key of ``keys`` present.

    Only the keys named are read (an extension's allowed and denied command
    lists); the rest of the user's settings never reach a row. At the file's mtime.
    """
    document, problem = json_document(ctx.data, "settings.json", dict, loads=load_jsonc)
    if problem is not None:
        yield problem
        return
    for key in keys:
        if key in document:
            yield Draft("system", f"permission setting: {key}={setting_value(document[key])} (from settings.json, "
                                  "file mtime)", pointer(key), **file_mtime(ctx))
