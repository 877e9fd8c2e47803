"""Kiro CLI's legacy database and ~/.kiro's settings, agents and MCP file, read with the shared Q CLI walks."""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import mcp_settings
from aitrail.analyzer.formats.q_config import agent_rows, settings_rows
from aitrail.analyzer.formats.q_database import ConversationTable, parse_q_database
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

# conversations_v2 first (Kiro CLI's own table, [obs] created_at in epoch ms); conversations where a database
# still has the Q CLI table it came from
CONVERSATIONS = (ConversationTable("conversations_v2", "created_at"), ConversationTable("conversations"))


def parse_cli_db(ctx: ParseContext) -> Iterator[Draft]:
    """kiro-cli/data.sqlite3 (with its -wal): conversations, their earlier versions, history, migrations, state."""
    return parse_q_database(ctx, CONVERSATIONS)


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings/cli.json: a ``setting:`` or ``permission setting:`` row per key, ``model:`` for the default model."""
    return settings_rows(ctx)


def parse_agent(ctx: ParseContext) -> Iterator[Draft]:
    """An agent file under agents/: its allow lists and tool settings, its MCP servers (never env values)."""
    return agent_rows(ctx)


def parse_mcp(ctx: ParseContext) -> Iterator[Draft]:
    """settings/mcp.json: one ``permission setting:`` row per server (never an env or header value)."""
    return mcp_settings.setting_rows(ctx, "mcp.json")
