"""The Copilot CLI's JSON side files in its home: prompt history, remembered approvals, settings, MCP servers.

* ``command-history-state.json`` ``{"commandHistory": [...]}`` (secondary):
  newest first, at most 50, de-duplicated, no time and no session: one ``user``
  row per entry, untimed, written as events.jsonl writes a prompt (a prompt of
  a session still in the bundle is dropped by the run).
* ``permissions-config.json`` ``{"locations": {<folder>: {tool_approvals,
  allowed_directories}}}``: one ``permission setting:`` row per approval and
  one per directory list, for that folder, at the file's mtime.
* ``settings.json``: ``permission setting:`` rows for the keys that allow or
  deny (PERMISSION_KEYS), ``model:`` for the default model, ``setting:`` for
  the rest; a value under a credential-named key is withheld.
* ``mcp-config.json``: the servers, through formats/mcp_settings.py (env and
  header values never shown).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import mcp_settings
from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value, settings_value
from aitrail.analyzer.formats.json_values import document_or_row, jsonc_object
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .values import as_text


def parse_command_history(ctx: ParseContext) -> Iterator[Draft]:
    """command-history-state.json (secondary): the last prompts typed, newest first, untimed."""
    document, problem = json_document(ctx.data, "command-history-state.json")
    if problem is not None:
        yield problem
        return
    entries = document.get("commandHistory")
    if not isinstance(entries, list):
        yield bad_record("json:/commandHistory", "no commandHistory list", as_text(entries))
        return
    for position, entry in enumerate(entries):
        locator = pointer("commandHistory", position)
        if not isinstance(entry, str):
            yield bad_record(locator, "history entry is not text", as_text(entry))
            continue
        yield Draft("user", entry, locator, timestamp_source="none")


def parse_permissions(ctx: ParseContext) -> Iterator[Draft]:
    """permissions-config.json: the approvals remembered for each folder, at the file's mtime."""
    document, problem = json_document(ctx.data, "permissions-config.json")
    if problem is not None:
        yield problem
        return
    locations = document.get("locations")
    if not isinstance(locations, dict):
        if "locations" in document:
            yield bad_record("json:/locations", "locations is not an object", as_text(locations))
        return
    when = file_mtime(ctx)
    for folder, entry in locations.items():
        base = ("locations", folder)
        if not isinstance(entry, dict):
            yield bad_record(pointer(*base), "location entry is not an object", as_text(entry))
            continue
        approvals = entry.get("tool_approvals")
        for position, approval in enumerate(approvals if isinstance(approvals, list) else []):
            yield Draft("system", f"permission setting: tool_approvals={setting_value(approval)} (from "
                                  f"permissions-config.json, for {folder})", pointer(*base, "tool_approvals", position),
                        project_path=folder, **when)
        if "allowed_directories" in entry:
            directories = setting_value(entry["allowed_directories"])
            yield Draft("system", f"permission setting: allowed_directories={directories} (from "
                                  f"permissions-config.json, for {folder})",
                        pointer(*base, "allowed_directories"), project_path=folder, **when)


# settings.json keys that allow or deny something (npm @github/copilot 1.0.56 app.js settings schema `LG`)
PERMISSION_KEYS = frozenset({"allowedUrls", "deniedUrls", "sandbox", "permissions", "disabledMcpServers",
                             "enabledMcpServers", "trustedFolders", "trusted_folders", "storeTokenPlaintext",
                             "disableAllHooks", "hooks"})


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: permission settings, the default model and the other settings, at the file's mtime."""
    document = yield from document_or_row(jsonc_object(ctx.data, "settings.json"))
    if document is None:
        return
    when = file_mtime(ctx)
    for key, value in document.items():
        locator = pointer(key)
        if key in PERMISSION_KEYS:
            yield Draft("system", f"permission setting: {key}={settings_value(value, key)} (from settings.json)",
                        locator, **when)
        elif key == "model" and isinstance(value, str):
            yield Draft("system", f"model: {value} (the default model, from settings.json)", locator, model=value,
                        **when)
        else:
            yield Draft("system", f"setting: {key}={settings_value(value, key)} (from settings.json)", locator, **when)


def parse_mcp_config(ctx: ParseContext) -> Iterator[Draft]:
    """mcp-config.json: a ``permission setting:`` row per MCP server setting (no secret value), at the file mtime.

    Each server's ``tools`` list (the tools the CLI may call on it, ``["*"]`` for
    all) is a row of its own: formats/mcp_settings.py reads the other agents'
    approval keys, not this one.
    """
    yield from mcp_settings.setting_rows(ctx, "mcp-config.json")
    try:
        document = load_jsonc(ctx.data)
    except ValueError:
        return  # setting_rows said so
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    when = file_mtime(ctx)
    for name, config in (servers.items() if isinstance(servers, dict) else ()):
        if isinstance(config, dict) and "tools" in config:
            yield Draft("system", f"permission setting: mcpServers[{name}].tools={setting_value(config['tools'])} "
                                  "(from mcp-config.json, file mtime)", pointer("mcpServers", name, "tools"), **when)

