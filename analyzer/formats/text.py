"""Small text helpers every parser uses: bounded excerpts and parser: rows."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.rows import Draft

EXCERPT_CHARS = 300


def excerpt(value: str | bytes, limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters; longer input says how long it was."""
    if isinstance(value, bytes):
        # the first ``limit`` characters come from at most 4 bytes each: a 32 MiB line is not decoded whole
        head = value if len(value) <= 4 * limit + 4 else value[:4 * limit + 4]
        text = head.decode("utf-8", "backslashreplace")
        length = f"{len(value)} bytes"
    else:
        text, length = value, f"{len(value)} characters"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({length})"


def bad_line(number: int, reason: str, raw: bytes) -> Draft:
    """``parser: unparseable line (<reason>): <line>`` at ``line:N``."""
    return Draft("system", f"parser: unparseable line ({reason}): {excerpt(raw)}", f"line:{number}",
                 timestamp_source="none")


def bad_record(locator: str, reason: str, raw: str | bytes = "") -> Draft:
    """``parser: unparseable record (<reason>): <record>`` for anything that is not a line."""
    suffix = f": {excerpt(raw)}" if raw else ""
    return Draft("system", f"parser: unparseable record ({reason}){suffix}", locator, timestamp_source="none")


def bad_file(reason: str) -> Draft:
    """The row for a file that cannot be read at all (``reason`` says why)."""
    return Draft("system", f"parser: unparseable file ({reason})", "file", timestamp_source="none")


def json_document(data: bytes, what: str, kind: type = dict, loads=None) -> tuple[object, Draft | None]:
    """A whole-file JSON document of the expected kind, or the ``parser: unparseable file`` row saying why not.

    ``what`` names the file in the row (``"session file"``); ``loads`` replaces
    ``json.loads`` for dialects such as JSONC.
    """
    try:
        document = decode_json(data, loads or json.loads)
    except (ValueError, UnicodeDecodeError) as exc:  # too deep or too large are ValueErrors too
        return None, bad_file(f"{what} is not JSON: {exc}")
    if not isinstance(document, kind):
        expected = "an object" if kind is dict else "an array"
        return None, bad_file(f"{what} is a JSON {type(document).__name__}, not {expected}")
    return document, None
