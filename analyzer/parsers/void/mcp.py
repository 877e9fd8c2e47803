"""Void's MCP server configuration, ``~/.void-editor/mcp.json`` (``{"mcpServers": {name: config}}``).

The file names the servers Void starts (command, arguments, URL); their tools
need the user's approval unless the encrypted settings' ``autoApprove['MCP
tools']`` is on (common/mcpService.ts:46-48,226-231; chatThreadService.ts:644).
formats/mcp_settings.py reads it and never reads ``env`` or header values.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_mcp_config(ctx: ParseContext) -> Iterator[Draft]:
    """mcp.json: one ``permission setting: mcpServers[<name>]=…`` row per server, at the file's mtime."""
    return setting_rows(ctx, "mcp.json")
