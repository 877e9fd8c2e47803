"""Cursor CLI plans: ~/.cursor/plans/<name>.plan.md, YAML front matter and a Markdown body.

The front matter is read line by line for the shape Plan mode writes ([obs]):
``name``, ``overview``, ``isProject`` and a ``todos`` list of ``{id, content,
status}``; scalars may be quoted or block scalars (``|``, ``>``). No YAML library
is used on the subject's file (aliases can expand without bound). Rows, at the
file's mtime:

* ``plan: <name> | <overview>`` at line 1;
* ``task: <content> | status=<status> id=<id> (plan <name>)`` per todo, at its line;
* ``plan field <key>: <value>`` for any other top-level key;
* the body as one ``assistant`` row (the agent wrote it) at its first line.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

BLOCK_SCALARS = ("|", "|-", "|+", ">", ">-", ">+")
# Front-matter entries held until the rows are written (the plan: row, which names the plan, comes
# first, and a name may come after the todos): fields, todos, todo fields, block-scalar lines and
# problem rows. A real plan has tens; 64 MiB of "- a: b" lines made millions of objects.
MAX_FRONT_ENTRIES = 100_000


@dataclass
class _Todo:
    line: int
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class _Front:
    """The front matter as read: fields, todos and problem rows, held within MAX_FRONT_ENTRIES."""

    fields: dict[str, tuple[int, str]] = field(default_factory=dict)
    todos: list[_Todo] = field(default_factory=list)
    problems: list[Draft] = field(default_factory=list)
    entries: int = 0  # MAX_FRONT_ENTRIES spent
    over_at: int = 0  # the line where the budget was reached (0: never)
    counted: int = 0  # front-matter lines from ``over_at`` on, counted, not read

    def take(self, number: int) -> bool:
        """Whether line ``number`` may add one held entry; past the budget it is counted instead."""
        if self.over_at or self.entries >= MAX_FRONT_ENTRIES:
            self.over_at = self.over_at or number
            self.counted += 1
            return False
        self.entries += 1
        return True

    def over_limit_row(self) -> Draft | None:
        """The ``parser:`` row of a front matter over MAX_FRONT_ENTRIES (None within it)."""
        if not self.over_at:
            return None
        return over_limit("front matter", f"{MAX_FRONT_ENTRIES} fields, todos, todo fields, block lines and problems "
                          "held", f"{self.counted} lines from line {self.over_at} on were counted, not read",
                          f"line:{self.over_at}")


class _Lines:
    """(number, text) of each line, one look ahead: the front matter is read without a list of its lines."""

    def __init__(self, lines: Iterator[tuple[int, str]]) -> None:
        self._lines = lines
        self._ahead: tuple[int, str] | None = None

    def peek(self) -> tuple[int, str] | None:
        """The next line, left to be read (None at the end)."""
        if self._ahead is None:
            self._ahead = next(self._lines, None)
        return self._ahead

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return self

    def __next__(self) -> tuple[int, str]:
        item = self.peek()
        if item is None:
            raise StopIteration
        self._ahead = None
        return item


def _split(text: str, start: int = 0, number: int = 1) -> Iterator[tuple[int, int, str]]:
    """(number, offset, text) of each line of ``text`` from ``start`` on, cut at each newline as split() cuts.

    A generator: a 64 MiB plan of empty lines made 64 million tuples as a list.
    """
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield number, start, text[start:]
            return
        yield number, start, text[start:end]
        start, number = end + 1, number + 1


def _scalar(text: str) -> str:
    """A YAML scalar's text: double-quoted as JSON reads it, single-quoted unwrapped, plain as written."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
            return value if isinstance(value, str) else text
        except ValueError:
            return text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key_value(text: str) -> tuple[str, str] | None:
    key, colon, value = text.partition(":")
    if not colon or not key.strip() or " " in key.strip():
        return None
    return key.strip(), value.strip()


