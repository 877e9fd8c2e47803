r"""prompt_toolkit ``FileHistory`` files: prompt entries of ``+`` lines, each after a ``# <local time>`` comment.

The writer, ``FileHistory.store_string`` (prompt-toolkit 3.0.52
src/prompt_toolkit/history.py:297-306), appends for every entry a blank
line, ``# {datetime.datetime.now()}`` and one ``+<line>`` per line of the
entry (split on ``\n``)::

    <blank>
    # 2026-07-02 11:14:40.512093
    +The login endpoint times out under load.
    +Find the cause and fix it.

The time is ``str(datetime.now())``: local time of the machine, no zone,
with microseconds unless they are zero. It is handed on as written, never
as an instant. The library's reader (``load_history_strings``, :270-295)
adds a ``+`` line's text to the current entry and ends the entry at any
other line; a prompt session stores an accepted input only when it differs
from the last stored one (src/prompt_toolkit/buffer.py:1356-1365), so a
prompt repeated at once is kept once.

Damage each gives one ``parser:`` row, and the lines around it are read: a
line that is not UTF-8 or holds NUL bytes (a zero-filled tail after a
crash), a line that is neither a ``+`` line nor a ``#`` comment, a comment
that is not a time, a time with no entry after it (a write cut after its
first line), and a torn last line (the entry is read as it stands).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.text import bad_line, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

# The text of one entry held at most (characters); past it the entry's further lines are counted, not held.
ENTRY_BUDGET = 64 * 1024 * 1024
_BLANK = " \t\n\r\x0b\x0c"  # what bytes.strip() strips: str.strip() would take \x1c-\x1f and others for blanks
_LOCAL_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?")


@dataclass(slots=True)
class HistoryEntry:
    """One stored entry: its text, its first ``+`` line, and the local time written before it ('' when none)."""

    text: str
    line: int
    local_time: str = ""
    time_line: int = 0


@dataclass(slots=True)
class _Open:
    """The entry being read: its lines so far and what it cost."""

    line: int
    local_time: str
    time_line: int
    parts: list[str] = field(default_factory=list)
    held: int = 0
    over: int = 0  # lines past ENTRY_BUDGET, counted

    def entry(self) -> HistoryEntry:
        return HistoryEntry("\n".join(self.parts), self.line, self.local_time, self.time_line)


class _Reader:
    """Line-by-line state: the pending time comment and the open entry."""

    def __init__(self) -> None:
        self.time: tuple[str, int] | None = None  # the last time comment, while no line has come between
        self.open: _Open | None = None

    def line(self, number: int, raw: bytes, terminated: bool) -> Iterator[HistoryEntry | Draft]:
        reason = None
        if b"\x00" in raw:
            reason = "NUL bytes (a zero-filled tail or a damaged block)"
        else:
            try:
                text = raw.decode("utf-8").removesuffix("\r")
            except UnicodeDecodeError as exc:
                reason = f"not UTF-8 at byte {exc.start}"
        if reason is not None:  # a damaged + line leaves its entry open without it; any other line ends the entry
            if not raw.startswith(b"+"):
                yield from self.close()
            yield bad_line(number, reason, raw)
            return
        if text.startswith("+"):
            yield from self._entry_line(number, text[1:], terminated, raw)
            return
        yield from self.close()
        if not text.strip(_BLANK):
            return
        if text.startswith("#"):
            stamp = text[1:].strip()
            if _LOCAL_TIME.fullmatch(stamp):
                yield from self._no_entry()
                self.time = (stamp, number)
                return
            yield bad_line(number, "a # comment that is not a time", raw)
            return
        yield bad_line(number, "neither a + line of an entry nor a # time comment", raw)

    def _entry_line(self, number: int, text: str, terminated: bool, raw: bytes) -> Iterator[Draft]:
        if self.open is None:
            stamp, stamp_line = self.time if self.time is not None else ("", 0)
            self.time = None
            self.open = _Open(number, stamp, stamp_line)
        entry = self.open
        if entry.held + len(text) > ENTRY_BUDGET:
            if not entry.over:
                yield over_limit("prompt entry", f"{ENTRY_BUDGET} characters", "its later lines were counted, not "
                                 "read", f"line:{number}")
            entry.over += 1
        else:
            entry.parts.append(text)
            entry.held += len(text) + 1
        if not terminated:
            yield bad_line(number, "torn last line, no newline; the entry is read as it stands", raw)

    def _no_entry(self) -> Iterator[Draft]:
        """The row for a time comment that no ``+`` line followed."""
        if self.time is not None:
            stamp, number = self.time
            yield Draft("system", f"parser: unparseable line (a time with no entry after it): # {excerpt(stamp)}",
                        f"line:{number}", timestamp_source="none")
            self.time = None

    def close(self) -> Iterator[HistoryEntry | Draft]:
        """The open entry (if any), and the row of a time comment left without one."""
        if self.open is not None:
            yield self.open.entry()
            self.open = None
        yield from self._no_entry()


def read_file_history(ctx: ParseContext) -> Iterator[HistoryEntry | Draft]:
    """Every entry of a FileHistory file in order, and a ``parser:`` row for each damaged or unexpected line."""
    reader = _Reader()
    for item in ctx.lines():
        if isinstance(item, Draft):  # a line over the length limit: skipped, the entry goes on
            yield item
            continue
        yield from reader.line(item.number, item.raw, item.terminated)
    yield from reader.close()
