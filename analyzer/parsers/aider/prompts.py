""".aider.input.history: what was typed at Aider's prompt, each entry after its local time.

A prompt_toolkit FileHistory (formats/file_history.py): Aider's PromptSession
stores every input accepted at its prompt, prompts and slash commands and the
answers typed to its questions (aider/io.py:355-356), and Aider adds
``/run <command>`` for each command it runs after the user approved it
(aider/coders/base_coder.py:2473, ``add_to_input_history``), so a ``/run``
entry is not proof that it was typed. The time is local, without a zone: it
is quoted, never made an instant, and the rows are untimed.

Rows: a ``user`` row per entry (its text exactly), then ``prompt typed:
<local time> (local time, no zone; .aider.input.history line N)``. The store
is secondary: the chat history's parser writes the same two rows for every
prompt it finds here (``TypedTimes``), so a prompt both files hold is given
once, with its time, and an entry the chat history lacks (a chat history
deleted or moved, an answer, a command Aider ran) stays, ``origin=secondary``.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator

from aitrail.analyzer.formats.file_history import HistoryEntry, read_file_history
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

INPUT_HISTORY = ".aider.input.history"
# Prompts of the input history held for the chat history's join; past it the later ones are not joined.
MAX_JOINED = 1_000_000


def project_of(ctx: ParseContext) -> str:
    """The directory Aider ran in: the file's own directory, written from the home (``~`` for the home itself)."""
    directory = ctx.source.directory
    return f"~/{directory}" if directory else "~"


def typed_text(local_time: str, line: int) -> str:
    """The text of the row that dates a prompt by its input history entry."""
    return f"prompt typed: {local_time} (local time, no zone; {INPUT_HISTORY} line {line})"


def parse_input_history(ctx: ParseContext) -> Iterator[Draft]:
    """.aider.input.history: a ``user`` row per entry and a ``prompt typed:`` row with its local time."""
    project = project_of(ctx)
    for item in read_file_history(ctx):
        if isinstance(item, Draft):
            yield item
            continue
        yield Draft("user", item.text, f"line:{item.line}", timestamp_source="none", project_path=project)
        if item.local_time:
            yield Draft("system", typed_text(item.local_time, item.line), f"line:{item.time_line}",
                        timestamp_source="none", project_path=project)


def _key(text: str) -> bytes:
    """A prompt's identity for the join: its text with whitespace runs collapsed, hashed (16 bytes held)."""
    return hashlib.blake2b(" ".join(text.split()).encode("utf-8", "replace"), digest_size=16).digest()


class TypedTimes:
    """The input history's entries by text, oldest first, for the chat history to date its prompts."""

    def __init__(self) -> None:
        self._by_text: dict[bytes, deque[tuple[str, int]]] = {}
        self.held = 0
        self.dropped = 0  # entries past MAX_JOINED

    def add(self, entry: HistoryEntry) -> None:
        """Hold an entry that has a time (the others cannot date anything)."""
        if not entry.local_time:
            return
        if self.held >= MAX_JOINED:
            self.dropped += 1
            return
        self.held += 1
        self._by_text.setdefault(_key(entry.text), deque()).append((entry.local_time, entry.line))

    def take(self, text: str) -> str | None:
        """The ``prompt typed:`` text for the oldest entry of this prompt not yet taken; None when there is none."""
        queue = self._by_text.get(_key(text))
        if not queue:
            return None
        local_time, line = queue.popleft()
        return typed_text(local_time, line)

    def over_limit_row(self) -> Draft | None:
        """The ``parser:`` row saying some entries were not held for the join."""
        if not self.dropped:
            return None
        return over_limit("input history entries held to date prompts", f"{MAX_JOINED} entries",
                          f"{self.dropped} later entries date no prompt of the chat history", "file")


def typed_times(ctx: ParseContext) -> TypedTimes:
    """The entries of the input history beside this chat history (none when it is not in the bundle or unreadable)."""
    times = TypedTimes()
    source = ctx.sibling(INPUT_HISTORY, "input_history")
    if source is None:
        return times
    try:
        for item in read_file_history(ParseContext(ctx.bundle, source, {})):
            if isinstance(item, HistoryEntry):
                times.add(item)
    except MemberUnreadable:
        pass  # the input history's own parse says it could not be read; the chat history is read without times
    return times
