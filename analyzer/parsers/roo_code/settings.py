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

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.mcp_settings import read_mcp_settings
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

COMMAND_KEYS = ("roo-cline.allowedCommands", "roo-cline.deniedCommands")


def parse_user_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: a ``permission setting:`` row per Roo command list present, at the file's mtime."""
    document, problem = json_document(ctx.data, "settings.json", dict, loads=load_jsonc)
    if problem is not None:
        yield problem
        return
    for key in COMMAND_KEYS:
        if key in document:
            yield Draft("system", f"permission setting: {key}={setting_value(document[key])} (from settings.json, "
                                  "file mtime)", pointer(key), **file_mtime(ctx))


def parse_mcp_settings(ctx: ParseContext) -> Iterator[Draft]:
    """mcp_settings.json: per server a row describing it, then its alwaysAllow, disabled and disabledTools rows."""
    servers, problems = read_mcp_settings(ctx.data)
    yield from problems
    for server in servers:
        for setting in server.settings:
            yield Draft("system", f"permission setting: {setting.assignment} (from {ctx.source.name}, file mtime)",
                        setting.locator, **file_mtime(ctx))
