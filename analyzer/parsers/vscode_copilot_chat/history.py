"""Prompt copies in state.vscdb (secondary): the chat input history and the inline-chat history.

* ``memento/interactive-session`` (workspace DB): ``{"history": {"<provider or
  location>": [{"text", "state"} | "text", ...]}}``, the last 40 prompts typed in
  each chat location (very old values are plain strings);
* ``inline-chat-history`` (global DB): a JSON array of the prompts typed in
  inline chat (Ctrl+I).

Each prompt is a user row written as the session file's user row is, so the
run drops the prompts a session still holds; a prompt of a deleted session, or
an inline-chat prompt (those are not kept as sessions), stays, marked secondary.
The values record no time: the rows carry none.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.formats.vscode_db import KeyRow
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .project import project_of
from .state import decoded_value, read_keys

MEMENTO_KEY, INLINE_KEY = "memento/interactive-session", "inline-chat-history"


def _prompt(ctx: ParseContext, text: str, locator: str) -> Draft:
    return Draft("user", text, locator, timestamp_source="none", project_path=project_of(ctx).path)


def _memento(ctx: ParseContext, row: KeyRow) -> Iterator[Draft]:
    value, problem = decoded_value(row)
    if problem is not None:
        yield problem
        return
    history = value.get("history") if isinstance(value, dict) else None
    if not isinstance(history, dict):
        yield bad_record(row.locator(), f"{MEMENTO_KEY} has no history object")
        return
    for location, entries in history.items():
        if not isinstance(entries, list):
            yield bad_record(row.locator("history", location), "history entry list is not an array")
            continue
        for position, entry in enumerate(entries):
            text = entry.get("text") if isinstance(entry, dict) else entry
            where = row.locator("history", location, position)
            if isinstance(text, str) and text.strip():
                yield _prompt(ctx, text, where)
            elif not isinstance(text, str):
                yield bad_record(where, "history entry without text")


def _inline(ctx: ParseContext, row: KeyRow) -> Iterator[Draft]:
    value, problem = decoded_value(row)
    if problem is not None:
        yield problem
        return
    if not isinstance(value, list):
        yield bad_record(row.locator(), f"{INLINE_KEY} is a JSON {type(value).__name__}, not an array")
        return
    for position, text in enumerate(value):
        if isinstance(text, str) and text.strip():
            yield _prompt(ctx, text, row.locator(position))
        elif not isinstance(text, str):
            yield bad_record(row.locator(position), "inline chat history entry is not a string")


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """A state.vscdb read for typed prompts: one user row per input-history and inline-chat entry."""
    rows, reason = read_keys(ctx, (MEMENTO_KEY, INLINE_KEY))
    if reason:
        yield bad_file(reason)
        return
    if MEMENTO_KEY in rows:
        yield from _memento(ctx, rows[MEMENTO_KEY])
    if INLINE_KEY in rows:
        yield from _inline(ctx, rows[INLINE_KEY])
