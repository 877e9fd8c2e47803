"""Factory Droid settings: a session's <id>.settings.json, the user and managed settings.json, mcp.json.

* ``sessions/<key>/<id>.settings.json`` ``{model, reasoningEffort, interactionMode,
  autonomyLevel, autonomyMode, specModeModel, assistantActiveTimeMs, tokenUsage{inputTokens,
  outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens, factoryCredits?},
  archivedAt?, tags?, enabledToolIds?, disabledToolIds?, restrictToolIds?, ...}``: a
  ``model:`` row, ``permission setting:`` rows for the autonomy and tool restrictions, a
  ``tokens generated:`` row for the session's totals, ``setting:`` rows for the rest read;
* ``settings.json`` / ``settings.local.json`` (user) and the org-managed copies
  (``cache/org-managed-settings.json``, /etc/factory, ...): ``permission setting:`` rows
  for ``commandAllowlist``, ``commandDenylist``, ``commandBlocklist``, the autonomy limits
  and overrides, the sandbox and network policies; ``setting:`` rows for the session
  defaults and cloud sync. ``customModels`` (which may hold API keys), ``env`` and
  ``hooks`` are never read;
* ``mcp.json`` ``{mcpServers, persistentPermissions{servers, tools}}``: the servers through
  analyzer/formats/mcp_settings.py (no env or header value), the standing MCP approvals as
  ``permission setting:`` rows.

Every row takes the file's mtime (none of these files records when a value was set).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import PurePosixPath

from aitrail.analyzer.formats.idioms import as_dict, file_mtime, pointer, settings_value
from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .content import compact, label

SESSION_PERMISSIONS = ("autonomyLevel", "autonomyMode", "interactionMode", "enabledToolIds", "disabledToolIds",
                       "restrictToolIds", "allowSubagentsInScripts", "toolExecutionMode")
SESSION_SETTINGS = ("reasoningEffort", "specModeModel", "specModeReasoningEffort", "assistantActiveTimeMs",
                    "archivedAt", "tags")
TOKEN_KEYS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "thinkingTokens",
              "factoryCredits")
USER_PERMISSIONS = ("commandAllowlist", "commandDenylist", "commandBlocklist", "enableDroidShield",
                    "maxAutonomyLevel", "subagentAutonomyLevel", "mcpAutonomyOverrides", "mcpAutonomyUrlOverrides",
                    "builtInToolAutonomyOverrides", "networkPolicy", "sandbox", "allowBackgroundProcesses",
                    "allowManagedHooksOnly", "webSearchDisabled", "autonomyLevel", "autonomyMode")
USER_SETTINGS = ("model", "reasoningEffort", "cloudSessionSync", "includeCoAuthoredByDroid", "sessionRetentionDays")
DEFAULT_PERMISSIONS = ("autonomyLevel", "autonomyMode", "interactionMode")


def parse_session_settings(ctx: ParseContext) -> Iterator[Draft]:
    """<session>.settings.json: the session's model, autonomy and tool limits, token totals, other settings."""
    document = yield from _document(ctx, "session settings")
    if document is None:
        return
    session_id = PurePosixPath(ctx.source.path).name.removesuffix(".settings.json")
    origin = f"(from {ctx.source.name}, file mtime)"
    base = {"session_id": session_id, **file_mtime(ctx)}
    model = label(document.get("model"))
    if model:
        yield Draft("system", f"model: {model} (session setting) {origin}", pointer("model"), model=model, **base)
    for key in SESSION_PERMISSIONS:
        if key in document:
            yield Draft("system", f"permission setting: {key}={settings_value(document[key], key)} {origin}",
                        pointer(key), **base)
    usage = as_dict(document.get("tokenUsage"))
    if usage:
        counts = " ".join(f"{key}={compact(usage[key])}" for key in TOKEN_KEYS if key in usage)
        yield Draft("system", f"tokens generated: model={model} {counts} (session total) {origin}",
                    pointer("tokenUsage"), model=model, **base)
    for key in SESSION_SETTINGS:
        if key in document:
            yield Draft("system", f"setting: {key}={settings_value(document[key], key)} {origin}", pointer(key),
                        **base)


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json (user, local or org-managed): command lists, autonomy limits, policies, session defaults."""
    document = yield from _document(ctx, "settings file")
    if document is not None:
        yield from _settings_rows(document, f"(from {ctx.source.path}, file mtime)", file_mtime(ctx))


def _settings_rows(document: dict, origin: str, when: dict) -> Iterator[Draft]:
    """``permission setting:`` rows for the permission keys, then the session defaults, then ``setting:`` rows."""
    for key in USER_PERMISSIONS:
        if key in document:
            yield Draft("system", f"permission setting: {key}={settings_value(document[key], key)} {origin}",
                        pointer(key), **when)
    for key, value in as_dict(document.get("sessionDefaultSettings")).items():
        prefix = "permission setting" if key in DEFAULT_PERMISSIONS else "setting"
        yield Draft("system", f"{prefix}: sessionDefaultSettings.{key}={settings_value(value, key)} {origin}",
                    pointer("sessionDefaultSettings", key), **when)
    for key in USER_SETTINGS:
        if key in document:
            yield Draft("system", f"setting: {key}={settings_value(document[key], key)} {origin}", pointer(key),
                        **when)


def _document(ctx: ParseContext, what: str) -> Generator[Draft, None, dict | None]:
    """The file as a JSON object (returned), or its ``parser: unparseable file`` row (yielded) and None."""
    document, problem = json_document(ctx.data, what)
    if problem is not None:
        yield problem
        return None
    return document


def parse_mcp(ctx: ParseContext) -> Iterator[Draft]:
    """mcp.json: one ``permission setting:`` row per server and flag, and per standing MCP approval."""
    yield from setting_rows(ctx, ctx.source.name)
    document, problem = json_document(ctx.data, "mcp.json")
    if problem is not None:
        return  # setting_rows has reported it
    approvals = as_dict(document.get("persistentPermissions"))
    origin = f"(from {ctx.source.name}: persistent permissions, file mtime)"
    when = file_mtime(ctx)
    for server, value in as_dict(approvals.get("servers")).items():
        yield Draft("system", f"permission setting: persistentPermissions.servers[{server}]="
                              f"{settings_value(value)} {origin}", pointer("persistentPermissions", "servers", server),
                    **when)
    for server, tools in as_dict(approvals.get("tools")).items():
        for tool, value in as_dict(tools).items():
            yield Draft("system", f"permission setting: persistentPermissions.tools[{server}][{tool}]="
                                  f"{settings_value(value)} {origin}",
                        pointer("persistentPermissions", "tools", server, tool), tool_name=label(tool), **when)
