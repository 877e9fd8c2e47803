"""Roo Code's task list, kept three times: history_item.json, tasks/_index.json and globalState taskHistory.

Since 3.49 each task's ``HistoryItem`` is ``tasks/<id>/history_item.json`` (the
source of truth), cached in ``tasks/_index.json`` (``{version, updatedAt,
entries[]}``, secondary in the catalog) and written through to the
``taskHistory`` key of the extension's globalState row; before 3.49 only the
globalState array existed. All three are repeats of the same entries, so a task
gets ONE ``task:`` row: from its history_item.json when the bundle has one;
otherwise from taskHistory (and the backup database) and _index.json, whose
rows are spelled alike so the run drops the secondary repeats.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import task_row_text
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms

HISTORY_ITEM = "history_item.json"
HISTORY_ITEM_STORES = ("history_items", "history_items_custom")
# Roo's own HistoryItem fields (packages/types/src/history.ts) shown after the shared task row, in this order
EXTRA_FIELDS = (("mode", "mode"), ("status", "status"), ("parentTaskId", "parent"), ("rootTaskId", "root"))


def task_text(item: dict) -> str:
    """``task: <task> | tokensIn=… tokensOut=… totalCost=… number=…`` plus Roo's mode, status and parent task."""
    extras = [f"{label}={item[key]}" for key, label in EXTRA_FIELDS if isinstance(item.get(key), str) and item[key]]
    children = item.get("childIds")
    if isinstance(children, list) and children:
        extras.append("children=" + ",".join(str(child) for child in children))
    return task_row_text(item) + (" | " + " ".join(extras) if extras else "")


def task_row(item: object, locator: str) -> Draft:
    """The ``task:`` row of one HistoryItem (at its ``ts``, id as session, workspace as project), or a parser row."""
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        return bad_record(locator, "task history entry without an id", json.dumps(item)[:2000])
    return Draft("system", task_text(item), locator, timestamp_ns=ns_from_ms(item.get("ts")),
                 timestamp_source="record", session_id=item["id"], project_path=str(item.get("workspace") or ""))


def items_with_own_file(ctx: ParseContext) -> frozenset[str]:
    """Ids of the tasks whose history_item.json is in the bundle (their folder's name), once per worker."""
    def load() -> frozenset[str]:
        return frozenset(source.directory.rsplit("/", 1)[-1]
                         for store in HISTORY_ITEM_STORES for source in ctx.related(store))

    return ctx.cached(("roo-code-history-items",), load)


def history_rows(ctx: ParseContext, entries: list, locator: str) -> Iterator[Draft]:
    """A ``task:`` row per entry of a copied task list, except tasks whose history_item.json is in the bundle.

    ``locator`` is the list's own (``json:/entries``, ``sqlite:ItemTable:3/taskHistory``).
    """
    own = items_with_own_file(ctx)
    for position, item in enumerate(entries):
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"] in own:
            continue  # that task's row comes from its history_item.json
        yield task_row(item, f"{locator}/{position}")


def parse_history_item(ctx: ParseContext) -> Iterator[Draft]:
    """tasks/<id>/history_item.json (3.49+): the task's one ``task:`` row."""
    item, problem = json_document(ctx.data, HISTORY_ITEM, dict)
    yield problem if problem is not None else task_row(item, "file")


def parse_task_index(ctx: ParseContext) -> Iterator[Draft]:
    """tasks/_index.json (3.49+, secondary): a ``task:`` row per entry whose history_item.json is not in the bundle."""
    index, problem = json_document(ctx.data, "_index.json", dict)
    entries = index.get("entries") if problem is None else None
    if isinstance(entries, list):
        yield from history_rows(ctx, entries, "json:/entries")
    else:  # not JSON, or no entry list in it
        yield problem or bad_record("json:/entries", "entries is not an array")


def workspace_of(ctx: ParseContext, task: str) -> str:
    """The workspace history_item.json records for this task folder ('' when absent or unreadable)."""
    for store in HISTORY_ITEM_STORES:
        source = ctx.sibling(HISTORY_ITEM, store)
        if source is None:
            continue
        try:
            item, problem = json_document(ctx.read(source), HISTORY_ITEM, dict)
        except MemberUnreadable:  # too large or damaged: the rows go without a project
            return ""
        if problem is None and item.get("id", task) == task:
            return str(item.get("workspace") or "")
    return ""
