"""Amp's settings.json (and settings.jsonc, managed-settings.json): permission rules, MCP servers, other settings.

Keys are namespaced ``amp.*`` (npm @sourcegraph/amp 0.0.1767830505-ga62310
dist/main.js settings schema; the file is JSONC, ``settings.jsonc`` being the
fallback name). Rows, at the file's mtime:

* ``amp.permissions`` (ordered rules ``{tool, matches, action allow|reject|ask|
  delegate, context, to}``) and ``amp.mcpPermissions``: one ``permission
  setting: <key>[<i>]=<rule>`` row per rule, in order (the first match wins);
* ``amp.dangerouslyAllowAll``, ``amp.tools.disable``,
  ``amp.guardedFiles.allowlist``, ``amp.mcpTrustedWorkspaces``,
  ``amp.commands.allowlist`` and ``amp.commands.strict``: ``permission
  setting: <key>=<value>``;
* ``amp.mcpServers``: through formats/mcp_settings.py (env and header values
  never shown);
* everything else ``setting: <key>=<value>``, a credential-named key withheld.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

from aitrail.analyzer.formats import mcp_settings
from aitrail.analyzer.formats.idioms import file_mtime, pointer, settings_value
from aitrail.analyzer.formats.json_values import jsonc_object
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

RULE_LISTS = frozenset({"permissions", "mcpPermissions"})
PERMISSION_KEYS = frozenset({"dangerouslyAllowAll", "tools.disable", "guardedFiles.allowlist", "mcpTrustedWorkspaces",
                             "commands.allowlist", "commands.strict"})


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: permission rules and switches, MCP servers, the other settings, at the file's mtime."""
    document, problem = jsonc_object(ctx.data, ctx.source.name)
    if problem is not None:
        yield problem
        return
    origin, when = ctx.source.name, file_mtime(ctx)
    for key, value in document.items():
        name = key.removeprefix("amp.") if isinstance(key, str) else key
        if name == "mcpServers":
            yield from _servers(value, key, origin, when)
        elif name in RULE_LISTS and isinstance(value, list):
            for position, rule in enumerate(value):
                yield Draft("system", f"permission setting: {key}[{position}]={settings_value(rule, key)} (from "
                                      f"{origin})", pointer(key, position), **when)
        elif name in PERMISSION_KEYS or name in RULE_LISTS:
            yield Draft("system", f"permission setting: {key}={settings_value(value, key)} (from {origin})",
                        pointer(key), **when)
        else:
            yield Draft("system", f"setting: {key}={settings_value(value, key)} (from {origin})", pointer(key), **when)


def _servers(value, key: str, origin: str, when: dict) -> Iterator[Draft]:
    """The MCP servers of ``amp.mcpServers``, described by formats/mcp_settings.py (nothing secret)."""
    servers, problems = mcp_settings.read_mcp_settings(json.dumps({"mcpServers": value}).encode())
    base = pointer(key)

    def relocated(locator: str) -> str:  # mcp_settings points into {"mcpServers": ...}; the file names the key
        return base + locator.removeprefix("json:/mcpServers") if locator.startswith("json:/mcpServers") else base

    for server in servers:
        for setting in server.settings:
            yield Draft("system", f"permission setting: {setting.assignment} (from {origin} {key})",
                        relocated(setting.locator), **when)
    for problem in problems:
        yield dataclasses.replace(problem, locator=relocated(problem.locator))
