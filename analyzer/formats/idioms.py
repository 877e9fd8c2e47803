"""Row idioms every agent spells the same: file-mtime time, JSON-pointer locators, setting values.

* ``file_mtime(ctx)``: the time columns of a row whose only time is the file's
  modification time (standing settings, trackers, saved chats).
* ``pointer(*parts, scheme="json")``: a locator into a document, RFC 6901
  escaping (``~`` as ``~0``, ``/`` as ``~1``): ``json:/projects/~1home~1dev``.
* ``setting_value(value)``: the value in a ``permission setting:`` (and
  ``setting:``) row: compact JSON, keys in the order the file recorded them
  (what the user or the tool wrote, not a normalised form), non-ASCII kept, and
  what JSON cannot hold (TOML dates and times, SQLite BLOBs) as its text.
"""

from __future__ import annotations

import json

from aitrail.analyzer.context import ParseContext


def file_mtime(ctx: ParseContext) -> dict:
    """``timestamp_ns`` and ``timestamp_source`` for a row timed by its file's mtime."""
    return {"timestamp_ns": ctx.source.mtime_ns, "timestamp_source": "file-mtime"}


def escape_key(key) -> str:
    """One reference token of a JSON pointer (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer(*parts, scheme: str = "json") -> str:
    """A locator into a parsed document, e.g. ``pointer("projects", "/home/dev")`` -> ``json:/projects/~1home~1dev``.

    Args:
        *parts: the keys and array indexes from the document's root.
        scheme: what the document is (``json``, ``toml``).
    """
    return f"{scheme}:/" + "/".join(escape_key(part) for part in parts)


def as_dict(value) -> dict:
    """``value`` if it is a JSON object, else an empty one (a subject-written field of the wrong shape)."""
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def plain(value) -> str:
    """What JSON cannot hold (SQLite BLOBs, TOML dates and times) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def setting_value(value) -> str:
    """A setting's value as ``permission setting:`` rows write it: compact JSON, recorded key order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)
