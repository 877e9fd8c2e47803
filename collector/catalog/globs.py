"""Catalog glob syntax: validation, brace expansion and per-segment matching.

A catalog glob is a ``/``-separated relative path. Within one segment ``*``
matches any run of characters, ``?`` one character and ``[...]`` a class
(``[!...]`` negates); a segment that is exactly ``**`` matches zero or more
whole directories. ``{a,b}`` alternatives are expanded before matching. These
are the gitwildmatch rules restricted to anchored patterns, so the walker can
expand a glob one segment at a time from its literal prefix instead of
listing a whole home (docs/catalog.md, "Glob semantics").
"""

from __future__ import annotations

import re
from functools import lru_cache

_MAGIC = re.compile(r"[*?\[]")


class GlobError(ValueError):
    """A glob that the catalog schema refuses."""


def expand_braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (nesting allowed) into plain globs.

    >>> expand_braces("tasks/*/{ui_messages,api}.json")
    ['tasks/*/ui_messages.json', 'tasks/*/api.json']
    """
    start = pattern.find("{")
    if start < 0:
        if "}" in pattern:
            raise GlobError(f"unbalanced '}}' in {pattern!r}")
        return [pattern]
    depth = 0
    parts: list[str] = []
    last = start + 1
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[last:index])
                head, tail = pattern[:start], pattern[index + 1 :]
                expanded: list[str] = []
                for part in parts:
                    expanded.extend(expand_braces(head + part + tail))
                return expanded
        elif char == "," and depth == 1:
            parts.append(pattern[last:index])
            last = index + 1
    raise GlobError(f"unbalanced '{{' in {pattern!r}")


def validate_glob(pattern: str) -> None:
    """Raise GlobError unless ``pattern`` is a safe relative catalog glob."""
    if not isinstance(pattern, str) or not pattern:
        raise GlobError("a glob must be a non-empty string")
    if "\\" in pattern:
        raise GlobError(f"backslash in {pattern!r}: use '/' for every OS")
    if pattern.startswith("/"):
        raise GlobError(f"absolute glob {pattern!r}: globs are relative to a root")
    for plain in expand_braces(pattern):
        for segment in plain.split("/"):
            if segment in ("", ".", ".."):
                raise GlobError(f"empty, '.' or '..' segment in {pattern!r}")
            if "**" in segment and segment != "**":
                raise GlobError(f"'**' must be a whole segment in {pattern!r}")
            if segment.count("[") != segment.count("]"):
                raise GlobError(f"unbalanced '[' in {pattern!r}")
            if "[" in segment:  # only a class can fail to compile: '*', '?' and escaped characters always do
                segment_regex(segment)


def is_literal(segment: str) -> bool:
    """True when the segment names one entry and needs no directory listing."""
    return not _MAGIC.search(segment)


@lru_cache(maxsize=4096)
def segment_regex(segment: str) -> re.Pattern[str]:
    """Compile one glob segment (not ``**``) to an anchored regex."""
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", index + 2)
            if end < 0:
                raise GlobError(f"unterminated class in {segment!r}")
            body = segment[index + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise GlobError(f"bad segment {segment!r}: {exc}") from exc


def split_segments(pattern: str) -> tuple[str, ...]:
    """Split a brace-free glob into segments, folding repeated ``**``."""
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment == "**" and segments and segments[-1] == "**":
            continue
        segments.append(segment)
    return tuple(segments)


def match_path(pattern: str, path: str) -> bool:
    """Match a whole relative path against a brace-free glob.

    Used in tests; the walker matches segment by segment.
    """
    return match_segments(split_segments(pattern), tuple(path.split("/")))


def path_regex(segments: tuple[str, ...]) -> str:
    """One regex (without anchors) for a whole relative path matched by ``segments``."""
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        body = segment_regex(segment).pattern[: -len(r"\Z")]
        out.append(body if last else body + "/")
    return "".join(out)


def match_segments(segments: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Match path components against glob segments (``**`` spans directories)."""
    return _match(segments, parts)


def _match(segments: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not segments:
        return not parts
    head = segments[0]
    if head == "**":
        return any(_match(segments[1:], parts[skip:]) for skip in range(len(parts) + 1))
    if not parts:
        return False
    if not segment_regex(head).match(parts[0]):
        return False
    return _match(segments[1:], parts[1:])
