"""Per-workspace state.vscdb: the composer list (the project join), the legacy chat panel, prompt copies.

``composer.composerData.allComposers[].composerId`` says which composers belong
to the workspace; the folder's ``workspace.json`` names the project. The chat
panel of 2023-2024 (``workbench.panel.aichat.view.aichat.chatdata``) keeps whole
conversations as tabs; ``aiService.prompts`` and ``aiService.generations`` keep
copies of typed prompts (read as a secondary store).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, ITEM_TABLE
from aitrail.analyzer.formats.vscode_workspace import workspace_target
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

from . import held
from .bubbles import Conversation, bubble_rows
from .database import database_rows

COMPOSER_LIST = "composer.composerData"
CHAT_PANEL = "workbench.panel.aichat.view.aichat.chatdata"
PROMPTS, GENERATIONS = "aiService.prompts", "aiService.generations"
WORKSPACE_STORES = ("workspace_state", "workspace_state_backup")
GLOBAL_STORES = ("global_state", "global_state_backup", "legacy_state")


def _folder_projects(ctx: ParseContext) -> dict[tuple[str, str], str]:
    """(location, workspaceStorage folder) -> project path, from every workspace.json (else meta.json), once."""
    def load() -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], tuple[bool, str]] = {}
        for source in ctx.related("workspace_map"):
            folder, primary = (source.location, source.directory), source.name == "workspace.json"
            if folder in found and found[folder][0]:
                continue  # workspace.json already gave this folder's project
            try:
                target, _ = workspace_target(ctx.read(source))
            except MemberUnreadable:
                continue
            if target is not None and target.path:
                found[folder] = (primary, target.path)
        return {folder: path for folder, (_, path) in found.items()}

    return ctx.cached(("cursor_ide.folder_projects",), load)  # type: ignore[return-value]


def workspace_project(ctx: ParseContext, source: Source | None = None) -> str:
    """The project of a workspaceStorage folder: its workspace.json (or meta.json) target path, else ''."""
    source = source or ctx.source
    return _folder_projects(ctx).get((source.location, source.directory), "")


def _value(connection: sqlite3.Connection, key: str) -> tuple[vscode_db.KeyRow | None, object, str]:
    """(row, decoded JSON, '') or (row, None, why it is not readable); (None, None, '') when absent."""
    row = next(vscode_db.rows_by_key(connection, key, ITEM_TABLE), None)
    if row is None:
        return None, None, ""
    try:
        return row, row.json(), ""
    except ValueError as exc:
        return row, None, f"{key} is not JSON: {exc}"


def _listed(value: object) -> list[dict]:
    composers = value.get("allComposers") if isinstance(value, dict) else None
    return [item for item in composers if isinstance(item, dict)] if isinstance(composers, list) else []


def composer_projects(ctx: ParseContext) -> dict[str, str]:
    """Map composerId to project path, from every collected workspace database (live before backup), once per worker."""
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for store in WORKSPACE_STORES:
            for source in ctx.related(store):
                project = workspace_project(ctx, source)
                if not project:
                    continue
                try:
                    connection = vscode_db.open_state(ctx, source)
                    try:
                        _, value, _ = _value(connection, COMPOSER_LIST)
                    finally:
                        connection.close()
                except (sqlite3.Error, MemberUnreadable):
                    continue
                for item in _listed(value):
                    if isinstance(item.get("composerId"), str):
                        found.setdefault(item["composerId"], project)
        return found

    return ctx.cached(("cursor_ide.composer_projects",), load)  # type: ignore[return-value]


def _known_composers(ctx: ParseContext) -> tuple[frozenset[str], bool]:
    """Composer ids that have a composerData row in a collected global database (keys only, once per worker).

    Held within held.KNOWN_BUDGET (each id its characters plus held.ID_COST): past it
    the rest is not read, and the second value, whether the set is whole, is False.
    """
    def load() -> tuple[frozenset[str], bool]:
        found: set[str] = set()
        spent = 0
        for store in GLOBAL_STORES:
            for source in ctx.related(store):
                try:
                    connection = vscode_db.open_state(ctx, source)
                    try:
                        for row in vscode_db.scan_prefix(connection, "composerData:", CURSOR_TABLE, keys_only=True):
                            spent += len(row.key) + held.ID_COST
                            if spent > held.KNOWN_BUDGET:
                                return frozenset(found), False
                            found.add(row.key.removeprefix("composerData:"))
                    finally:
                        connection.close()
                except (sqlite3.Error, MemberUnreadable):
                    continue
        return frozenset(found), True

    return ctx.cached(("cursor_ide.known_composers",), load)  # type: ignore[return-value]


def _workspace_rows(ctx: ParseContext, rows: Callable[[sqlite3.Connection, str], Iterator[Draft]]) -> Iterator[Draft]:
    """``rows(connection, project)`` on the context's workspace database (project from its workspace.json)."""
    project = workspace_project(ctx)
    yield from database_rows(ctx, (ITEM_TABLE,), lambda connection: rows(connection, project))