def _read_front(lines: _Lines) -> _Front:
    front = _Front()
    for number, line in lines:
        if front.over_at:  # over the budget: the rest of the front matter is counted
            front.counted += 1
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pair = _key_value(line) if _indent(line) == 0 else None
        if not front.take(number):
            continue
        if pair is None:
            front.problems.append(bad_record(f"line:{number}", "front matter line not understood", line))
            continue
        key, value = pair
        if value in BLOCK_SCALARS:
            block = _block(lines, front)
            if block is not None:
                front.fields[key] = (number, ("\n" if value[0] == "|" else " ").join(block))
        elif key == "todos" and not value:
            _todos(lines, front)
        else:
            front.fields[key] = (number, _scalar(value))
    return front


def _block(lines: _Lines, front: _Front) -> list[str] | None:
    """A block scalar's lines (the more indented or blank ones that follow); None once over the budget."""
    block: list[str] = []
    while (ahead := lines.peek()) is not None and (not ahead[1].strip() or _indent(ahead[1]) > 0):
        number, line = next(lines)
        if not front.take(number):
            return None
        block.append(line.strip())
    return block


def _todos(lines: _Lines, front: _Front) -> None:
    while (ahead := lines.peek()) is not None and (not ahead[1].strip() or _indent(ahead[1]) > 0
                                                   or ahead[1].startswith("- ")):
        number, line = next(lines)
        text = line.strip()
        if not text:
            continue
        if not front.take(number):
            return
        if text.startswith("- "):
            front.todos.append(_Todo(number))
            text = text[2:].strip()
        pair = _key_value(text)
        if pair is None or not front.todos:
            front.problems.append(bad_record(f"line:{number}", "todo line not understood", line))
        else:
            front.todos[-1].fields[pair[0]] = _scalar(pair[1])


def _closing(text: str) -> tuple[int, int] | None:
    """(number of the closing ``---`` line, offset of the line after it); None without front matter."""
    lines = _split(text)
    _, _, first = next(lines)
    if first.rstrip() != "---":
        return None
    for number, offset, line in lines:
        if line.rstrip() == "---":
            return number, offset + len(line) + 1
    return None


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """A plan file: ``plan:`` and ``task:`` rows from the front matter, the body as an ``assistant`` row.

    The text is read in place, line by line: what is held is the front matter's
    entries, within MAX_FRONT_ENTRIES (past it one ``parser:`` row).
    """
    try:
        text = ctx.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        yield bad_file(f"plan is not UTF-8 at byte {exc.start}")
        return
    timing = file_mtime(ctx)
    closing = _closing(text)
    if closing is None:
        yield bad_record("line:1", "no YAML front matter: the whole file is the plan's body")
        yield from _body(text, 0, 1, timing)
        return
    end, body_offset = closing
    second = text.find("\n") + 1  # the front matter starts on line 2
    region = ((number, line) for number, _, line in itertools.takewhile(
        lambda item: item[0] < end, _split(text, second, 2)))
    front = _read_front(_Lines(region))
    name = front.fields.pop("name", (1, ""))[1]
    overview = front.fields.pop("overview", (1, ""))[1]
    yield Draft("system", f"plan: {name} | {overview}", "line:1", **timing)
    for todo in front.todos:
        facts = [f"{key}={todo.fields[key]}" for key in ("status", "id") if key in todo.fields]
        text_of = " | ".join([todo.fields.get("content", ""), *([" ".join(facts)] if facts else [])])
        yield Draft("system", f"task: {text_of} (plan {name})", f"line:{todo.line}", **timing)
    for key, (number, value) in front.fields.items():
        yield Draft("system", f"plan field {key}: {value}", f"line:{number}", **timing)
    yield from front.problems
    over = front.over_limit_row()
    if over is not None:
        yield over
    yield from _body(text, body_offset, end + 1, timing)


def _body(text: str, offset: int, number: int, timing: dict) -> Iterator[Draft]:
    """The text from ``offset`` (line ``number``) on as one ``assistant`` row at its first non-blank line."""
    rest = text[offset:]
    body = rest.strip()
    if body:
        first = number + rest.count("\n", 0, len(rest) - len(rest.lstrip()))
        yield Draft("assistant", body, f"line:{first}", **timing)
