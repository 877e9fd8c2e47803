"""``~/.codeium/windsurf/mcp_config.json``: the MCP servers Cascade may start.

Shape [doc, docs.windsurf.com copies]: ``{"mcpServers": {name: {command, args,
env} | {serverUrl, headers}}}``. Windsurf names a remote server's address
``serverUrl`` where the other agents say ``url``; it is read as the URL
(scheme, host, port and path only). ``env`` and ``headers`` values hold tokens:
formats/mcp_settings.py keeps only their names, and the row says nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.mcp_settings import read_mcp_settings
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

ORIGIN = "mcp_config.json"


def _with_urls(document: object) -> object:
    """The document with each server's ``serverUrl`` also given as ``url`` (what the shared reader reads)."""
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        return document
    for config in servers.values():
        if isinstance(config, dict) and "url" not in config and isinstance(config.get("serverUrl"), str):
            config["url"] = config["serverUrl"]
    return document


def parse_mcp_config(ctx: ParseContext) -> Iterator[Draft]:
    """``permission setting: mcpServers[<name>]=<description> (from mcp_config.json, file mtime)`` per server.

    Then one row per approval list or ``disabled`` flag the file has, and
    ``parser:`` rows for what could not be read (never quoting the file).
    """
    try:
        document = load_jsonc(ctx.data)
    except ValueError as exc:
        yield bad_file(f"MCP settings are not JSON: {exc}")
        return
    servers, problems = read_mcp_settings(json.dumps(_with_urls(document)).encode())
    when = file_mtime(ctx)
    for server in servers:
        for setting in server.settings:
            yield Draft("system", f"permission setting: {setting.assignment} (from {ORIGIN}, file mtime)",
                        setting.locator, **when)
    yield from problems