def parse_workspace_state(ctx: ParseContext) -> Iterator[Draft]:
    """A workspace state.vscdb: listed composers absent from the global database, and the legacy chat panel.

    A listed composer with no composerData row is a ``session:`` row; the chat panel's
    tabs are user and assistant rows. The project is the folder's workspace.json.
    """
    def rows(connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
        yield from _listed_rows(ctx, connection, project)
        yield from _panel_rows(connection, project)

    yield from _workspace_rows(ctx, rows)


def _listed_rows(ctx: ParseContext, connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
    row, value, problem = _value(connection, COMPOSER_LIST)
    if problem:
        yield bad_record(row.locator(), problem)
        return
    if row is None:
        return
    known, whole = _known_composers(ctx)
    if not whole:
        yield over_limit("composer ids of the global databases", f"{held.KNOWN_BUDGET} bytes held, each id costing "
                         f"{held.ID_COST} more", "a listed composer not among them is given a session: row below, "
                         "though its conversation may be in a global database", row.locator(), project_path=project)
    composers = value.get("allComposers") if isinstance(value, dict) else None
    for position, item in enumerate(composers if isinstance(composers, list) else ()):
        composer = item.get("composerId") if isinstance(item, dict) else None
        if not isinstance(composer, str):
            yield bad_record(row.locator("allComposers", position), "composer entry without a composerId")
            continue
        if composer in known:
            continue  # its conversation is read from the global database, with this project
        name = item.get("name") if isinstance(item.get("name"), str) and item.get("name") else "(untitled)"
        yield Draft("system", f"session: {name} (listed in the workspace's composer list; its composerData "
                              "is not in the bundle)", row.locator("allComposers", position),
                    timestamp_ns=ns_from_ms(item.get("createdAt")), session_id=composer, project_path=project)


def _panel_rows(connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
    row, value, problem = _value(connection, CHAT_PANEL)
    if problem:
        yield bad_record(row.locator(), problem)
        return
    tabs = value.get("tabs") if isinstance(value, dict) else None
    if row is not None and not isinstance(tabs, list):
        yield bad_record(row.locator(), "chat panel data has no tabs array")
        return
    for position, tab in enumerate(tabs or ()):
        where = row.locator("tabs", position)
        if not isinstance(tab, dict):
            yield bad_record(where, "chat tab is not an object")
            continue
        tab_id = tab.get("tabId") if isinstance(tab.get("tabId"), str) else str(position)
        conversation = Conversation(tab_id, project, index_ns=ns_from_ms(tab.get("lastSendTime")))
        title = tab.get("chatTitle") if isinstance(tab.get("chatTitle"), str) else ""
        yield Draft("system", f"chat tab: {title or '(untitled)'}", where, timestamp_ns=conversation.index_ns,
                    timestamp_source="index", **conversation.columns())
        bubbles = tab.get("bubbles")
        for index, bubble in enumerate(bubbles if isinstance(bubbles, list) else ()):
            yield from bubble_rows(bubble, row.locator("tabs", position, "bubbles", index), conversation)
        yield from conversation.ledger.orphans()
        yield from conversation.ledger.over_limit_rows()


def parse_workspace_prompts(ctx: ParseContext) -> Iterator[Draft]:
    """aiService.prompts (no time) and aiService.generations (unixMs) as user rows: copies of typed prompts.

    The store is secondary: a row equal to a composer's user bubble is dropped by the run.
    """
    def rows(connection: sqlite3.Connection, project: str) -> Iterator[Draft]:
        yield from _prompt_rows(connection, PROMPTS, "text", None, project)
        yield from _prompt_rows(connection, GENERATIONS, "textDescription", "unixMs", project)

    yield from _workspace_rows(ctx, rows)


def _prompt_rows(connection: sqlite3.Connection, key: str, text_key: str, time_key: str | None,
                 project: str) -> Iterator[Draft]:
    row, value, problem = _value(connection, key)
    if problem or (row is not None and not isinstance(value, list)):
        yield bad_record(row.locator(), problem or f"{key} is not an array")
        return
    for position, item in enumerate(value or ()):
        text = item.get(text_key) if isinstance(item, dict) else None
        if not isinstance(text, str):
            yield bad_record(row.locator(position), f"{key} entry without {text_key}")
            continue
        when = ns_from_ms(item.get(time_key)) if time_key else None  # a generation's id is no session: none given
        yield Draft("user", text, row.locator(position), timestamp_ns=when, project_path=project)
