"""PearAI chat sessions (Continue fork): sessions/<id>.json, sessions.json, dev_data/*.jsonl.

The walk is Continue's (formats/continue_sessions.py), in PearAI's stores
``chat_sessions`` and ``session_index``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import continue_sessions as sessions
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_chat_session(ctx: ParseContext) -> Iterator[Draft]:
    """A chat session file (~/.pearai/sessions/<id>.json): one row per history and perplexityHistory message.

    Every row takes the session's ``dateCreated`` from sessions.json (``index`` time) and
    its workspace; a ``model:`` row is written where a message's promptLogs name a model
    or change it.
    """
    yield from sessions.read_session(ctx, index_store="session_index")


def parse_session_index(ctx: ParseContext) -> Iterator[Draft]:
    """Bad index entries, and entries whose session file is not in the bundle."""
    yield from sessions.unlisted_sessions(ctx, sessions_store="chat_sessions")


def parse_dev_data_chat(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data/chat.jsonl (secondary): the prompt's last user block, the completion, the feedback.

    The file keeps no time; a prompt without a user block is a ``model request:`` row.
    """
    yield from sessions.dev_data_chat_rows(ctx, index_store="session_index")


def parse_tokens_generated(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data/tokens_generated.jsonl: one ``tokens generated:`` row per line (no time recorded)."""
    yield from sessions.tokens_generated_rows(ctx)
