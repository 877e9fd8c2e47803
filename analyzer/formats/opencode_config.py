"""The OpenCode-schema global config: permission rules and the settings that explain rows.

OpenCode reads opencode.json, opencode.jsonc and config.json; Kilo CLI reads kilo.jsonc, kilo.json,
opencode.jsonc and opencode.json (``ALL_CONFIG_FILES`` in the kilo 7.7.9 binary), with the same schema.

``"permission"`` is one action for everything (``"allow"``) or a map from
permission (``edit``, ``bash``, ``webfetch``, ``external_directory`` ...) to an
action or to ``{"<pattern>": action}`` (permission/next.ts ``fromConfig``); agents
carry their own under ``agent.<name>.permission``, and the older ``tools`` map
(``{"bash": false}``) switches tools off. Each is a ``permission setting:`` row;
``model``, ``small_model``, ``share`` and ``autoshare`` are ``setting:`` rows. All take
the file's mtime. Provider options (which may hold an inline ``apiKey``) and MCP
server definitions (which may hold tokens in headers or env) are never read.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, file_mtime, pointer, settings_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

SETTING_KEYS = ("model", "small_model", "share", "autoshare")


def config_rows(ctx: ParseContext) -> Iterator[Draft]:
    """The config file: ``permission setting:`` rows for permission and tool rules, ``setting:`` rows for models."""
    document, problem = json_document(ctx.data, "config file", loads=load_jsonc)
    if problem is not None:
        yield problem
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    yield from _rules(ctx, document, (), origin)
    for name, agent in as_dict(document.get("agent")).items():
        yield from _rules(ctx, as_dict(agent), ("agent", name), origin)
    for key in SETTING_KEYS:
        if key in document:
            yield Draft("system", f"setting: {key}={settings_value(document[key], key)} {origin}", pointer(key),
                        **file_mtime(ctx))


def _rules(ctx: ParseContext, holder: dict, prefix: tuple, origin: str) -> Iterator[Draft]:
    """The ``permission`` and ``tools`` rules of the config root or of one agent."""
    for key in ("permission", "tools"):
        if key not in holder:
            continue
        rules = holder[key]
        path = (*prefix, key)
        if not isinstance(rules, dict):  # one action for every permission
            yield _row(ctx, path, rules, origin, "")
            continue
        for name, value in rules.items():
            yield _row(ctx, (*path, name), value, origin, name)


def _row(ctx: ParseContext, path: tuple, value, origin: str, tool: str) -> Draft:
    dotted = ".".join(str(part) for part in path)
    return Draft("system", f"permission setting: {dotted}={settings_value(value, dotted)} {origin}", pointer(*path),
                 tool_name=tool, **file_mtime(ctx))
