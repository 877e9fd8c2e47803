r"""Markdown chat logs written as a sequence of prefixed writes: run headers, prompts, status lines, replies.

Some terminal agents keep their conversation as a Markdown file that each
write appends to, and mark who wrote a line only by its shape:

* a run header, a line of its own between blank lines (``# <title> <time>``);
* a prompt, one line per line typed, each ``<user prefix><text><hard break>``
  (``#### fix the bug  ``), the whole after a blank line;
* a status write of the program (``> Applied edit to app.py  ``), right
  after the line before it: the status prefix on its first line, the Markdown
  hard break (two spaces) at the end of its last; a status text of several
  lines keeps the prefix on the first only (its later lines are bare);
* a reply, the model's text between blank lines, which may itself hold
  headings, quotes and blank lines.

``read_markdown_log`` gives the writes in order (``Write``): a prompt's
lines without prefix and hard break, a status write's lines without its
prefix and trailing spaces, a reply as written (its blank lines kept). A
line is only what its shape says where the writes allow it: a prompt line
must end in the hard break, a status write must reach a line ending in it
before its paragraph ends (else its lines were a quote in the reply), and
prompts, headers and status writes open a paragraph or follow one another.
What the shape cannot tell (a reply line that is itself ``> x  ``) is read
by the shape, as the program's own reader reads it.

Damage gives a ``parser:`` row and the lines around it are read: a line that
is not UTF-8, a line holding NUL bytes (a zero-filled tail), a torn last
line (kept in its write), a write over its budget. A ``\r`` before the
newline (a file written on Windows in text mode) is not part of the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

_BLANK = " \t\n\r\x0b\x0c"  # what bytes.strip() strips: str.strip() would take \x1c-\x1f and others for blanks
# Characters one write holds at most; past it its further lines are counted, not held.
WRITE_BUDGET = 64 * 1024 * 1024
_NOTHING: list = []  # what most lines complete (never appended to)
# A status write whose end has not come after this many lines is taken for reply text at once.
MAX_STATUS_LINES = 10_000


@dataclass(frozen=True)
class Shape:
    """How one program marks its writes."""

    header: re.Pattern[str]  # a run header line, matched whole
    user_prefix: str = "#### "
    status_prefix: str = "> "
    hard_break: str = "  "


@dataclass(slots=True)
class Write:
    """One write: ``header``, ``user``, ``status`` or ``reply``; its first line number and its lines."""

    kind: str
    line: int
    lines: list[str] = field(default_factory=list)
    held: int = 0
    over: int = 0  # lines past WRITE_BUDGET, counted

    @property
    def text(self) -> str:
        """The write's lines joined by newlines."""
        return "\n".join(self.lines)


