"""Roo Code's globalState row in state.vscdb: auto-approval switches, command lists, custom modes, task list.

The row's key is the extension identifier in its manifest's casing,
``RooVeterinaryInc.roo-cline`` (the storage folder is the lower-cased
``rooveterinaryinc.roo-cline``). Besides the standing permissions it holds
provider settings, among them ``openRouterImageApiKey``: only the keys named
here are read, so no other value can reach a row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.formats.vscode_state import (
    ItemRow,
    StateUnreadable,
    approval_rows,
    extension_state,
    read_row,
)
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .history import history_rows

EXTENSION_ROW = "RooVeterinaryInc.roo-cline"
# packages/types/src/global-settings.ts:98-113 (RooCodeInc/Roo-Code@cb83656); alwaysAllowBrowser and
# alwaysApproveResubmit are the 3.1x names, still read where an older install left them
APPROVAL_KEYS = (
    "autoApprovalEnabled", "alwaysAllowReadOnly", "alwaysAllowReadOnlyOutsideWorkspace", "alwaysAllowWrite",
    "alwaysAllowWriteOutsideWorkspace", "alwaysAllowWriteProtected", "alwaysAllowBrowser", "alwaysApproveResubmit",
    "alwaysAllowMcp", "alwaysAllowModeSwitch", "alwaysAllowSubtasks", "alwaysAllowExecute",
    "alwaysAllowFollowupQuestions", "allowedCommands", "deniedCommands", "allowedMaxRequests", "allowedMaxCost",
)


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb (or its .backup): the RooVeterinaryInc.roo-cline row.

    One ``permission setting:`` row per auto-approval key present and per custom mode's tool
    groups (at the file's mtime), then one ``task:`` row per taskHistory entry whose task has
    no history_item.json in the bundle. A damaged database or row is one ``parser:`` row.
    """
    loaded = _extension_row(ctx)
    if isinstance(loaded, Draft):
        yield loaded
    if not isinstance(loaded, tuple):
        return  # unreadable (said above), or no Roo Code row in this database
    row, state = loaded
    yield from approval_rows(ctx, state, row, EXTENSION_ROW, APPROVAL_KEYS)
    yield from custom_mode_rows(ctx, state.get("customModes"), row.locator())
    history = state.get("taskHistory")
    if history is not None and not isinstance(history, list):
        yield bad_record(f"{row.locator()}/taskHistory", "taskHistory is not an array")
    elif history:
        yield from history_rows(ctx, history, f"{row.locator()}/taskHistory")


def _extension_row(ctx: ParseContext) -> tuple[ItemRow, dict] | Draft | None:
    """The extension's row and its JSON object; the ``parser:`` row when unreadable; None when absent."""
    try:
        row = read_row(ctx, EXTENSION_ROW)
        return (row, extension_state(row)) if row is not None else None
    except StateUnreadable as exc:
        return bad_file(f"{ctx.source.name}: {exc}")


def custom_mode_rows(ctx: ParseContext, modes: object, locator: str) -> Iterator[Draft]:
    """``permission setting: customModes[<slug>].groups=<groups>``: the tools each user-defined mode may use."""
    if modes is None:
        return
    if not isinstance(modes, list):
        yield bad_record(f"{locator}/customModes", "customModes is not an array")
        return
    for position, mode in enumerate(modes):
        where = f"{locator}/customModes/{position}"
        if not isinstance(mode, dict) or not isinstance(mode.get("slug"), str):
            yield bad_record(where, "custom mode without a slug")
            continue
        source = f" {mode['source']} mode," if isinstance(mode.get("source"), str) else ""  # global or project
        yield Draft("system", f"permission setting: customModes[{mode['slug']}].groups="
                              f"{setting_value(mode.get('groups'))} (from state.vscdb {EXTENSION_ROW.lower()},"
                              f"{source} file mtime)", f"{where}/groups", **file_mtime(ctx))
