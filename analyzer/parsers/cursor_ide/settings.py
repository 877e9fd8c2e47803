"""The applicationUser blob of the global ItemTable: auto-run ("YOLO") allow/deny lists and model settings.

Only the keys named here are read from the blob; it also holds account and
endpoint settings, which never reach a row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

APPLICATION_USER = ("src.vs.platform.reactivestorage.browser.reactiveStorageServiceImpl."
                    "persistentStorage.applicationUser")
# composerState keys that are standing permissions (research/formats-vscode-family.md 3.2)
AUTO_RUN_KEYS = (
    "useYoloMode", "yoloCommandAllowlist", "yoloCommandDenylist", "yoloDotFilesDisabled",
    "yoloOutsideWorkspaceDisabled", "yoloDeleteFileDisabled", "yoloMcpToolsDisabled", "playwrightProtection",
)
MODE_KEYS = ("autoRun", "fullAutoRun")
ORIGIN = "(from state.vscdb applicationUser, file mtime)"


def settings_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    """``permission setting:`` rows for the auto-run keys, ``model:`` rows for each configured surface.

    Raises:
        sqlite3.Error: ItemTable cannot be read.
    """
    row = next(vscode_db.rows_by_key(connection, APPLICATION_USER), None)
    if row is None:
        return
    try:
        blob = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"applicationUser is not JSON: {exc}")
        return
    if not isinstance(blob, dict):
        yield bad_record(row.locator(), f"applicationUser is a JSON {type(blob).__name__}, not an object")
        return
    mtime = file_mtime(ctx)
    state = blob.get("composerState")
    if isinstance(state, dict):
        for key in AUTO_RUN_KEYS:
            if key in state:
                yield Draft("system", f"permission setting: composerState.{key}={setting_value(state[key])} {ORIGIN}",
                            row.locator("composerState", key), **mtime)
        yield from _mode_rows(row, state.get("modes4"), mtime)
    yield from _model_rows(row, blob.get("aiSettings"), mtime)


def _mode_rows(row: vscode_db.KeyRow, modes, mtime: dict) -> Iterator[Draft]:
    for position, mode in enumerate(modes if isinstance(modes, list) else ()):
        if not isinstance(mode, dict):
            continue
        name = mode.get("id") if isinstance(mode.get("id"), str) else str(position)
        for key in MODE_KEYS:
            if key in mode:
                yield Draft("system", f"permission setting: composerState.modes4[{name}].{key}="
                                      f"{setting_value(mode[key])} {ORIGIN}",
                            row.locator("composerState", "modes4", position, key), **mtime)


def _model_rows(row: vscode_db.KeyRow, settings, mtime: dict) -> Iterator[Draft]:
    """Newer builds: ``aiSettings.modelConfig.<surface>.modelName``; older: ``aiSettings.<surface>Model`` strings."""
    if not isinstance(settings, dict):
        return
    for key, value in settings.items():
        if key.endswith("Model") and isinstance(value, str) and value:
            yield Draft("system", f"model: {value} (setting aiSettings.{key}, file mtime)",
                        row.locator("aiSettings", key), model=value, **mtime)
    config = settings.get("modelConfig")
    for surface, value in (config.items() if isinstance(config, dict) else ()):
        name = value.get("modelName") if isinstance(value, dict) else None
        if isinstance(name, str) and name:
            yield Draft("system", f"model: {name} (setting aiSettings.modelConfig.{surface}, file mtime)",
                        row.locator("aiSettings", "modelConfig", surface), model=name, **mtime)
