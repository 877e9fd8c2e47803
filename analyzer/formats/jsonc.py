"""JSONC: JSON with ``//`` and ``/* */`` comments and trailing commas, decoded within decode.py's bounds.

VS Code's ``settings.json`` and ``mcp.json``, Cursor's ``permissions.json`` and
Gemini CLI's settings are JSONC (research/formats-vscode-family.md 1.2, 2.9;
research/formats-cli-agents.md, Cursor CLI "Editor-side allowlists"). The
dialect is the one of microsoft/node-jsonc-parser (``src/impl/scanner.ts``,
``parse`` with ``allowTrailingComma``) as VS Code reads these files:

- comments are whitespace; text inside strings is never a comment;
- a comma directly (bar whitespace and comments) before ``]`` or ``}`` is dropped;
- an unclosed ``/*`` comments out the rest of the text, as node-jsonc-parser's
  scanner and strip-json-comments do (the JSON before it must then be complete).

One left-to-right pass with ``str.find`` and an unrolled string pattern: the
time is linear in the text whatever it holds (no lazy ``.*?`` retried from each
``/*``, see scan.py). The stripped text is decoded by ``decode_json``, so nesting
and decoded size are bounded; every failure is a ValueError.
"""

from __future__ import annotations

import re

from aitrail.analyzer.view.decode import decode_json

# the rest of a string after its opening quote, up to and with its closing quote (unrolled: no backtracking)
_STRING_TAIL = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SIGNIFICANT = re.compile(r'["/,\]}]')


def strip_jsonc(text: str, trailing_commas: bool = True) -> str:
    """``text`` as plain JSON: comments become whitespace (newlines kept), trailing commas are removed.

    Args:
        text: JSONC text.
        trailing_commas: remove trailing commas (VS Code's JSONC); False keeps them, so that
            they fail to decode as they do for agents that only strip comments (Gemini CLI's
            strip-json-comments, then JSON.parse).

    Returns:
        JSON text with the same line numbers, for ``json`` error messages that point at the original.
    """
    pieces: list[str] = []
    pending_comma = -1  # index in ``pieces`` of a comma that may turn out to be trailing
    position = 0
    while True:
        match = _SIGNIFICANT.search(text, position)
        if match is None:
            pieces.append(text[position:])
            break
        start = match.start()
        between = text[position:start]
        pieces.append(between)
        if between.strip():
            pending_comma = -1  # a value came after the comma: it was not trailing
        mark = text[start]
        if mark == '"':
            tail = _STRING_TAIL.match(text, start + 1)
            end = tail.end() if tail else len(text)  # unterminated: json reports it
            pieces.append(text[start:end])
            pending_comma, position = -1, end
        elif mark == "/" and text.startswith("//", start):
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            pieces.append(" ")
            position = end
        elif mark == "/" and text.startswith("/*", start):
            end = text.find("*/", start + 2)
            end = len(text) if end < 0 else end + 2  # unclosed: the rest is a comment
            pieces.append(" " + "\n" * text.count("\n", start, end))
            position = end
        elif mark == ",":
            pending_comma = len(pieces)
            pieces.append(",")
            position = start + 1
        elif mark in "]}":
            if pending_comma >= 0 and trailing_commas:
                pieces[pending_comma] = " "
            pending_comma = -1
            pieces.append(mark)
            position = start + 1
        else:  # a lone "/": not JSON, left for json to report
            pending_comma = -1
            pieces.append(mark)
            position = start + 1
    return "".join(pieces)


def load_jsonc(data: bytes | str, trailing_commas: bool = True) -> object:
    """Decode a JSONC document (UTF-8, an optional BOM) into Python values.

    Args:
        data: the file's bytes, or text.
        trailing_commas: whether trailing commas are allowed (see strip_jsonc).

    Returns:
        The decoded value (any JSON type).

    Raises:
        ValueError: the text is not UTF-8, not JSONC, nests too deep or would decode too large.
    """
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data.removeprefix("\ufeff")
    except UnicodeDecodeError as exc:  # a ValueError already; the message says which byte
        raise ValueError(f"not UTF-8: {exc}") from exc
    return decode_json(strip_jsonc(text, trailing_commas))
