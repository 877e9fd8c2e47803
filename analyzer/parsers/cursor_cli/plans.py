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

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.rows import Draft

BLOCK_SCALARS = ("|", "|-", "|+", ">", ">-", ">+")


@dataclass
class _Todo:
    line: int
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class _Front:
    fields: dict[str, tuple[int, str]] = field(default_factory=dict)
    todos: list[_Todo] = field(default_factory=list)
    problems: list[Draft] = field(default_factory=list)


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


def _read_front(lines: list[tuple[int, str]]) -> _Front:
    front, index = _Front(), 0
    while index < len(lines):
        number, line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pair = _key_value(line) if _indent(line) == 0 else None
        if pair is None:
            front.problems.append(bad_record(f"line:{number}", "front matter line not understood", line))
            continue
        key, value = pair
        if value in BLOCK_SCALARS:
            block, index = _block(lines, index)
            front.fields[key] = (number, ("\n" if value[0] == "|" else " ").join(block))
        elif key == "todos" and not value:
            index = _todos(lines, index, front)
        else:
            front.fields[key] = (number, _scalar(value))
    return front


def _block(lines: list[tuple[int, str]], index: int) -> tuple[list[str], int]:
    block: list[str] = []
    while index < len(lines) and (not lines[index][1].strip() or _indent(lines[index][1]) > 0):
        block.append(lines[index][1].strip())
        index += 1
    return block, index


def _todos(lines: list[tuple[int, str]], index: int, front: _Front) -> int:
    while index < len(lines) and (not lines[index][1].strip() or _indent(lines[index][1]) > 0
                                  or lines[index][1].startswith("- ")):
        number, line = lines[index]
        index += 1
        text = line.strip()
        if not text:
            continue
        if text.startswith("- "):
            front.todos.append(_Todo(number))
            text = text[2:].strip()
        pair = _key_value(text)
        if pair is None or not front.todos:
            front.problems.append(bad_record(f"line:{number}", "todo line not understood", line))
        else:
            front.todos[-1].fields[pair[0]] = _scalar(pair[1])
    return index


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """A plan file: ``plan:`` and ``task:`` rows from the front matter, the body as an ``assistant`` row."""
    try:
        text = ctx.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        yield bad_file(f"plan is not UTF-8 at byte {exc.start}")
        return
    lines = list(enumerate(text.split("\n"), start=1))
    timing = file_mtime(ctx)
    end = next((i for i, (_, line) in enumerate(lines[1:], start=1) if line.rstrip() == "---"), None)
    if not lines or lines[0][1].rstrip() != "---" or end is None:
        yield bad_record("line:1", "no YAML front matter: the whole file is the plan's body")
        yield from _body(lines, timing)
        return
    front = _read_front(lines[1:end])
    name = front.fields.pop("name", (1, ""))[1]
    overview = front.fields.pop("overview", (1, ""))[1]
    yield Draft("system", f"plan: {name} | {overview}", "line:1", **timing)
    for todo in front.todos:
        facts = [f"{key}={todo.fields[key]}" for key in ("status", "id") if key in todo.fields]
        text = " | ".join([todo.fields.get("content", ""), *([" ".join(facts)] if facts else [])])
        yield Draft("system", f"task: {text} (plan {name})", f"line:{todo.line}", **timing)
    for key, (number, value) in front.fields.items():
        yield Draft("system", f"plan field {key}: {value}", f"line:{number}", **timing)
    yield from front.problems
    yield from _body(lines[end + 1:], timing)


def _body(lines: list[tuple[int, str]], timing: dict) -> Iterator[Draft]:
    first = next((number for number, line in lines if line.strip()), None)
    if first is not None:
        body = "\n".join(line for _, line in lines).strip()
        yield Draft("assistant", body, f"line:{first}", **timing)