class _Reader:
    """Line-by-line state of one file: the open reply, the write of this paragraph, a status write not yet ended."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.reply: Write | None = None  # spans paragraphs; given when another write is certain
        self.blanks = 0  # blank lines since the reply's last line
        self.current: Write | None = None  # header, user or status write of this paragraph
        self.tentative: Write | None = None  # a status write whose hard break has not come (raw lines)
        self.in_paragraph = False
        self.paragraph_is_reply = False
        self.rows: list[Draft] = []  # budget rows, given with the next writes

    # -- lines ---------------------------------------------------------------------------------

    def line(self, number: int, text: str) -> list[Write | Draft]:
        """What one line completes (usually nothing): a further line of a reply paragraph is taken at once."""
        reply = self.reply
        if (self.paragraph_is_reply and self.tentative is None and reply is not None and text.strip(_BLANK)
                and reply.held + len(text) <= WRITE_BUDGET):
            reply.lines.append(text)
            reply.held += len(text) + 1
            return _NOTHING
        return list(self._line(number, text))

    def _line(self, number: int, text: str) -> Iterator[Write | Draft]:
        if not text.strip(_BLANK):
            yield from self.end_paragraph()
            if self.reply is not None:
                self.blanks += 1
            return
        starting = not self.in_paragraph
        self.in_paragraph = True
        if self.tentative is not None:
            yield from self._tentative_line(text)
        elif self.paragraph_is_reply:
            self._reply_line(number, text)
        elif starting and self.shape.header.fullmatch(text):
            yield from self._begin(Write("header", number), text)
        elif self._is_user(text) and (starting or self._current_is("user")):
            yield from self._user_line(number, text)
        elif text.startswith(self.shape.status_prefix) and (starting or self.current is not None):
            yield from self._status_start(number, text)
        elif self._current_is("status") and not starting:
            self._add(self.current, text.rstrip())  # a bare later line of a status text of several lines
        else:
            yield from self._give_current()
            self.paragraph_is_reply = True
            self._reply_line(number, text)
        yield from self._rows()

    def _is_user(self, text: str) -> bool:
        shape = self.shape
        return (text.startswith(shape.user_prefix) and text.endswith(shape.hard_break)
                and len(text) >= len(shape.user_prefix) + len(shape.hard_break))

    def _current_is(self, kind: str) -> bool:
        return self.current is not None and self.current.kind == kind

    def _user_text(self, text: str) -> str:
        return text[len(self.shape.user_prefix):len(text) - len(self.shape.hard_break)]

    def _user_line(self, number: int, text: str) -> Iterator[Write | Draft]:
        if self._current_is("user"):
            self._add(self.current, self._user_text(text))
            return
        yield from self._begin(Write("user", number), self._user_text(text))

    def _status_start(self, number: int, text: str) -> Iterator[Write | Draft]:
        if text.endswith(self.shape.hard_break):
            yield from self._begin(Write("status", number), text[len(self.shape.status_prefix):].rstrip())
            return
        self.tentative = Write("status", number, [text])

    def _tentative_line(self, text: str) -> Iterator[Write | Draft]:
        tentative = self.tentative
        assert tentative is not None
        tentative.lines.append(text)
        if text.endswith(self.shape.hard_break):
            self.tentative = None
            first, *rest = tentative.lines
            status = Write("status", tentative.line)
            yield from self._begin(status, first[len(self.shape.status_prefix):].rstrip())
            for later in rest:
                self._add(status, later.rstrip())
        elif len(tentative.lines) >= MAX_STATUS_LINES:
            self._demote()

    def _demote(self) -> None:
        """A status write that never reached its hard break: its lines were reply text (a quote)."""
        tentative, self.tentative = self.tentative, None
        if tentative is None:
            return
        self.paragraph_is_reply = True
        for offset, raw in enumerate(tentative.lines):
            self._reply_line(tentative.line + offset, raw)

    def _reply_line(self, number: int, text: str) -> None:
        if self.reply is None:
            self.reply, self.blanks = Write("reply", number), 0
        for _ in range(self.blanks if self.reply.lines else 0):
            self._add(self.reply, "")
        self.blanks = 0
        self._add(self.reply, text)

    # -- writes --------------------------------------------------------------------------------

    def _begin(self, write: Write, first: str) -> Iterator[Write | Draft]:
        """A header, prompt or status write is certain: the reply before it and the write before it are done."""
        yield from self._give_reply()
        yield from self._give_current()
        self.current = write
        self._add(write, first)

    def _add(self, write: Write | None, text: str) -> None:
        if write is None:
            return
        if write.held + len(text) > WRITE_BUDGET:
            if not write.over:
                self.rows.append(over_limit(f"{write.kind} text", f"{WRITE_BUDGET} characters",
                                            "its later lines were counted, not read", f"line:{write.line}"))
            write.over += 1
            return
        write.lines.append(text)
        write.held += len(text) + 1

    def _rows(self) -> Iterator[Draft]:
        if self.rows:
            yield from self.rows
            self.rows = []

    def _give_current(self) -> Iterator[Write]:
        if self.current is not None:
            yield self.current
            self.current = None

    def _give_reply(self) -> Iterator[Write]:
        if self.reply is not None:
            yield self.reply
            self.reply, self.blanks = None, 0

    def end_paragraph(self) -> Iterator[Write | Draft]:
        """A blank line (or the end): a status write not ended was reply text; this paragraph's write is done."""
        self._demote()
        yield from self._give_current()
        yield from self._rows()
        self.in_paragraph = self.paragraph_is_reply = False

    def finish(self) -> Iterator[Write | Draft]:
        """The end of the file: every write still open, in file order."""
        yield from self.end_paragraph()
        yield from self._give_reply()


def read_markdown_log(ctx: ParseContext, shape: Shape) -> Iterator[Write | Draft]:
    """The writes of a Markdown chat log in file order, with a ``parser:`` row for each damaged line."""
    reader = _Reader(shape)
    for item in ctx.lines():
        if isinstance(item, Draft):  # a line over the length limit: skipped unread
            yield item
            continue
        raw = item.raw
        if b"\x00" in raw:
            yield bad_line(item.number, "NUL bytes (a zero-filled tail or a damaged block)", raw)
            continue
        try:
            text = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as exc:
            yield bad_line(item.number, f"not UTF-8 at byte {exc.start}", raw)
            continue
        done = reader.line(item.number, text)
        if done:
            yield from done
        if not item.terminated:
            yield bad_line(item.number, "torn last line, no newline; kept in its write", raw)
    yield from reader.finish()
