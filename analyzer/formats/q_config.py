"""The Q CLI lineage's settings file and agent files: ``setting:`` and ``permission setting:`` rows.

* Settings: a flat JSON object of dotted keys (``chat.defaultModel``,
  ``chat.defaultAgent``, ``telemetry.enabled``, ...; aws/amazon-q-developer-cli@15cc8f3cd1
  crates/chat-cli/src/database/settings.rs:95-140). A key that governs which
  tools run without asking is a ``permission setting:`` row (PERMISSION_SETTING
  below: the default agent, whose ``allowedTools`` apply, and any key naming
  trust or approval); every other key a ``setting:`` row, and the default model a
  ``model:`` row too.
* Agent files (``cli-agents/*.json``, ``agents/*.json``): ``Agent`` with camelCase
  keys (crates/chat-cli/src/cli/agent/mod.rs:129-173): ``tools``,
  ``allowedTools`` (run without asking), ``toolsSettings`` (per-tool allow and
  deny lists: ``allowedCommands``, ``allowedPaths``, ...), ``toolAliases``,
  ``useLegacyMcpJson`` (Kiro: ``includeMcpJson``) give ``permission setting:`` rows;
  ``prompt``, ``resources``, ``hooks``, ``description`` give ``setting:`` rows, ``model``
  a ``model:`` row; ``mcpServers``
  goes through formats/mcp_settings.py (server descriptions, never an ``env`` or
  header value).

Every value passes ``idioms.settings_value``: a credential-keyed value is withheld.
All rows are timed by the file's mtime (what the file records is true as of then).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats import mcp_settings
from aitrail.analyzer.formats.idioms import file_mtime, pointer, settings_value
from aitrail.analyzer.formats.json_values import document_or_row, jsonc_object, label
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

PERMISSION_SETTING = re.compile(r"(?i)(^chat\.defaultAgent$|trust|approv|allowedtools|yolo|skipconfirm|autoaccept)")
MODEL_SETTING = "chat.defaultModel"
AGENT_PERMISSION_KEYS = ("tools", "allowedTools", "toolsSettings", "toolAliases", "useLegacyMcpJson",
                         "includeMcpJson")
AGENT_SETTING_KEYS = ("description", "prompt", "resources", "hooks")  # model: its own ``model:`` row


def settings_rows(ctx: ParseContext) -> Iterator[Draft]:
    """One row per key of a flat settings object, at the file's mtime."""
    document = yield from document_or_row(jsonc_object(ctx.data, "settings file"))
    if document is None:
        return
    when, origin = file_mtime(ctx), f"(from {ctx.source.name}, file mtime)"
    for key, value in document.items():
        shown = settings_value(value, key)
        prefix = "permission setting" if PERMISSION_SETTING.search(key) else "setting"
        yield Draft("system", f"{prefix}: {key}={shown} {origin}", pointer(key), **when)
        if key == MODEL_SETTING and label(value):
            yield Draft("system", f"model: {value} (default model, {origin[1:-1]})", pointer(key), model=value, **when)


def agent_rows(ctx: ParseContext) -> Iterator[Draft]:
    """An agent file's permission and setting rows, then its MCP servers' rows (names and commands, no secrets)."""
    document = yield from document_or_row(jsonc_object(ctx.data, "agent file"))
    if document is None:
        return
    when = file_mtime(ctx)
    name = label(document.get("name")) or ctx.source.name.rsplit(".", 1)[0]
    origin = f"(from agent {name}, {ctx.source.name}, file mtime)"
    for key in AGENT_PERMISSION_KEYS:
        if key in document:
            yield Draft("system", f"permission setting: {key}={settings_value(document[key], key)} {origin}",
                        pointer(key), **when)
    for key in AGENT_SETTING_KEYS:
        if key in document:
            yield Draft("system", f"setting: {key}={settings_value(document[key], key)} {origin}", pointer(key),
                        **when)
    if label(document.get("model")):
        yield Draft("system", f"model: {document['model']} (agent {name} default, {origin[1:-1]})", pointer("model"),
                    model=document["model"], **when)
    if "mcpServers" in document:
        yield from mcp_settings.setting_rows(ctx, f"agent {name}, {ctx.source.name}")
