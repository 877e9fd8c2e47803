"""Cline's MCP settings: settings/cline_mcp_settings.json (extension storage or ~/.cline/data/settings/)."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_mcp_settings(ctx: ParseContext) -> Iterator[Draft]:
    """One ``permission setting:`` row per configured server, its ``autoApprove`` list and ``disabled`` flag.

    ``permission setting: mcpServers[<name>].autoApprove=[...] (from cline_mcp_settings.json, file mtime)``;
    env and header values (API tokens) are never read, only their names.
    """
    yield from setting_rows(ctx, "cline_mcp_settings.json")
