"""Cline's task lists: state/taskHistory.json (3.28+, CLI/JetBrains) and the C1 globalState taskHistory.

A ``HistoryItem`` is ``{id, ulid?, ts, task, tokensIn, tokensOut, cacheWrites?,
cacheReads?, totalCost, size?, cwdOnTaskInitialization?, isFavorited?, modelId?}``
(cline/cline@21cb8d2 apps/vscode/src/shared/HistoryItem.ts:1-19). Each entry is one
``task:`` row; ``task_index`` gives the task walk each task's workspace and tells the
globalState reader which tasks the newer file already lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import number
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.formats.vscode_state import StateUnreadable, extension_state, read_row
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms

EXTENSION_ROW = "saoudrizwan.claude-dev"
HISTORY_STORES = ("task_history", "data_task_history")
STATE_STORES = ("global_state",)
_STORAGE_MARKERS = (f"/{EXTENSION_ROW}/", "/tasks/", "/state/")


def storage_of(source: Source) -> tuple[str, str]:
    """The extension storage a file belongs to: ``(location, <user dir>/globalStorage)`` or ``~/.cline/data``.

    A task folder, its task list and the state.vscdb beside the extension's folder share one key,
    so that VS Code stable and Insiders (and the CLI's data directory) keep their tasks apart.
    """
    path = source.path
    for marker in _STORAGE_MARKERS:
        if marker in path:
            return source.location, path.split(marker, 1)[0]
    return source.location, source.directory


def task_row(item: dict, where: str) -> Draft:
    """``task: <task> | tokensIn=<n> tokensOut=<n> totalCost=<n>`` (+ `` modelId=<id>``) at the entry's ``ts``."""
    text = (f"task: {item.get('task', '')} | tokensIn={number(item.get('tokensIn'))} "
            f"tokensOut={number(item.get('tokensOut'))} totalCost={number(item.get('totalCost'))}")
    if isinstance(item.get("modelId"), str) and item["modelId"]:
        text += f" modelId={item['modelId']}"
    return Draft("system", text, where, timestamp_ns=ns_from_ms(item.get("ts")), session_id=str(item["id"]),
                 project_path=str(item.get("cwdOnTaskInitialization") or ""))


def history_rows(history, locator: str, skip: frozenset = frozenset()) -> Iterator[Draft]:
    """A ``task:`` row per entry of a HistoryItem array (entries whose id is in ``skip`` left out)."""
    if not isinstance(history, list):
        yield bad_record(locator or "file", "taskHistory is not an array")
        return
    for position, item in enumerate(history):
        where = f"{locator}/{position}"
        if not isinstance(item, dict) or not isinstance(item.get("id"), (str, int)) or item.get("id") == "":
            yield bad_record(where, "task history entry without an id", json.dumps(item)[:2000])
        elif str(item["id"]) not in skip:
            yield task_row(item, where)


def parse_task_history(ctx: ParseContext) -> Iterator[Draft]:
    """state/taskHistory.json: one ``task:`` row per entry, at its ``ts``, its workspace as project."""
    history, problem = json_document(ctx.data, "taskHistory.json", list)
    if problem is not None:
        yield problem
        return
    yield from history_rows(history, "json:")


def _entries(history) -> Iterator[dict]:
    for item in history if isinstance(history, list) else ():
        if isinstance(item, dict) and isinstance(item.get("id"), (str, int)) and item.get("id") != "":
            yield item


def _history_file_entries(ctx: ParseContext, source: Source) -> list[dict]:
    try:
        return list(_entries(decode_json(ctx.read(source))))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return []


def _state_entries(ctx: ParseContext, source: Source) -> list[dict]:
    try:
        row = read_row(ctx, EXTENSION_ROW, source)
        return list(_entries(extension_state(row).get("taskHistory"))) if row else []
    except StateUnreadable:
        return []


def task_index(ctx: ParseContext) -> dict[tuple[str, str, str], dict]:
    """(location, storage, task id) -> its HistoryItem, from every task list of the bundle (once per worker).

    The taskHistory.json entry wins over the globalState one (the newer generation); the
    globalState key of a migrated install is cleared, so they meet only in a half-migrated one.
    """
    def load() -> dict[tuple[str, str, str], dict]:
        found: dict[tuple[str, str, str], dict] = {}
        for store in HISTORY_STORES:
            for source in ctx.related(store):
                for item in _history_file_entries(ctx, source):
                    found.setdefault((*storage_of(source), str(item["id"])), item)
        for store in STATE_STORES:
            for source in ctx.related(store):
                for item in _state_entries(ctx, source):
                    found.setdefault((*storage_of(source), str(item["id"])), item)
        return found

    return ctx.cached(("cline-task-index",), load)


def listed_in_history_files(ctx: ParseContext) -> frozenset:
    """Ids of the tasks a taskHistory.json of this file's storage lists (their ``task:`` row is that file's)."""
    def load() -> dict[tuple[str, str], frozenset]:
        found: dict[tuple[str, str], set] = {}
        for store in HISTORY_STORES:
            for source in ctx.related(store):
                found.setdefault(storage_of(source), set()).update(
                    str(item["id"]) for item in _history_file_entries(ctx, source))
        return {key: frozenset(ids) for key, ids in found.items()}

    return ctx.cached(("cline-history-file-ids",), load).get(storage_of(ctx.source), frozenset())
