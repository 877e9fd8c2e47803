r"""Linear-time text scans, where a lazy regex would be quadratic on hostile text.

``re.findall(r"<(a|b)>(.*?)</\1>", text)`` retries ``.*?`` from every
opening tag to the end of the text when the closing tag never comes: a
prompt of 40,000 ``<command-name>`` takes three minutes, a 32 MiB line
forever. These helpers give the same results with one pass.
"""

from __future__ import annotations

import re


def tag_pairs(text: str, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, content) of every ``<name>content</name>``, left to right, as that findall would give them.

    Content is up to the first closing tag of the same name; an opening tag
    without one is skipped, and after the first such, every later opening tag
    of that name is too (no closing tag follows it either).
    """
    opening = re.compile("<(" + "|".join(re.escape(name) for name in names) + ")>")
    found: list[tuple[str, str]] = []
    unclosed: set[str] = set()
    position = 0
    while True:
        match = opening.search(text, position)
        if match is None:
            return found
        name = match.group(1)
        end = -1 if name in unclosed else text.find(f"</{name}>", match.end())
        if end < 0:
            unclosed.add(name)
            position = match.start() + 1
            continue
        found.append((name, text[match.end():end]))
        position = end + len(name) + 3


def search_after(text: str, marker: str, pattern: re.Pattern) -> re.Match | None:
    """``re.search(marker + ".*?" + pattern)``'s match of ``pattern``: its first match after the first ``marker``.

    Any later marker is followed by less text, so the first one decides.
    """
    start = text.find(marker)
    return None if start < 0 else pattern.search(text, start + len(marker))
