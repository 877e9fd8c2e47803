"""A decoded JSON value as row text: scalars as written, containers as compact JSON, short labels, facts lists.

The helpers every JSON-reading parser spells alike (Copilot CLI, Amp):

* ``as_text(value)``: '' for None, ``true``/``false``, numbers as Python
  writes them, a string as it is, a container as compact JSON;
* ``compact(value)``: compact JSON, keys in recorded order, non-ASCII kept;
* ``label(value)``: a name or id only when it is a short string, so that a
  container or a megabyte string never lands in a column;
* ``mapping(value)``: the value when it is a JSON object, else ``{}``;
* ``facts(mapping, keys)``: ``key=value, ...`` for the keys present;
* ``jsonc_object(data, what)``: a settings file's JSONC object, or the
  ``parser: unparseable file`` row naming ``what`` and why.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.rows import Draft


def as_text(value) -> str:
    """A scalar as text ('' for None); containers as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return compact(value)


def compact(value) -> str:
    """Compact JSON, keys in recorded order, non-ASCII kept (what JSON cannot hold as its text)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def label(value, limit: int = 200) -> str:
    """A name or id only when it is a string of at most ``limit`` characters, else ''."""
    return value if isinstance(value, str) and len(value) <= limit else ""


def mapping(value) -> dict:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def facts(values: dict, keys: tuple[str, ...]) -> str:
    """``key=value, ...`` for the keys present (not None, not '') in ``values``, in ``keys`` order."""
    return ", ".join(f"{key}={as_text(values[key])}" for key in keys if values.get(key) not in (None, ""))


def jsonc_object(data: bytes, what: str) -> tuple[dict | None, Draft | None]:
    """A JSONC document that must be an object (a settings file): (it, None) or (None, the row saying why not)."""
    try:
        document = load_jsonc(data)
    except ValueError as exc:  # the reason names a position, never the file's text
        return None, bad_file(f"{what} is not JSON: {exc}")
    if not isinstance(document, dict):
        return None, bad_file(f"{what} is a JSON {type(document).__name__}, not an object")
    return document, None


def document_or_row(found: tuple) -> Generator[Draft, None, Any]:
    """The document of a ``(document, problem)`` pair (``text.json_document``), or None after yielding the problem row.

    ``document = yield from document_or_row(json_document(ctx.data, "thread file"))``,
    then ``if document is None: return``: a parser's opening in two lines.
    """
    document, problem = found
    if problem is not None:
        yield problem
        return None
    return document
