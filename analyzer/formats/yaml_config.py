"""A YAML configuration file read safely: one mapping, or the ``parser:`` row saying why not.

Agents that keep their settings in YAML (Goose's ``config.yaml`` and
``permission.yaml``, Hermes Agent's ``config.yaml``) are read with PyYAML's
``safe_load`` (no tags that build objects), within MAX_CONFIG_BYTES
(``ParseContext.config_data``) and the nesting bound of ``view/decode.py``
(PyYAML's composer recurses). Aliases are shared references in the result, so a
document of nested aliases costs its text; callers read named scalar keys and
lists of scalars only, never walk the whole tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import yaml

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import bounded
from aitrail.analyzer.view.rows import Draft


def yaml_mapping(ctx: ParseContext) -> tuple[dict, Draft | None]:
    """The file's top-level mapping ({} for an empty file), or ({}, the ``parser: unparseable file`` row)."""
    name = ctx.source.name
    try:
        text = ctx.config_data().decode("utf-8")
        document = bounded(yaml.safe_load, text)
    except UnicodeDecodeError as exc:
        return {}, bad_file(f"{name} is not UTF-8 at byte {exc.start}")
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # NestedTooDeep is a ValueError
        return {}, bad_file(f"{name} is not YAML: {excerpt(str(exc), 200)}")
    if document is None:
        if text.strip():  # an anchor, a tag or a null with nothing under it: the agent reads no settings
            return {}, bad_file(f"{name} holds no mapping (comments or an empty document only)")
        return {}, None
    if not isinstance(document, dict):
        return {}, bad_file(f"{name} is a YAML {type(document).__name__}, not a mapping")
    return document, None


def mapping_rows(ctx: ParseContext, rows: Callable[[dict, dict], Iterator[Draft]]) -> Iterator[Draft]:
    """The rows ``rows(document, at)`` gives for the file's mapping (``at``: the file-mtime columns), or its problem."""
    document, problem = yaml_mapping(ctx)
    if problem is not None:
        yield problem
        return
    yield from rows(document, file_mtime(ctx))


def scalar_text(value) -> str | None:
    """A YAML scalar as text (booleans as true/false), None for a mapping, list or null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def nothing_read(ctx: ParseContext, document: dict, read: str) -> Draft:
    """The row of a mapping that holds none of the settings a parser reads: the keys it does hold.

    Args:
        ctx: the file's context (its name and mtime).
        document: the file's mapping.
        read: the settings the parser looks for, as the row names them.
    """
    keys = [scalar_text(key) or type(key).__name__ for key in list(document)[:20]]
    more = f" and {len(document) - 20} more" if len(document) > 20 else ""
    moment = ctx.source.mtime_ns
    return Draft("system", f"setting: {ctx.source.name} holds none of {read}; its keys: "
                           f"{excerpt(', '.join(keys))}{more} (file mtime)", "file", timestamp_ns=moment,
                 timestamp_source="file-mtime" if moment is not None else "none")
