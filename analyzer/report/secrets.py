"""Secrets typed or pasted into a prompt, found by pattern and shown redacted.

Each pattern is one literal start (tested with ``in`` before the pattern
runs), character classes with bounded repeats and a guard before and after,
no nested repeats: a failed attempt costs at most its longest repeat, and the
guards keep an attempt from starting inside a run another attempt already
read. At most ``SCAN_MAX`` characters of a prompt are scanned and at most
``FOUND_MAX`` secrets kept of one prompt. The page shows a match only as
``redact`` gives it: its first four characters, ``…`` and its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCAN_MAX = 256 * 1024  # characters of one prompt scanned
FOUND_MAX = 100  # secrets kept of one prompt
SHOWN = 4  # characters of a match the redacted form keeps


@dataclass(frozen=True)
class Pattern:
    """A named secret pattern: the literals one of which a text must hold, the expression, and a check of a match."""

    kind: str
    literals: tuple[str, ...]
    expression: re.Pattern
    mixed: bool = False  # the match must hold a letter and a digit (generic shapes; cuts prose false positives)
    lower: bool = False  # the literals are looked for in the lower-cased text


def _p(kind: str, literals: tuple[str, ...], expression: str, *, mixed: bool = False, lower: bool = False,
       flags: int = 0) -> Pattern:
    return Pattern(kind, literals, re.compile(expression, flags), mixed, lower)


_KEY = r"[A-Za-z0-9_-]"  # base64url and the token alphabets below
_VALUE = r"[^\s\"'<>{}$]"  # an assigned value: no blank, quote, markup or ${VAR} reference
_VALUE_END = r"[^\s\"'<>{}$,;.)]"  # ... whose last character is not the sentence's punctuation
# In order of precedence: a match overlapping an earlier pattern's match is not reported again.
PATTERNS = (
    _p("private key", ("-----BEGIN ",), r"-----BEGIN [A-Z0-9 ]{0,64}PRIVATE KEY-----"),
    _p("AWS access key", ("AKIA", "ASIA"), r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    _p("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
       r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])"),
    _p("GitLab token", ("glpat-",), rf"(?<!{_KEY})glpat-{_KEY}{{20,255}}(?!{_KEY})"),
    _p("Slack token", ("xox",), r"(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9-])"),
    _p("Anthropic API key", ("sk-ant-",), rf"(?<!{_KEY})sk-ant-{_KEY}{{20,255}}(?!{_KEY})"),
    _p("OpenAI API key", ("sk-",), rf"(?<!{_KEY})sk-(?!ant-){_KEY}{{20,255}}(?!{_KEY})", mixed=True),
    _p("Google API key", ("AIza",), rf"(?<!{_KEY})AIza{_KEY}{{35}}(?!{_KEY})"),
    _p("JWT", ("eyJ",), rf"(?<!{_KEY})eyJ{_KEY}{{8,2048}}\.eyJ{_KEY}{{8,4096}}\.{_KEY}{{8,2048}}(?!{_KEY})"),
    _p("bearer token", ("bearer",), r"\bbearer[ \t]{1,5}[A-Za-z0-9._~+/-]{20,2048}=*(?![A-Za-z0-9._~+/=-])",
       mixed=True, lower=True, flags=re.IGNORECASE),
    _p("password assignment", ("pass", "pwd"),
       rf"\b(?:password|passwd|pwd)[ \t]{{0,5}}[=:][ \t]{{0,5}}[\"']?{_VALUE}{{5,199}}{_VALUE_END}",
       lower=True, flags=re.IGNORECASE),
    _p("token assignment", ("token", "secret", "key"),
       r"\b(?:token|secret|api[_-]?key|access[_-]?key|auth[_-]?token|client[_-]?secret)[ \t]{0,5}[=:][ \t]{0,5}"
       rf"[\"']?{_VALUE}{{7,199}}{_VALUE_END}", mixed=True, lower=True, flags=re.IGNORECASE),
)
_LOWER_ONLY = re.compile(r"[a-z]+")
_ASSIGNED = re.compile(r"[=:][ \t]*[\"']?")


def redact(match: str) -> str:
    """The shown form of a secret: its first four characters, ``…`` and its length."""
    return f"{match[:SHOWN]}…{len(match)}"


def find_secrets(text: str) -> list[tuple[str, str]]:
    """``(kind, redacted)`` of each secret in ``text`` (its first SCAN_MAX characters), left to right."""
    return [(kind, redact(text[start:end])) for start, end, kind in _matches(text)]


def redacted_text(text: str) -> str:
    """``text`` (at most SCAN_MAX characters of it) with every secret in it replaced by its redacted form."""
    head, parts, position = text[:SCAN_MAX], [], 0
    for start, end, _ in _matches(head):
        parts += [head[position:start], redact(head[start:end])]
        position = end
    return "".join(parts) + head[position:]


def _matches(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of each secret in the first SCAN_MAX characters of ``text``, left to right."""
    head = text[:SCAN_MAX]
    lowered = None
    kept: list[tuple[int, int, str]] = []
    for pattern in PATTERNS:
        if pattern.lower and lowered is None:
            lowered = head.lower()
        haystack = lowered if pattern.lower else head
        if not any(literal in haystack for literal in pattern.literals):
            continue
        for match in pattern.expression.finditer(head):
            if len(kept) >= FOUND_MAX:
                break
            start, end = match.span()
            if any(start < other_end and other_start < end for other_start, other_end, _ in kept):
                continue
            if _plausible(pattern, match.group(0)):
                kept.append((start, end, pattern.kind))
    return sorted(kept)


def _plausible(pattern: Pattern, found: str) -> bool:
    """Generic shapes need a letter and a digit; an assigned password must not be one lower-case word."""
    value = found
    if pattern.kind.endswith("assignment"):
        assigned = _ASSIGNED.search(found)
        value = found[assigned.end():] if assigned else found
        if pattern.kind == "password assignment":
            return not _LOWER_ONLY.fullmatch(value)
    if pattern.mixed:
        return any(char.isdigit() for char in value) and any(char.isalpha() for char in value)
    return True
