"""Pi's settings.json and trust.json: standing permission state, the default model, and other settings.

``settings.json`` (docs/settings.md): ``defaultProjectTrust`` (ask, always,
never: whether a project's .pi settings and extensions load without asking)
and ``defaultTools`` (the built-in tools enabled at start) are permission
settings; ``defaultProvider``/``defaultModel`` give a ``model:`` row; every
other top-level key is a ``setting:`` row, except values that identify the
user or hold credentials (``trackingId``; a proxy URL's user and password).

``trust.json``: saved project-trust decisions (``/trust``). Its layout is not
pinned in upstream source here, so it is read as JSON: each leaf value is a
``permission setting: trust[<path to the value>]=<value>`` row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value, settings_value
from aitrail.analyzer.formats.mcp_settings import safe_url
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

PERMISSION_KEYS = ("defaultProjectTrust", "defaultTools")
MODEL_KEYS = ("defaultProvider", "defaultModel")
WITHHELD_KEYS = ("trackingId",)  # an analytics identifier of the user: its value never goes into a row
URL_KEYS = ("httpProxy",)
MAX_TRUST_ROWS = 10_000  # a hostile file cannot turn into millions of rows


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: ``permission setting:``, ``model:`` and ``setting:`` rows, at the file's mtime."""
    document, problem = json_document(ctx.data, "settings file")
    if problem is not None:
        yield problem
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    model = document.get("defaultModel")
    if isinstance(model, str) and model:
        provider = document.get("defaultProvider")
        via = f" (default, provider {provider})" if isinstance(provider, str) and provider else " (default)"
        yield Draft("system", f"model: {model}{via} {origin}", pointer("defaultModel"), model=model, **file_mtime(ctx))
    for key, value in document.items():
        if key in MODEL_KEYS:
            continue
        kind = "permission setting" if key in PERMISSION_KEYS else "setting"
        yield Draft("system", f"{kind}: {key}={shown_value(key, value)} {origin}", pointer(key), **file_mtime(ctx))


def shown_value(key: str, value: object) -> str:
    """The value a settings row shows: withheld for identifiers, credentials taken out of URLs."""
    if key in WITHHELD_KEYS:
        return "<withheld: identifies the user>"
    if key in URL_KEYS and isinstance(value, str):
        return settings_value(safe_url(value), key)
    return settings_value(value, key)


def parse_trust(ctx: ParseContext) -> Iterator[Draft]:
    """trust.json: one ``permission setting: trust[...]`` row per saved decision (leaf value), file mtime."""
    document, problem = json_document(ctx.data, "trust file", object)
    if problem is not None:
        yield problem
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    for count, (path, value) in enumerate(leaves(document)):
        if count == MAX_TRUST_ROWS:
            yield Draft("system", f"parser: trust file has more than {MAX_TRUST_ROWS} decisions; the rest are not "
                        "rows", "file", **file_mtime(ctx))
            return
        label = "][".join(str(part) for part in path)
        yield Draft("system", f"permission setting: trust[{label}]={setting_value(value)} {origin}",
                    pointer(*path), **file_mtime(ctx))


def leaves(document: object) -> Iterator[tuple[tuple, object]]:
    """(path, value) of every scalar or empty container, depth first in recorded order (iterative)."""
    stack: list[tuple[tuple, object]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict) and value:
            stack.extend(reversed([((*path, key), item) for key, item in value.items()]))
        elif isinstance(value, list) and value:
            stack.extend(reversed([((*path, index), item) for index, item in enumerate(value)]))
        else:
            yield path, value
