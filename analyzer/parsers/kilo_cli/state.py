"""Kilo CLI's TUI files and global config: the OpenCode shapes (analyzer/formats/opencode_tui.py, opencode_config.py).

Kilo 7.x kept OpenCode's TUI components and config schema: prompt-history.jsonl,
prompt-stash.jsonl and model.json under ~/.local/state/kilo, and the
``permission``/``tools``/``agent`` rules in kilo.jsonc, kilo.json, opencode.jsonc or
opencode.json under ~/.config/kilo (kilo 7.7.9 ``ALL_CONFIG_FILES``).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import opencode_config, opencode_tui
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-history.jsonl (secondary): the last prompts typed, kept after their session is deleted."""
    yield from opencode_tui.prompt_history_rows(ctx)


def parse_prompt_stash(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-stash.jsonl: drafts set aside unsent, as ``stashed prompt:`` rows."""
    yield from opencode_tui.prompt_stash_rows(ctx)


def parse_model_state(ctx: ParseContext) -> Iterator[Draft]:
    """model.json: recent, favourite and variant models chosen in the TUI, as ``model:`` rows."""
    yield from opencode_tui.model_state_rows(ctx)


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """kilo.json[c] / opencode.json[c]: ``permission setting:`` and ``setting:`` rows."""
    yield from opencode_config.config_rows(ctx)
