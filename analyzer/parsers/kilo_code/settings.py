"""Kilo Code's standing permissions outside state.vscdb: editor settings and the MCP server settings.

* ``User/settings.json`` (JSONC): ``kilo-code.allowedCommands`` and
  ``kilo-code.deniedCommands``, the command prefixes run or refused without
  asking (src/package.json:492-511); only these keys are read.
* ``settings/mcp_settings.json``: each server's ``alwaysAllow`` tools,
  ``disabled`` flag and ``disabledTools`` (src/services/mcp/McpHub.ts:88-94),
  read by formats/mcp_settings.py, which never reads ``env`` or header values.

Kilo Code is a fork of Roo Code: the same two files under its own keys, read
by the same shared walks (formats/vscode_state.py, formats/mcp_settings.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.formats.vscode_state import editor_setting_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

COMMAND_KEYS = ("kilo-code.allowedCommands", "kilo-code.deniedCommands")


def parse_user_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: a ``permission setting:`` row per Kilo command list present, at the file's mtime."""
    return editor_setting_rows(ctx, COMMAND_KEYS)


def parse_mcp_settings(ctx: ParseContext) -> Iterator[Draft]:
    """mcp_settings.json: per server its alwaysAllow, disabled and disabledTools rows (formats/mcp_settings.py)."""
    return setting_rows(ctx, ctx.source.name)
