"""PearAI's state.vscdb row: the task list and the standing auto-approval keys."""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import cline_tasks as tasks
from aitrail.analyzer.formats.idioms import file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.formats.vscode_state import StateUnreadable, extension_state, read_row
from aitrail.analyzer.rows import Draft, ns_from_ms

EXTENSION_ROW = "PearAI.pearai-roo-cline"
APPROVAL_KEYS = (
    "autoApprovalEnabled", "alwaysAllowReadOnly", "alwaysAllowReadOnlyOutsideWorkspace", "alwaysAllowWrite",
    "alwaysAllowWriteOutsideWorkspace", "alwaysAllowBrowser", "alwaysApproveResubmit", "alwaysAllowMcp",
    "alwaysAllowModeSwitch", "alwaysAllowSubtasks", "alwaysAllowExecute", "allowedCommands",
)


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb's PearAI row: a ``permission setting:`` row per auto-approval key, a ``task:`` row per task.

    Settings take the file's mtime (the database records no time for them); tasks take their
    own ``ts``, session id and workspace.
    """
    try:
        row = read_row(ctx, EXTENSION_ROW)
        state = extension_state(row) if row is not None else None
    except StateUnreadable as exc:
        yield bad_file(f"{ctx.source.name}: {exc}")
        return
    if state is None:
        return
    locator = row.locator()
    mtime = file_mtime(ctx)
    for key in APPROVAL_KEYS:
        if key in state:
            value = setting_value(state[key])
            # "state.vscdb" even for the .backup copy: the source column names the file, and
            # the same text lets a setting unchanged since the backup deduplicate against the live one
            yield Draft("system", f"permission setting: {key}={value} (from state.vscdb "
                                  f"{EXTENSION_ROW.lower()}, file mtime)", f"{locator}/{key}", **mtime)
    history = state.get("taskHistory")
    if history is not None and not isinstance(history, list):
        yield bad_record(f"{locator}/taskHistory", "taskHistory is not an array")
        return
    for position, item in enumerate(history or ()):
        where = f"{locator}/taskHistory/{position}"
        if not isinstance(item, dict) or not item.get("id"):
            yield bad_record(where, "task history entry without an id", json.dumps(item)[:2000])
            continue
        yield Draft("system", tasks.task_row_text(item), where, timestamp_ns=ns_from_ms(item.get("ts")),
                    session_id=str(item["id"]), project_path=str(item.get("workspace") or ""))
