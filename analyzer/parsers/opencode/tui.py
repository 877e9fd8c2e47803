"""The TUI's own files under ~/.local/state/opencode, read by the shared reader (analyzer/formats/opencode_tui.py)."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import opencode_tui
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-history.jsonl (secondary): a ``user`` row per prompt, a ``shell prompt:`` row per shell line."""
    return opencode_tui.prompt_history_rows(ctx)


def parse_prompt_stash(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-stash.jsonl: a ``stashed prompt:`` row per draft set aside, at its ``timestamp``."""
    return opencode_tui.prompt_stash_rows(ctx)


def parse_model_state(ctx: ParseContext) -> Iterator[Draft]:
    """model.json: a ``model:`` row per recently used and favourite model, and per chosen variant."""
    return opencode_tui.model_state_rows(ctx)
