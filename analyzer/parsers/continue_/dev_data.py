"""Continue's dev_data event logs: dev_data/0.2.0/<event>.jsonl, dev_data/0.1.0/*.jsonl, dev_data/*.jsonl.

Every line of the 0.2.0 schema carries an ISO ``timestamp``; the older layouts
none. chatInteraction, toolUsage and chatFeedback repeat what the session file
holds (secondary stores, written in the session rows' words so repeats are
dropped); they outlive a deleted session.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import continue_sessions as walk
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_chat_interaction(ctx: ParseContext) -> Iterator[Draft]:
    """chatInteraction.jsonl: the prompt's last block when the user typed it, and the completion.

    A call made after a tool result ends its prompt with a ``<tool>`` block: it gives
    the completion only (the user's prompt was given by the call before it).
    """
    yield from walk.dev_data_chat_rows(ctx, index_store="session_index", typed_last=True)


def parse_tool_usage(ctx: ParseContext) -> Iterator[Draft]:
    """toolUsage.jsonl: the call, ``permission decision: denied`` when not accepted, and the output."""
    yield from walk.tool_usage_rows(ctx)


def parse_tokens_generated(ctx: ParseContext) -> Iterator[Draft]:
    """tokensGenerated.jsonl: one ``tokens generated:`` row per line, at its ISO timestamp."""
    yield from walk.tokens_generated_rows(ctx)


def parse_prompt_events(ctx: ParseContext) -> Iterator[Draft]:
    """chatFeedback.jsonl (rated replies) and editInteraction.jsonl (edit-mode requests).

    Prompt, completion and the feedback row as in the chat logs; an edit request's
    prompt is its last ``<user>`` block, or a ``model request:`` row.
    """
    yield from walk.dev_data_chat_rows(ctx, index_store="session_index", typed_last=True)


def parse_dev_data_v010(ctx: ParseContext) -> Iterator[Draft]:
    """Schema 0.1.0 and pre-versioned files (no time): chat / chatFeedback, tokens, quickEdit.

    The file name decides the shape: ``chat``/``chatFeedback`` as the chat logs,
    ``tokens_generated``/``tokensGenerated`` as token rows, ``quickEdit`` one
    ``user`` row per prompt typed into Quick Edit.
    """
    stem = ctx.source.name.removesuffix(".jsonl")
    if stem in ("tokens_generated", "tokensGenerated"):
        yield from walk.tokens_generated_rows(ctx)
    elif stem == "quickEdit":
        yield from each_line(ctx, _quick_edit)
    else:
        yield from walk.dev_data_chat_rows(ctx, index_store="session_index")


def _quick_edit(line: Line) -> Iterator[Draft]:
    record = line.value
    if not isinstance(record.get("prompt"), str):
        yield bad_line(line.number, "quick edit without a prompt", line.raw)
        return
    model = str(record.get("model") or "")
    yield Draft("user", str(record.get("prompt") or ""), line.locator, model=model, timestamp_source="none")
