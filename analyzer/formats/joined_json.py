"""Another JSON member of the bundle, read for a join: decoded, or None when it cannot be read.

``cached_table`` holds what such a join builds once per worker; ``first_of_each``
builds a bounded map (a hashed directory name -> the path it stands for).

A parser that joins its file with another (an index mapping hashed directory
names back to paths, a state file naming a session's model) must not fail
because that other file is cut, too large or not JSON: the other file gives its
own ``parser:`` row when it is parsed itself. These helpers read it whole
(``ParseContext.read``: MAX_DOCUMENT_BYTES, digest-checked) and decode it within
the JSON limits (view/decode.py), and give None instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json


def joined_document(ctx: ParseContext, source: Source | None) -> object | None:
    """The decoded JSON of ``source`` (another member of the bundle), None when absent, unreadable or not JSON."""
    if source is None:
        return None
    try:
        return decode_json(ctx.read(source))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return None


def joined_objects(ctx: ParseContext, store: str) -> Iterator[tuple[Source, dict]]:
    """Each readable JSON object of another store of the same agent and location, with its source."""
    for source in ctx.related(store):
        document = joined_document(ctx, source)
        if isinstance(document, dict):
            yield source, document


def cached_table(ctx: ParseContext, key: tuple, build: Callable[[], dict]) -> dict:
    """A join table built once per worker, agent and location (``ParseContext.cached``); {} if it is no dict."""
    table = ctx.cached(key, build)
    return table if isinstance(table, dict) else {}


def first_of_each(pairs: Iterable[tuple[str, str]], limit: int) -> dict[str, str]:
    """``{key: value}`` of the first value given for each non-empty key and value, at most ``limit`` keys."""
    table: dict[str, str] = {}
    for key, value in pairs:
        if len(table) >= limit:
            break
        if key and value:
            table.setdefault(key, value)
    return table
