"""Field values of Qwen Code records as row text."""

from __future__ import annotations

from aitrail.analyzer.formats.gemini_content import compact
from aitrail.analyzer.formats.idioms import as_dict, as_list

__all__ = ["as_dict", "as_list", "as_text"]


def as_text(value) -> str:
    """A string as it is, nothing as '', anything else as compact JSON (a field of an unexpected type)."""
    return value if isinstance(value, str) else "" if value is None else compact(value)
