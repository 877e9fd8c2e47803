"""Auggie's ``settings.json`` / ``settings.local.json`` (tool permission rules, model) and its Markdown plans.

Settings ([src] the settings schema ``bXe`` in augment.mjs): each
``toolPermissions`` rule ``{toolName, permission: {type: allow | deny |
ask-user | webhook-policy | script-policy, ...}, eventType, shellInputRegex}``
(also spelled ``tool-name`` / ``event-type``) is a ``permission setting:``
row naming its tool; ``removedTools`` (tools taken away from the agent) is a
permission setting too; ``model`` gives a ``model:`` row; every other key is a
``setting:`` row, credential-keyed values withheld (formats/idioms.py).
``bringYourOwnKey`` maps a provider to its API key under the provider's name,
which no credential key pattern can recognise: its values are always withheld.
Rows are timed by the file's mtime (the file records no time).

Plans (``~/.augment/plans/*.md``): one ``plan:`` row per file, at its mtime.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, file_mtime, pointer, settings_value
from aitrail.analyzer.formats.json_values import document_or_row
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

PERMISSION_KEYS = ("removedTools",)
WITHHELD_KEYS = ("bringYourOwnKey",)  # provider -> API key: named by the provider, so withheld here
MAX_RULES = 10_000  # a hostile file cannot turn into millions of rows


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json / settings.local.json: permission rules, the model and the other settings, at the file's mtime."""
    document = yield from document_or_row(json_document(ctx.data, "settings file"))
    if document is None:
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    times = file_mtime(ctx)
    for key, value in document.items():
        if key == "toolPermissions":
            yield from _rules(value, origin, times)
        elif key == "model" and isinstance(value, str) and value:
            yield Draft("system", f"model: {value} (default) {origin}", pointer(key), model=value, **times)
        elif key in WITHHELD_KEYS:
            yield Draft("system", f"setting: {key}={_withheld(value)} {origin}", pointer(key), **times)
        else:
            kind = "permission setting" if key in PERMISSION_KEYS else "setting"
            yield Draft("system", f"{kind}: {key}={settings_value(value, key)} {origin}", pointer(key), **times)


def _rules(rules, origin: str, times: dict) -> Iterator[Draft]:
    items = as_list(rules)
    for index, rule in enumerate(items[:MAX_RULES]):
        rule = as_dict(rule)
        tool = rule.get("toolName", rule.get("tool-name"))
        yield Draft("system", f"permission setting: toolPermissions[{index}]={settings_value(rule)} {origin}",
                    pointer("toolPermissions", index), tool_name=tool if isinstance(tool, str) else "", **times)
    if len(items) > MAX_RULES:
        yield Draft("system", f"parser: toolPermissions entries over the limit ({MAX_RULES} read); the other "
                              f"{len(items) - MAX_RULES} were not read", pointer("toolPermissions"),
                    timestamp_source="none")


def _withheld(value) -> str:
    """Which providers have a key set, and how long each is; never the key."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{provider}: [withheld: a credential, {len(str(key))} characters]"
                               for provider, key in value.items()) + "}"
    return f"[withheld: a credential, {len(str(value))} characters]"


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """A Markdown plan: one ``plan:`` row with its text, at the file's mtime."""
    text = ctx.data.decode("utf-8", "replace")
    yield Draft("system", f"plan: {ctx.source.name}: {text}", "file", **file_mtime(ctx))
