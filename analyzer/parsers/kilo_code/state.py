"""Kilo Code's globalState row in state.vscdb: the task list and the standing auto-approval switches.

The row's key is the extension identifier ``kilocode.kilo-code`` (publisher
``kilocode``, name ``kilo-code``; src/package.json:2-5). Its JSON object holds
``taskHistory`` (every task's ``HistoryItem``: id, number, ts in ms, first
prompt, tokens, cost, workspace, mode, toolProtocol, status, parent and child
task ids) and the auto-approval keys. Only the keys named here are read: the
row also carries provider settings, and a value no key names never reaches a row.

The array is rewritten whole on every change (``updateGlobalState("taskHistory",
…)``; ``deleteTaskFromState`` filters a deleted task out), so a deleted task
survives only in older copies: ``state.vscdb.backup`` (VS Code's copy at the last
clean close, a secondary store read by this same parser) and the frames of the
``-wal`` (formats/sqlite_history.py: the database as of each earlier commit).
Every copy is read with the code the live row is read with; the rows of the
backup and of the WAL snapshots are secondary, so the engine keeps only those
that differ from a live row: a deleted task, or an earlier state of a task
(other token counts) or of a switch. Rows a WAL snapshot repeats from an
earlier snapshot or from the live row are not written again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.cline_tasks import number, task_row_text
from aitrail.analyzer.formats.snapshot_rows import RowRepeats, earlier_versions
from aitrail.analyzer.formats.text import bad_file, bad_record, json_document
from aitrail.analyzer.formats.vscode_state import approval_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms

EXTENSION_ROW = "kilocode.kilo-code"
# packages/types/src/global-settings.ts:75-99 (Kilo-Org/kilocode-legacy@56b73d3b): yoloMode and
# alwaysAllowDelete are Kilo's own; the rest are its Roo Code base's
APPROVAL_KEYS = (
    "autoApprovalEnabled", "yoloMode", "alwaysAllowReadOnly", "alwaysAllowReadOnlyOutsideWorkspace",
    "alwaysAllowWrite", "alwaysAllowWriteOutsideWorkspace", "alwaysAllowWriteProtected", "alwaysAllowDelete",
    "alwaysAllowBrowser", "alwaysAllowMcp", "alwaysAllowModeSwitch", "alwaysAllowSubtasks", "alwaysAllowExecute",
    "alwaysAllowFollowupQuestions", "allowedCommands", "deniedCommands", "allowedMaxRequests", "allowedMaxCost",
)
# Kilo's HistoryItem fields shown after the shared task row, in this order (packages/types/src/history.ts:7-40)
EXTRA_FIELDS = (("mode", "mode"), ("status", "status"), ("toolProtocol", "toolProtocol"),
                ("apiConfigName", "profile"), ("parentTaskId", "parent"), ("rootTaskId", "root"))


def task_text(item: dict) -> str:
    """``task: <task> | tokensIn=… tokensOut=… totalCost=… number=…`` plus Kilo's own HistoryItem fields."""
    extras = [f"{label}={item[key]}" for key, label in EXTRA_FIELDS if isinstance(item.get(key), str) and item[key]]
    if item.get("isFavorited") is True:
        extras.append("favorited")
    children = item.get("childIds")
    if isinstance(children, list) and children:
        extras.append("children=" + ",".join(str(child) for child in children))
    for key in ("cacheWrites", "cacheReads", "size"):
        if key in item:
            extras.append(f"{key}={number(item[key])}")
    return task_row_text(item) + (" | " + " ".join(extras) if extras else "")


def task_row(item: object, locator: str) -> Draft:
    """The ``task:`` row of one HistoryItem (at its ``ts``, id as session, workspace as project), or a parser row."""
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        return bad_record(locator, "task history entry without an id", json.dumps(item)[:2000])
    stamp = ns_from_ms(item.get("ts"))
    return Draft("system", task_text(item), locator, timestamp_ns=stamp,
                 timestamp_source="record" if stamp is not None else "none", session_id=item["id"],
                 project_path=str(item.get("workspace") or ""))


def history_rows(entries: object, locator: str) -> Iterator[Draft]:
    """A ``task:`` row per entry of a task list (``locator`` is the list's own)."""
    if not isinstance(entries, list):
        yield bad_record(locator, "taskHistory is not an array")
        return
    for position, item in enumerate(entries):
        yield task_row(item, f"{locator}/{position}")


def state_rows(ctx: ParseContext, connection) -> Iterator[Draft]:
    """The rows of the extension's row in one open database: approval switches, then the task list.

    Raises:
        sqlite3.Error: the database cannot be queried (QueryAborted among them).
    """
    row = vscode_db.extension_row(connection, EXTENSION_ROW)
    if row is None:
        return
    try:
        state = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"row {EXTENSION_ROW!r} is not readable JSON: {exc}")
        return
    if not isinstance(state, dict):
        yield bad_record(row.locator(), f"row {EXTENSION_ROW!r} is a JSON {type(state).__name__}, not an object")
        return
    yield from approval_rows(ctx, state, row, EXTENSION_ROW, APPROVAL_KEYS)
    if "taskHistory" in state:
        yield from history_rows(state["taskHistory"], row.locator("taskHistory"))


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb (or its .backup): the kilocode.kilo-code row, then its earlier versions in the WAL.

    One ``permission setting:`` row per auto-approval key present (at the file's mtime),
    one ``task:`` row per taskHistory entry. Then, for each earlier commit the ``-wal``
    holds, the same rows as of that commit, secondary, locator ``wal:<k>/sqlite:…``,
    less those already written. A damaged database or row is one ``parser:`` row.
    """
    repeats = RowRepeats()
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open state.vscdb: {exc}")
        return
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # not a database: said here
        if not vscode_db.has_table(connection, vscode_db.ITEM_TABLE):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(vscode_db.ITEM_TABLE)}")
            return
        for row in state_rows(ctx, connection):
            repeats.first(row)
            yield row
    except (sqlite3.Error, MemoryError) as exc:  # QueryAborted is a sqlite3.Error
        yield bad_file(f"{ctx.source.name}: cannot query ItemTable: {exc}")
        return
    finally:
        connection.close()
    yield from earlier_versions(ctx, lambda connection: state_rows(ctx, connection), repeats)


def parse_task_history_file(ctx: ParseContext) -> Iterator[Draft]:
    """task_history.json (builds that kept the task list in a file beside tasks/): a ``task:`` row per entry."""
    entries, problem = json_document(ctx.data, "task_history.json", list)
    if problem is not None:
        yield problem
        return
    yield from history_rows(entries, "json:")
