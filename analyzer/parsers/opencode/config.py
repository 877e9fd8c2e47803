"""The global config (opencode.json, opencode.jsonc, config.json), read by analyzer/formats/opencode_config.py."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.opencode_config import config_rows
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """opencode.json[c]: ``permission setting:`` rows for permission and tool rules, ``setting:`` rows for models."""
    return config_rows(ctx)
