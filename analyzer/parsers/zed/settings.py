"""Zed's user ``settings.json`` (JSONC): the agent's standing tool permissions, profiles and models.

[doc] zed.dev/docs/ai/tool-permissions (zed-industries/zed
docs/src/ai/tool-permissions.md): from v0.224.0 ``agent.tool_permissions
{default, tools{<tool>{default, always_allow[], always_deny[],
always_confirm[]}}}`` (entries ``{pattern, case_sensitive}``; MCP tools named
``mcp:<server>:<tool>``); before it ``agent.always_allow_tool_actions``
(bool, default false). [doc] zed.dev/docs/ai/agent-profiles: ``agent.profiles
.<id>{name, tools{<tool>: bool}, enable_all_context_servers, context_servers,
default_model}``; [doc] ai/agent-settings: ``agent.default_model {provider,
model}`` and the feature models. Older builds kept the same keys under
``assistant`` [inf], read alike.

Rows, all at the file's mtime (the settings keep no time): one
``permission setting: <key>=<value> (from <file>, file mtime)`` per standing
rule (one per pattern entry, the tool in ``tool_name``), ``model: <id>``
for the default model and ``setting:`` for the other agent keys named above.
Nothing else of the file is read (``language_models``, ``context_servers``
environments with their tokens stay unread); a credential-named key's value
is withheld wherever it sits.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, settings_value
from aitrail.analyzer.formats.json_values import jsonc_object, label
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .values import model_id

SECTIONS = ("agent", "assistant")
RULE_LISTS = ("always_allow", "always_deny", "always_confirm")
PROFILE_KEYS = ("enable_all_context_servers", "context_servers")
OTHER_MODELS = ("inline_assistant_model", "commit_message_model", "thread_summary_model")
OTHER_SETTINGS = ("default_profile", "enabled", "play_sound_when_agent_done")


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: ``permission setting:``, ``model:`` and ``setting:`` rows of the agent section."""
    document, problem = jsonc_object(ctx.data, "settings.json")
    if problem is not None:
        yield problem
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    for section in SECTIONS:
        values = document.get(section)
        if isinstance(values, dict):
            yield from _section(ctx, section, values, origin)
        elif values is not None:
            yield bad_record(pointer(section), f"{section} is a JSON {type(values).__name__}, not an object")


def _row(ctx: ParseContext, key: str, value, where: str, origin: str, tool: str = "",
         prefix: str = "permission setting") -> Draft:
    return Draft("system", f"{prefix}: {key}={settings_value(value, key)} {origin}", where, tool_name=tool,
                 **file_mtime(ctx))


def _section(ctx: ParseContext, section: str, values: dict, origin: str) -> Iterator[Draft]:
    if "always_allow_tool_actions" in values:
        yield _row(ctx, f"{section}.always_allow_tool_actions", values["always_allow_tool_actions"],
                   pointer(section, "always_allow_tool_actions"), origin)
    permissions = values.get("tool_permissions")
    if isinstance(permissions, dict):
        yield from _permissions(ctx, section, permissions, origin)
    elif permissions is not None:
        yield _row(ctx, f"{section}.tool_permissions", permissions, pointer(section, "tool_permissions"), origin)
    profiles = values.get("profiles")
    if isinstance(profiles, dict):
        for name, profile in profiles.items():
            yield from _profile(ctx, section, name, profile, origin)
    yield from _models(ctx, section, values, origin)
    for key in OTHER_SETTINGS:
        if key in values:
            yield _row(ctx, f"{section}.{key}", values[key], pointer(section, key), origin, prefix="setting")


def _permissions(ctx: ParseContext, section: str, permissions: dict, origin: str) -> Iterator[Draft]:
    base = f"{section}.tool_permissions"
    if "default" in permissions:
        yield _row(ctx, f"{base}.default", permissions["default"], pointer(section, "tool_permissions", "default"),
                   origin)
    tools = permissions.get("tools")
    if not isinstance(tools, dict):
        if tools is not None:
            yield _row(ctx, f"{base}.tools", tools, pointer(section, "tool_permissions", "tools"), origin)
        return
    for tool, rules in tools.items():
        where = (section, "tool_permissions", "tools", tool)
        name = label(tool)
        if not isinstance(rules, dict):
            yield _row(ctx, f"{base}.tools.{tool}", rules, pointer(*where), origin, name)
            continue
        for key, value in rules.items():
            entries = value if key in RULE_LISTS and isinstance(value, list) and value else [value]
            for index, entry in enumerate(entries):
                at = pointer(*where, key, index) if entries is value else pointer(*where, key)
                yield _row(ctx, f"{base}.tools.{tool}.{key}", entry, at, origin, name)


def _profile(ctx: ParseContext, section: str, name: str, profile, origin: str) -> Iterator[Draft]:
    base = f"{section}.profiles.{name}"
    if not isinstance(profile, dict):
        yield _row(ctx, base, profile, pointer(section, "profiles", name), origin)
        return
    tools = profile.get("tools")
    for tool, enabled in (tools.items() if isinstance(tools, dict) else ()):
        yield _row(ctx, f"{base}.tools.{tool}", enabled, pointer(section, "profiles", name, "tools", tool), origin,
                   label(tool))
    for key in PROFILE_KEYS:
        if key in profile:
            yield _row(ctx, f"{base}.{key}", profile[key], pointer(section, "profiles", name, key), origin)
    provider, model = model_id(profile.get("default_model"))
    if model:
        yield Draft("system", f"model: {model} (provider {provider}; default of profile {name} in settings.json, "
                    "file mtime)", pointer(section, "profiles", name, "default_model"), model=model, **file_mtime(ctx))


def _models(ctx: ParseContext, section: str, values: dict, origin: str) -> Iterator[Draft]:
    provider, model = model_id(values.get("default_model"))
    if model:
        yield Draft("system", f"model: {model} (provider {provider}; {section}.default_model in settings.json, "
                    "file mtime)", pointer(section, "default_model"), model=model, **file_mtime(ctx))
    for key in OTHER_MODELS:
        if key in values:
            yield _row(ctx, f"{section}.{key}", values[key], pointer(section, key), origin, prefix="setting")
