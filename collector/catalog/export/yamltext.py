"""A small block-style YAML writer for the exports (no PyYAML: the frozen collector has none).

It writes mappings (in the order given), sequences, strings, numbers and
booleans, and nothing else. A string is written plain only when YAML (1.1
and 1.2, PyYAML and Go's yaml alike) reads it back as the same string; a
multi-line string is a literal block (``|`` or ``|-``); any other string is
single-quoted, or double-quoted when it holds a quote or a control
character. tests/collector/test_catalog_export.py reads every generated
document back with PyYAML and compares it with what was written.
"""

from __future__ import annotations

import json
import re

_PLAIN = re.compile(r"[A-Za-z_./][A-Za-z0-9_./()-]*(?: [A-Za-z0-9_./()-]+)*")
# words YAML 1.1 resolves to booleans or null (Go's yaml.v2 also takes y/n), numbers, and '~'
_RESERVED = re.compile(r"(?i)(?:y|n|yes|no|true|false|on|off|null|~|[-+]?[0-9][0-9_.:eE+-]*|\.inf|\.nan)")


def scalar(value: object) -> str:
    """One scalar on one line (a multi-line string is not a scalar here: see ``dump``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as YAML here")
    if _PLAIN.fullmatch(value) and not _RESERVED.fullmatch(value):
        return value
    if "'" not in value and value.isprintable():
        return "'" + value + "'"
    return json.dumps(value, ensure_ascii=False)


def _block(text: str, indent: str) -> list[str]:
    """A literal block scalar: ``|`` keeps one final newline, ``|-`` none."""
    if text.startswith((" ", "\n")) or any(line != line.rstrip() for line in text.split("\n")):
        raise ValueError(f"a literal block cannot start with a blank or carry trailing blanks: {text[:40]!r}")
    lines = text.split("\n")
    indicator = "|"
    if text.endswith("\n"):
        lines = lines[:-1]
        if text.endswith("\n\n"):
            raise ValueError("a literal block ends with one newline at most")
    else:
        indicator = "|-"
    return [indicator] + [indent + line if line else "" for line in lines]


def _value_lines(value: object, indent: str) -> tuple[str, list[str]]:
    """What follows ``key:`` on its line, and the lines below it."""
    if isinstance(value, str) and "\n" in value:
        head, *rest = _block(value, indent + "  ")
        return " " + head, rest
    if isinstance(value, dict):
        if not value:
            raise ValueError("an empty mapping is not written here")
        return "", _mapping(value, indent + "  ")
    if isinstance(value, list):
        if not value:
            return " []", []
        return "", _sequence(value, indent + "  ")
    return " " + scalar(value), []


def _mapping(data: dict, indent: str) -> list[str]:
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str) or not _PLAIN.fullmatch(key):
            raise ValueError(f"mapping key {key!r} must be a plain word")
        head, rest = _value_lines(value, indent)
        lines.append(f"{indent}{key}:{head}")
        lines.extend(rest)
    return lines


def _sequence(items: list, indent: str) -> list[str]:
    lines: list[str] = []
    for item in items:
        if isinstance(item, dict):
            body = _mapping(item, indent + "  ")
            lines.append(f"{indent}- {body[0].lstrip()}")
            lines.extend(body[1:])
        elif isinstance(item, list):
            raise ValueError("a sequence directly inside a sequence is not written here")
        elif isinstance(item, str) and "\n" in item:
            head, *rest = _block(item, indent + "  ")
            lines.append(f"{indent}- {head}")
            lines.extend(rest)
        else:
            lines.append(f"{indent}- {scalar(item)}")
    return lines


def dump(document: dict) -> str:
    """The YAML text of one mapping, block style, ending with a newline."""
    return "\n".join(_mapping(document, "")) + "\n"
