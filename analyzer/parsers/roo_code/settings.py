"""Roo Code's standing permissions outside state.vscdb: editor settings and the MCP server settings.

* ``User/settings.json`` (JSONC): ``roo-cline.allowedCommands`` and
  ``roo-cline.deniedCommands``, the command prefixes run or refused without
  asking (src/package.json:310-328); only these keys are read.
* ``settings/mcp_settings.json``: each server (what it runs, with credentials
  redacted by formats/mcp_settings.py), its ``alwaysAllow`` tools, ``disabled``
  flag and ``disabledTools``; ``env`` values are never read.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.formats.vscode_state import editor_setting_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

COMMAND_KEYS = ("roo-cline.allowedCommands", "roo-cline.deniedCommands")


def parse_user_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: a ``permission setting:`` row per Roo command list present, at the file's mtime."""
    return editor_setting_rows(ctx, COMMAND_KEYS)


def parse_mcp_settings(ctx: ParseContext) -> Iterator[Draft]:
    """mcp_settings.json: per server a row describing it, then its alwaysAllow, disabled and disabledTools rows."""
    return setting_rows(ctx, ctx.source.name)
