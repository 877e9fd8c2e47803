"""Small text helpers every parser uses: bounded excerpts and parser: rows."""

from __future__ import annotations

import json

from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

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


# -- images ------------------------------------------------------------------------------------
# Every agent that keeps pictures keeps them as base64 inside the transcript (Anthropic
# ``source``, OpenAI ``image_url``, Responses ``input_image``, Pi ``data``/``mimeType``,
# Continue ``imageUrl``, Gemini ``inlineData``). A row never carries those bytes: megabytes in
# one CSV cell help nobody and hide the text around them. The placeholder keeps what an
# examiner can use (the type, the decoded size, a remote address) and the row's locator
# leads to the bytes themselves.
IMAGE_BLOCK_TYPES = frozenset({"image", "image_url", "input_image", "imageUrl", "image_file"})


def is_image_block(block: object) -> bool:
    """True for a content block that holds a picture, in any of the shapes the agents write."""
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if isinstance(kind, str) and kind in IMAGE_BLOCK_TYPES:
        return True
    inline = block.get("inlineData")
    return kind is None and isinstance(inline, dict) and str(inline.get("mimeType", "")).startswith("image/")


def image_placeholder(block: object) -> str:
    """``[image]``, with the MIME type and decoded size (or a remote address) where the block gives them.

    ``[image image/png, 48213 bytes]``; ``[image https://example.com/a.png]``.
    The base64 payload is measured, never copied; anything of the wrong type
    is simply not described.
    """
    mime, data, url = _image_parts(block if isinstance(block, dict) else {})
    if isinstance(url, str) and url.startswith("data:"):
        header, _, data = url.partition(",")
        mime = mime or header[len("data:"):].split(";", 1)[0] or None
        url = None
    facts = [excerpt(mime, 80)] if isinstance(mime, str) and mime else []
    if isinstance(data, str) and data:
        facts.append(f"{base64_size(data)} bytes")
    elif isinstance(url, str) and url:
        facts.append(excerpt(url, 200))
    return f"[image {', '.join(facts)}]" if facts else "[image]"


def base64_size(data: str) -> int:
    """The number of bytes a base64 text decodes to (line breaks, spaces and padding not counted)."""
    length = len(data) - data.count("\n") - data.count("\r") - data.count(" ")
    padding = len(data.rstrip(" \r\n")) - len(data.rstrip("= \r\n"))
    return max(0, (length - padding) * 3 // 4)


def _image_parts(block: dict) -> tuple[object, object, object]:
    """(MIME type, base64 data, URL) of an image block; each None where this shape does not hold it."""
    source = block.get("source")
    if isinstance(source, dict):  # Anthropic: {"type": "base64" | "url", "media_type", "data" | "url"}
        return source.get("media_type"), source.get("data"), source.get("url")
    inline = block.get("inlineData")
    if isinstance(inline, dict):  # Gemini parts
        return inline.get("mimeType"), inline.get("data"), None
    for key in ("image_url", "imageUrl"):  # OpenAI chat {"url": ...}, Responses a plain string, Continue
        value = block.get(key)
        if isinstance(value, dict):
            return None, None, value.get("url")
        if isinstance(value, str):
            return None, None, value
    mime = next((block[key] for key in ("mimeType", "media_type", "mime_type", "mediaType") if key in block), None)
    return mime, block.get("data"), block.get("url")
