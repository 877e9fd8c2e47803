"""Gemini CLI standing permission state: settings.json, policy TOML files, trustedFolders.json.

Each gives rows at the file's modification time (the files hold no time of their own):

* ``settings.json`` (user, system, system-defaults; JSON with comments): one
  ``permission setting: <key>=<JSON> (from <file>, file mtime)`` row per
  approval key present, in the nested layout (since 2025-09) and the flat one
  before it; ``setting: <key>=<JSON> …`` rows for the keys that explain other
  evidence (the session-retention cleanup, the default model, checkpointing).
* ``policies/*.toml`` (``auto-saved.toml`` holds every "always allow" answer):
  ``permission setting: rule[<n>]=<JSON of the rule> …`` per ``[[rule]]``, and
  ``<key>=…`` for any other top-level entry; a file that does not parse is read
  table by table, so one damaged rule does not hide the others.
* ``trustedFolders.json``: ``permission setting: trustedFolders[<path>]=<level> …``
  per folder (``TRUST_FOLDER``, ``TRUST_PARENT``, ``DO_NOT_TRUST``).

The settings and trust readers are shared with the fork Qwen Code
(``formats/gemini_settings.py``); the key lists and the policy files are Gemini's.

    [[rule]]
    decision = "allow"
    priority = 950
    toolName = "run_shell_command"
    commandPrefix = "pytest"

References: google-gemini/gemini-cli@5411f113ca packages/cli/src/config/settingsSchema.ts:228-246,299-318,
389-437,1062-1079,1669-1720,1776-1816,1826-1925; packages/cli/src/config/settings.ts (MIGRATION_MAP at
3885f7b6ae^ lines 37-96, the flat names); packages/core/src/policy/config.ts:646-712,795-880;
packages/core/src/utils/trust.ts:18-22 (research/formats-cli-agents.md 3.7).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.gemini_settings import settings_file_rows, trusted_folder_rows
from aitrail.analyzer.formats.idioms import escape_key, file_mtime, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_toml
from aitrail.analyzer.view.rows import Draft

from .projects import map_limit_rows, root_of

# Keys that allow, refuse or skip confirmation of tool calls (nested layout, then the flat one).
PERMISSION_KEYS = (
    "general.defaultApprovalMode", "tools.autoAccept", "tools.allowed", "tools.core", "tools.exclude",
    "tools.confirmationRequired", "tools.sandbox", "mcp.allowed", "mcp.excluded", "security.folderTrust.enabled",
    "security.disableYoloMode", "security.disableAlwaysAllow", "security.enablePermanentToolApproval",
    "security.autoAddToPolicyByDefault",
    "autoAccept", "allowedTools", "coreTools", "excludeTools", "allowMCPServers", "excludeMCPServers",
    "folderTrust", "folderTrustFeature", "sandbox",
)
# Not permissions, but they explain other rows: what the cleanup deletes, the default model, edit checkpoints.
CONTEXT_KEYS = ("general.sessionRetention", "model.name", "general.checkpointing", "model", "checkpointing")
_TABLE_HEADER = re.compile(r"^\s*\[")
_ARRAY_HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_-]+)\s*\]\]")


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json (JSONC): ``permission setting:`` rows for approval, sandbox, tool and MCP-server keys.

    Model, checkpointing and session-retention keys are ``setting:`` rows; all take the
    file's mtime.
    """
    if ctx.source.store.endswith(".user_settings"):  # its absolute paths are in the project map
        yield from map_limit_rows(ctx, root_of(ctx.source))
    yield from settings_file_rows(ctx, PERMISSION_KEYS, CONTEXT_KEYS)


# -- policies -------------------------------------------------------------------------------------------------


def parse_policy(ctx: ParseContext) -> Iterator[Draft]:
    """A policy .toml: one ``permission setting:`` row per rule field; an unreadable file is salvaged.

    An empty policy file is a row too: all its rules were removed.
    """
    try:
        text = ctx.config_data().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        yield bad_file(f"policy file is not UTF-8 at byte {exc.start}")
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    try:
        document = decode_toml(text)
    except ValueError as exc:  # TOMLDecodeError, or nested too deep
        yield from _salvage(ctx, text, origin, str(exc))
        return
    if not document:  # only comments, or empty: the rules were all removed, which is evidence too
        yield Draft("system", f"permission setting: rule=[] {origin}", "file", **file_mtime(ctx))
    yield from _policy_rows(ctx, document, origin, {})


def _policy_rows(ctx: ParseContext, document: dict, origin: str, counters: dict) -> Iterator[Draft]:
    for key, value in document.items():
        tables = value if isinstance(value, list) and all(isinstance(item, dict) for item in value) else None
        if not tables:
            yield Draft("system", f"permission setting: {key}={setting_value(value)} {origin}",
                        f"toml:/{escape_key(key)}", **file_mtime(ctx))
            continue
        for table in tables:
            index = counters.get(key, 0)
            counters[key] = index + 1
            tool = table.get("toolName")
            yield Draft("system", f"permission setting: {key}[{index}]={setting_value(table)} {origin}",
                        f"toml:/{escape_key(key)}/{index}", tool_name=tool if isinstance(tool, str) else "",
                        **file_mtime(ctx))


def _salvage(ctx: ParseContext, text: str, origin: str, reason: str) -> Iterator[Draft]:
    """Parse a damaged file one table at a time; the tables that parse still give their rows."""
    yield bad_file(f"policy file is not valid TOML ({reason}); read table by table")
    counters: dict = {}
    for start, chunk in _chunks(text):
        try:
            document = decode_toml(chunk)
        except ValueError as exc:  # TOMLDecodeError, or nested too deep
            yield bad_record(f"line:{start}", f"TOML table does not parse: {exc}", chunk)
            header = _ARRAY_HEADER.match(chunk)
            if header:  # the damaged table still takes its number: rule[n] stays the file's n-th rule
                counters[header.group(1)] = counters.get(header.group(1), 0) + 1
            continue
        yield from _policy_rows(ctx, document, origin, counters)


def _chunks(text: str) -> list[tuple[int, str]]:
    """The file cut before each table header line, with each piece's first line number."""
    chunks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not chunks or _TABLE_HEADER.match(line):
            chunks.append((number, []))
        chunks[-1][1].append(line)
    return [(start, "\n".join(lines)) for start, lines in chunks if "".join(lines).strip()]


# -- folder trust -----------------------------------------------------------------------------------------------------


def parse_trusted_folders(ctx: ParseContext) -> Iterator[Draft]:
    """trustedFolders.json: one ``permission setting:`` row per folder and its trust level."""
    yield from map_limit_rows(ctx, root_of(ctx.source))
    yield from trusted_folder_rows(ctx)
