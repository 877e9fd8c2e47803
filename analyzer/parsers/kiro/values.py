"""Kiro's times, written in three units across its stores ([obs], research section 5.4), and small shared names."""

from __future__ import annotations

from aitrail.analyzer.formats.idioms import EPOCH_MS_FROM, epoch_ns
from aitrail.analyzer.formats.q_conversation import ERROR_PREFIX  # noqa: F401 (this package's name for it)
from aitrail.analyzer.view.rows import ns_from_iso


def kiro_time(value) -> int | None:
    """An ISO 8601 text with a zone, or an epoch number (or digit string): seconds below 1e11, else ms.

    The magnitude rule is the community readers' (franken_agent_detection
    kiro.rs ``kiro_epoch_ms``; cli-continues kiro.ts ``parseDateValue``): the
    Kiro CLI writes a Prompt's ``meta.timestamp`` in seconds, the IDE's session
    files ms, seconds or ISO text. A text without a zone is not a time here.
    """
    return epoch_ns(value, numeric_text=True)


def time_unit(value) -> str:
    """What ``kiro_time`` read ``value`` as: ``epoch s``, ``epoch ms``, ``ISO 8601`` ('' for no time)."""
    if kiro_time(value) is None:
        return ""
    if isinstance(value, str) and ns_from_iso(value) is not None:
        return "ISO 8601"
    return "epoch s" if float(value) < EPOCH_MS_FROM else "epoch ms"
