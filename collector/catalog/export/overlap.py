"""Whether two catalog globs can match one path: the never-collect check of formats without exclusions.

KAPE targets and ForensicArtifacts definitions have no way to exclude a
file, so an export to them must only contain globs that cannot match a
credential the catalog names (``collect: never``). This module decides that
exactly, for the catalog's glob language (collector/catalog/globs.py): two
brace-free globs overlap when some path is matched by both.

Within a segment the glob tokens are literals, ``?``, ``[...]`` classes
(``[!...]`` negated) and ``*``; a whole ``**`` segment is zero or more
directories. Two segments meet when a product automaton of their token
lists reaches both ends; two globs meet when a walk over their segment lists
does, a ``**`` either skipping itself or taking one whole segment of the
other side. Both walks visit each pair of positions once, so the cost is the
product of the lengths.

The comparison ignores case, as Windows, macOS (by default), KAPE,
Velociraptor's glob and plaso's find specifications do: two letters that
differ only in case are the same letter. That only ever finds more
overlaps than a case-sensitive file system has, never fewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from aitrail.collector.catalog.globs import GlobError


@dataclass(frozen=True)
class _Token:
    """One position of a segment: a literal character, ``?``, a class, or ``*`` (``star``)."""

    kind: str  # "char" | "any" | "class" | "star"
    chars: frozenset[str] = frozenset()  # the literal, or the class's members, as written (case kept)
    negated: bool = False

    @property
    def folded(self) -> frozenset[str]:
        """The characters with case ignored (each letter lowercased)."""
        return frozenset(char.lower() for char in self.chars)


def _class_members(body: str) -> frozenset[str]:
    """The characters of a class body (``a-z`` ranges expanded), as written."""
    members: set[str] = set()
    index = 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            low, high = ord(body[index]), ord(body[index + 2])
            if high < low:
                raise GlobError(f"reversed range in class [{body}]")
            members.update(chr(code) for code in range(low, high + 1))
            index += 3
        else:
            members.add(body[index])
            index += 1
    return frozenset(members)


def segment_tokens(segment: str) -> tuple[_Token, ...]:
    """Tokenise one glob segment (not ``**``) as collector/catalog/globs.py's segment_regex reads it."""
    tokens: list[_Token] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            tokens.append(_Token("star"))
        elif char == "?":
            tokens.append(_Token("any"))
        elif char == "[":
            end = segment.find("]", index + 2)
            if end < 0:
                raise GlobError(f"unterminated class in {segment!r}")
            body = segment[index + 1 : end]
            negated = body.startswith("!")
            tokens.append(_Token("class", _class_members(body[1:] if negated else body), negated))
            index = end
        else:
            tokens.append(_Token("char", frozenset(char)))
        index += 1
    return tuple(tokens)


def _negated_admits(token: _Token, char: str) -> bool:
    """A negated class admits a letter, case ignored, when one of its two cases is outside the class."""
    return char.lower() not in token.chars or char.upper() not in token.chars


def _one_char_meets(left: _Token, right: _Token) -> bool:
    """Some one character is matched by both single-character tokens (``star`` counts as ``any`` here)."""
    if left.kind in ("any", "star") or right.kind in ("any", "star"):
        return True
    left_negated = left.kind == "class" and left.negated
    right_negated = right.kind == "class" and right.negated
    if left_negated and right_negated:
        return True  # two negated classes always leave letters for both
    if left_negated:
        return any(_negated_admits(left, char) for char in right.chars)
    if right_negated:
        return any(_negated_admits(right, char) for char in left.chars)
    return bool(left.folded & right.folded)


def segments_overlap(left: str, right: str) -> bool:
    """Some single path component is matched by both glob segments (neither is ``**``)."""
    first, second = segment_tokens(left), segment_tokens(right)
    seen: set[tuple[int, int]] = set()
    pending = [(0, 0)]
    while pending:
        state = pending.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j = state
        if i == len(first) and j == len(second):
            return True
        if i < len(first) and first[i].kind == "star":
            pending.append((i + 1, j))  # the star matches nothing more
        if j < len(second) and second[j].kind == "star":
            pending.append((i, j + 1))
        if i < len(first) and j < len(second) and _one_char_meets(first[i], second[j]):
            # one character consumed on each side; a star stays where it is
            step = (i if first[i].kind == "star" else i + 1, j if second[j].kind == "star" else j + 1)
            if step != state:
                pending.append(step)
    return False


def _literal(segment: str) -> bool:
    return segment != "**" and not any(char in segment for char in "*?[")


def _literal_prefixes_differ(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Two leading literal directories that differ (case ignored): no path can match both."""
    for left, right in zip(first, second, strict=False):
        if not (_literal(left) and _literal(right)):
            return False
        if left.lower() != right.lower():
            return True
    return False


@lru_cache(maxsize=65536)
def globs_overlap(left: str, right: str) -> bool:
    """Some relative path is matched by both brace-free globs (``/``-separated, ``**`` whole segments)."""
    first, second = tuple(left.split("/")), tuple(right.split("/"))
    if _literal_prefixes_differ(first, second):
        return False  # the common case (different roots or stores), decided without the walk
    seen: set[tuple[int, int]] = set()
    pending = [(0, 0)]
    while pending:
        state = pending.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j = state
        if i == len(first) and j == len(second):
            return True
        left_star = i < len(first) and first[i] == "**"
        right_star = j < len(second) and second[j] == "**"
        if left_star:
            pending.append((i + 1, j))  # ** matches no directory
            if j < len(second):
                pending.append((i, j + 1))  # ** takes one whole segment of the other side
        if right_star:
            pending.append((i, j + 1))
            if i < len(first):
                pending.append((i + 1, j))
        if (i < len(first) and j < len(second) and not left_star and not right_star
                and segments_overlap(first[i], second[j])):
            pending.append((i + 1, j + 1))
    return False
