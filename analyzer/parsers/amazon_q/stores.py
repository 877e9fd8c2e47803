"""The Amazon Q Developer CLI's stores, each read with the shared Q CLI walk (formats/q_*.py, mcp_settings.py)."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import mcp_settings
from aitrail.analyzer.formats.q_config import agent_rows, settings_rows
from aitrail.analyzer.formats.q_database import ConversationTable, parse_q_database
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

CONVERSATIONS = (ConversationTable("conversations"),)  # key = absolute directory, value = ConversationState JSON


def parse_data_db(ctx: ParseContext) -> Iterator[Draft]:
    """data.sqlite3 (with its -wal): conversations and their earlier versions, shell history, migrations, state."""
    return parse_q_database(ctx, CONVERSATIONS)


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: a ``setting:`` or ``permission setting:`` row per key, ``model:`` for the default model."""
    return settings_rows(ctx)


def parse_agent(ctx: ParseContext) -> Iterator[Draft]:
    """An agent file under cli-agents/: its allow lists and tool settings, its MCP servers (never env values)."""
    return agent_rows(ctx)


def parse_mcp(ctx: ParseContext) -> Iterator[Draft]:
    """~/.aws/amazonq/mcp.json: one ``permission setting:`` row per server (names and commands, never env values)."""
    return mcp_settings.setting_rows(ctx, "mcp.json")
