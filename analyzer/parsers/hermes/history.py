r""".hermes_history: every prompt typed into the Hermes CLI, with its local time (secondary).

[src] pypi hermes-agent 0.19.0 cli.py (``FileHistory(<home>/.hermes_history)``)
and prompt_toolkit 3.0.52 (the version hermes-agent pins) ``history.py``
``FileHistory.store_string``: each entry is written as ``\n# <datetime.now()>\n``
then one ``+<line>`` per line of the prompt. ``datetime.now()`` is local time
with no zone, so it is never read as a time: the rows are untimed and the
local time is quoted in the text.

The file outlives deleted sessions. A prompt that a user message of a
state.db in the same home also holds (compared with whitespace runs
collapsed) gives no row: the transcript has it, with its exact time. The
others are ``user`` rows, ``origin=secondary``: prompts of sessions deleted
since, or typed in a session never saved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import cast

from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.rows import Draft, over_limit

from .messages import content_text

# Distinct user prompts of the home's state.db files held to recognise typed prompts (an int each,
# about 70 bytes with the set's slot); a real history has thousands.
MAX_KNOWN_PROMPTS = 500_000
# Characters of one history entry held while its lines are read (a paste of a whole file is one
# entry of thousands of lines).
MAX_ENTRY_CHARS = 16 * 1024 * 1024


_BLANK = " \t\n\r\x0b\x0c"

def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """.hermes_history: a ``user`` row for each typed prompt no state.db of this home holds."""
    known = cast(_Known, ctx.cached(("typed prompts of state.db",), lambda: _transcript_prompts(ctx)))
    if known.over:
        yield over_limit("transcript prompts", f"{MAX_KNOWN_PROMPTS} prompts of state.db held to recognise typed "
                         "ones", "prompts past it may be given again from the history", "file")
    for entry in _entries(ctx):
        if isinstance(entry, Draft):
            yield entry
        elif _normal(entry.text) not in known.hashes:
            yield Draft("user", f"{entry.text}\n(typed {entry.when}, local time without a zone; from .hermes_history)",
                        f"line:{entry.first_line}", timestamp_source="none")


class _Known:
    """Hashes of the home's transcript prompts (whitespace runs collapsed)."""

    def __init__(self) -> None:
        self.hashes: set[int] = set()
        self.over = False

    def add(self, text: str) -> None:
        if len(self.hashes) >= MAX_KNOWN_PROMPTS:
            self.over = True
            return
        self.hashes.add(_normal(text))


def _normal(text: str) -> int:
    return hash(" ".join(text.split()))


def _transcript_prompts(ctx: ParseContext) -> _Known:
    """The user prompts of every state.db of this home (a database that cannot be read adds none)."""
    known = _Known()
    for source in ctx.related("state_db"):
        try:
            connection = ctx.sqlite(source)
        except sqlite3.Error:
            continue
        try:
            if sqlite_safe.is_real_table(connection, "messages"):
                for row in sqlite_safe.table_rows(connection, "messages", "user prompts", ("role", "content"),
                                                  "role = 'user'"):
                    known.add(content_text(row.get("content")) if isinstance(row.get("content"), str) else "")
        except sqlite3.Error:
            pass  # the state.db parser reports the database; here it only recognises fewer prompts
        finally:
            connection.close()
    return known


class _Entry:
    """One history entry: its prompt, the local time of its header and the line its text starts on."""

    __slots__ = ("text", "when", "first_line")

    def __init__(self, text: str, when: str, first_line: int) -> None:
        self.text, self.when, self.first_line = text, when, first_line


def _entries(ctx: ParseContext) -> Iterator[_Entry | Draft]:
    """The file's entries as prompt_toolkit reads them: ``+`` lines joined; any other line ends an entry.

    prompt_toolkit writes at least one ``+`` line after every header, so a header
    with none after it is a write cut short: one ``parser:`` row.
    """
    parts: list[str] = []
    held, first, when = 0, 0, "no time recorded"
    header: RawLine | None = None  # the last header, until a prompt follows it
    for line in ctx.lines():
        if isinstance(line, Draft):
            yield line
            continue
        raw = cast(RawLine, line)
        text = raw.raw.decode("utf-8", "replace")  # as prompt_toolkit decodes it
        if text.startswith("+"):
            if not held:
                first, header = raw.number, None
            held += len(text)
            if held <= MAX_ENTRY_CHARS:
                parts.append(text[1:])
            elif held - len(text) <= MAX_ENTRY_CHARS:  # the first line past the limit: said once
                yield over_limit("history entry", f"{MAX_ENTRY_CHARS} characters held", "its later lines were "
                                 "counted, not read", f"line:{raw.number}")
            continue
        if held:
            yield _Entry("\n".join(parts), when, first)
        parts, held, when = [], 0, "no time recorded"  # the next entry's time is the header before it
        if text.startswith("#"):
            yield from _unanswered(header)
            header, when = raw, text[1:].strip() or "no time recorded"
        elif text.strip(_BLANK):  # what bytes.strip() strips: str.strip() takes \x1c-\x1f for blanks too
            yield bad_line(raw.number, "neither a '# <time>' header nor a '+<text>' line", raw.raw)
    if held:
        yield _Entry("\n".join(parts), when, first)
    yield from _unanswered(header)


def _unanswered(header: RawLine | None) -> Iterator[Draft]:
    if header is not None:
        yield bad_line(header.number, "a '# <time>' header with no prompt after it (a write cut short)", header.raw)
