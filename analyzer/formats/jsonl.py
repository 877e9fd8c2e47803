"""JSONL reading with line numbers, byte offsets and torn-tail detection.

Every line is either a decoded value or a ``parser: unparseable line`` row;
a broken line never stops the lines after it from being read. A last line
without its newline that does not decode is reported as a torn tail (the
writer was cut off mid-line), which is different evidence from a corrupt
line in the middle of a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.decode import decode_json_utf8, stack_depth
from aitrail.analyzer.view.rows import Draft


class Line(RawLine):
    """One decoded JSONL line: a RawLine (number, byte offset, raw bytes), its value and its locator.

    The splitter makes it (``ParseContext.lines(line_type=Line)``) and
    ``read_jsonl`` gives it its value: one object per line, not a RawLine and
    then a Line. ``locator``, ``line:N``, is made once: every line gives a row,
    most several, each citing it.
    """

    __slots__ = ("value", "locator")
    value: Any  # a decoded JSON value: an object (a dict) unless require_object=False
    locator: str


def read_jsonl(ctx: ParseContext, require_object: bool = True) -> Iterator[Line | Draft]:
    """Decoded lines, or Drafts for the lines that could not be read or decoded."""
    depth = stack_depth()  # where every line of this file is decoded from
    for item in ctx.lines(line_type=Line):
        if isinstance(item, Draft):  # a line over the length limit, or the end of capped content
            yield item
            continue
        item = cast(Line, item)  # ctx.lines made it a Line
        number, raw = item.number, item.raw
        stripped = raw.strip()
        if not stripped:
            continue  # a blank line holds no record
        try:
            value = decode_json_utf8(stripped, depth)
        except UnicodeDecodeError as not_utf8:  # a ValueError too: caught first (one name per clause: dispatch.py)
            yield bad_line(number, f"not UTF-8 at byte {not_utf8.start}", raw)
            continue
        except ValueError as exc:  # JsonTooDeep and JsonTooLarge are ValueErrors
            reason = f"invalid JSON: {exc}" if item.terminated else f"torn last line, no newline: {exc}"
            yield bad_line(number, reason, raw)
            continue
        if require_object and not isinstance(value, dict):
            yield bad_line(number, f"a JSON {type(value).__name__}, not an object", raw)
            continue
        item.value, item.locator = value, f"line:{number}"
        yield item


def each_line(ctx: ParseContext, rows: Callable[[Line], Iterable[Draft]],
              require_object: bool = True) -> Iterator[Draft]:
    """The rows ``rows`` gives for each decoded line, in order, with the ``parser:`` rows of the lines not read."""
    for item in read_jsonl(ctx, require_object):
        if isinstance(item, Line):
            yield from rows(item)
        else:
            yield item
