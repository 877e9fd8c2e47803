"""Cline's global state: the saoudrizwan.claude-dev row of state.vscdb, and ~/.cline/data/globalState.json.

Both hold ``autoApprovalSettings`` and ``yoloModeToggled``; the row also holds the C1
``taskHistory``. ``autoApprovalSettings`` has two shapes: before 3.2x ``actions``
``{readFiles, editFiles, executeCommands, useBrowser, useMcp}`` (cline/cline@053b49b
src/shared/AutoApprovalSettings.ts:1-27), later ``{version, enabled, favorites,
maxRequests, actions:{readFiles, readFilesExternally, editFiles, editFilesExternally,
executeSafeCommands, executeAllCommands, useBrowser, useMcp}, enableNotifications}``
(cline/cline@e1bdeef apps/vscode/src/shared/AutoApprovalSettings.ts:1-44). Each key is
read as the file has it, so both shapes give their own rows. Secrets (``apiKey`` and
the other SECRETS_KEYS) are never in this row (they are ``secret://`` rows, never read)
and no other key of the state is written into a row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.formats.vscode_state import read_extension_state
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .history import EXTENSION_ROW, history_rows, listed_in_history_files

SWITCHES = ("yoloModeToggled",)  # the standing "approve everything" switch (state-keys.ts)


def approval_rows(state: dict, locator: str, origin: str, when: dict) -> Iterator[Draft]:
    """A ``permission setting:`` row per autoApprovalSettings key, then per switch.

    ``autoApprovalSettings.<key>=<value> (from <origin>, file mtime)``: ``actions`` is
    written one row per action, every other key of the settings as it is.
    """
    suffix = f" (from {origin}, file mtime)"
    settings = state.get("autoApprovalSettings")
    if settings is not None and not isinstance(settings, dict):
        yield bad_record(f"{locator}/autoApprovalSettings", "autoApprovalSettings is not an object")
    for key, value in (settings or {}).items():
        if key == "actions" and isinstance(value, dict):
            for action, allowed in value.items():
                yield Draft("system", f"permission setting: autoApprovalSettings.actions.{action}="
                                      f"{setting_value(allowed)}{suffix}",
                            f"{locator}/autoApprovalSettings/actions/{action}", **when)
        else:
            yield Draft("system", f"permission setting: autoApprovalSettings.{key}={setting_value(value)}{suffix}",
                        f"{locator}/autoApprovalSettings/{key}", **when)
    for key in SWITCHES:
        if key in state:
            yield Draft("system", f"permission setting: {key}={setting_value(state[key])}{suffix}",
                        f"{locator}/{key}", **when)


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb's saoudrizwan.claude-dev row: ``permission setting:`` rows, then a ``task:`` row per C1 task.

    Settings take the file's mtime; tasks their own ``ts``. A task the storage's
    taskHistory.json also lists is that file's row, not this one's (one row per task).
    """
    found = yield from read_extension_state(ctx, EXTENSION_ROW)
    if found is None:
        return
    row, state = found
    # "state.vscdb" also for the .backup copy, so that an unchanged setting deduplicates against the live one
    yield from approval_rows(state, row.locator(), f"state.vscdb {EXTENSION_ROW}", file_mtime(ctx))
    if "taskHistory" in state:
        yield from history_rows(state["taskHistory"], f"{row.locator()}/taskHistory", listed_in_history_files(ctx))


def parse_global_state_json(ctx: ParseContext) -> Iterator[Draft]:
    """~/.cline/data/globalState.json: the same ``permission setting:`` rows, from the file-backed state."""
    state, problem = json_document(ctx.data, "globalState.json", dict)
    if problem is not None:
        yield problem
        return
    yield from approval_rows(state, "json:", "globalState.json", file_mtime(ctx))
