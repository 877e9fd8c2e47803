"""PearAI's state.vscdb row: the task list and the standing auto-approval keys (Roo Code 3.15 names)."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.vscode_state import global_state_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

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
    yield from global_state_rows(ctx, EXTENSION_ROW, APPROVAL_KEYS)
