"""Goose's standing settings: permission.yaml (per-tool allow/ask/never lists) and config.yaml.

permission.yaml [src] block/goose@0865f959f8 crates/goose/src/config/permission.rs:
a map of categories (``user``: the user's choices, ``smart_approve``: the
levels smart-approve mode derived from tool annotations) to
``{always_allow: [], ask_before: [], never_allow: []}``; each entry is a tool
name, ``<extension>__<tool>``. Each entry is one ``permission setting:`` row.

config.yaml: ``GOOSE_MODE`` (the default mode of new sessions:
config/goose_mode.rs), ``GOOSE_MODEL`` and ``GOOSE_PROVIDER`` (the default
model) and the ``extensions`` map (name, enabled, type). Nothing else is read:
an extension's ``envs``, ``args`` and headers may hold tokens, and secrets
themselves live in the keyring or secrets.yaml, which is never collected.
Every row is timed by the file's mtime.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, pointer, setting_value
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.yaml_config import mapping_rows, nothing_read, scalar_text
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

LEVELS = ("always_allow", "ask_before", "never_allow")


def parse_permission_yaml(ctx: ParseContext) -> Iterator[Draft]:
    """permission.yaml: ``permission setting: <category>.<level>="<tool>"`` per tool, at the file's mtime."""
    yield from mapping_rows(ctx, lambda document, at: _permission_rows(ctx, document, at))


def _permission_rows(ctx: ParseContext, document: dict, at: dict) -> Iterator[Draft]:
    given = 0
    for category, levels in document.items():
        category = scalar_text(category) or type(category).__name__
        if not isinstance(levels, dict):
            # named by its type only: str() of a YAML value built from nested aliases is exponential
            yield bad_record(pointer(category, scheme="yaml"), f"permission category is a YAML "
                                                               f"{type(levels).__name__}, not a mapping")
            given += 1
            continue
        for level in LEVELS:
            for position, tool in enumerate(as_list(levels.get(level))):
                given += 1
                yield _permission_row(category, level, position, tool, at)
    if document and not given:
        yield nothing_read(ctx, document, "the lists always_allow, ask_before, never_allow")


def _permission_row(category: str, level: str, position: int, tool, at: dict) -> Draft:
    locator = pointer(category, level, position, scheme="yaml")
    name = scalar_text(tool)
    if name is None:
        return bad_record(locator, f"tool name is a YAML {type(tool).__name__}, not text")
    return Draft("system", f"permission setting: {category}.{level}={setting_value(name)} (from permission.yaml, "
                           "file mtime)", locator, tool_name=name, **at)


def parse_config_yaml(ctx: ParseContext) -> Iterator[Draft]:
    """config.yaml: the default mode, the default model and the configured extensions, at the file's mtime."""
    yield from mapping_rows(ctx, lambda document, at: _config_rows(ctx, document, at))


def _config_rows(ctx: ParseContext, document: dict, at: dict) -> Iterator[Draft]:
    if document and not {"GOOSE_MODE", "GOOSE_MODEL", "extensions"} & set(document):
        yield nothing_read(ctx, document, "GOOSE_MODE, GOOSE_MODEL, extensions")
    mode = scalar_text(document.get("GOOSE_MODE"))
    if mode is not None:
        yield Draft("system", f"permission setting: GOOSE_MODE={setting_value(mode)} (the mode of new sessions; "
                              "from config.yaml, file mtime)", pointer("GOOSE_MODE", scheme="yaml"), **at)
    model = scalar_text(document.get("GOOSE_MODEL"))
    if model is not None:
        provider = scalar_text(document.get("GOOSE_PROVIDER")) or ""
        yield Draft("system", f"model: {model} (provider={provider}; the default model, from config.yaml "
                              "GOOSE_MODEL, file mtime)", pointer("GOOSE_MODEL", scheme="yaml"), model=model, **at)
    for name, extension in as_dict(document.get("extensions")).items():
        yield _extension_row(scalar_text(name) or type(name).__name__, as_dict(extension), at)


def _extension_row(name: str, extension: dict, at: dict) -> Draft:
    """One configured extension (an MCP server or built-in): its name, whether enabled, its type."""
    enabled = scalar_text(extension.get("enabled"))
    kind = scalar_text(extension.get("type"))
    return Draft("system", f"setting: extensions.{name} enabled={enabled or ''} type={kind or ''} (from config.yaml, "
                           "file mtime)", pointer("extensions", name, scheme="yaml"), **at)
