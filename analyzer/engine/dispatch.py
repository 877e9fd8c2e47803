"""Run one source through its parser; stamp provenance; turn any crash into a row.

A parser never takes the run down: an exception while parsing a file
becomes a ``parser:`` row naming the file and the error, after the rows the
parser had already produced, and the run goes on with the next file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aitrail.analyzer.engine.own_repeats import without_own_repeats
from aitrail.analyzer.engine.registry import Parser
from aitrail.analyzer.integrity.files import watch_for
from aitrail.analyzer.view.bundle import Bundle, MemberUnreadable, Source
from aitrail.analyzer.view.context import FileTooLarge, ParseContext
from aitrail.analyzer.view.rows import TIMESTAMP_SOURCES, TURN_TYPES, Draft, Provenance, Stamper


def provenance(source: Source) -> Provenance:
    """The columns every row of ``source`` carries: agent, store, member, its SHA-256, origin."""
    origin = "secondary" if source.origin == "secondary" else "primary"
    return Provenance(source.agent, source.store, source.member, source.sha256, origin)


_TEXT_FIELDS = ("text", "session_id", "project_path", "git_branch", "model", "tool_name", "tool_use_id", "locator")


_TURN_TYPES = frozenset(TURN_TYPES)
_TIMESTAMP_SOURCES = frozenset(TIMESTAMP_SOURCES)


def _check(draft: Draft) -> Draft:
    if draft.turn_type not in _TURN_TYPES:
        raise ValueError(f"parser produced turn_type {draft.turn_type!r}")
    if draft.timestamp_source not in _TIMESTAMP_SOURCES:
        raise ValueError(f"parser produced timestamp_source {draft.timestamp_source!r}")
    if (draft.text.isascii() and draft.session_id.isascii() and draft.project_path.isascii()
            and draft.git_branch.isascii() and draft.model.isascii() and draft.tool_name.isascii()
            and draft.tool_use_id.isascii() and draft.locator.isascii()):
        return draft  # the common case: nothing can fail to encode
    for name in _TEXT_FIELDS:
        value = getattr(draft, name)
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                # JSON may spell a lone surrogate ("\ud800"); it cannot be written as UTF-8,
                # so it is kept as its escape text rather than stopping the run.
                setattr(draft, name, value.encode("utf-8", "backslashreplace").decode("utf-8"))
    return draft


def parse_source(bundle: Bundle, source: Source, parser: Parser, cache: dict,
                 sessions: Callable[[Source, Draft], None] | None = None) -> Iterator[tuple[bytes, tuple]]:
    """Yield (sort key, row) for every row of one file, crash rows included, then its integrity rows.

    ``sessions``: told of every row (the ``session missing`` rule's notes) when the parser names or holds sessions.
    """
    stamp = Stamper(provenance(source)).stamp
    watch = watch_for(source)
    observe = watch.observe
    ordinal, complete = 0, True
    try:
        drafts = parser(ParseContext(bundle, source, cache))
        if source.format == "sqlite" and source.origin != "secondary":  # a live database and its earlier versions
            drafts = without_own_repeats(drafts)
        for draft in drafts:
            observe(_check(draft))
            if sessions is not None:
                sessions(source, draft)
            yield stamp(draft, ordinal)
            ordinal += 1
    # one name per clause: compiled by mypyc, a name bound by several clauses keeps the first clause's type
    except FileTooLarge as too_large:
        yield stamp(Draft("system", f"parser: {too_large}", "file", timestamp_source="none"), ordinal)
        ordinal, complete = ordinal + 1, False
    except MemberUnreadable as unreadable:
        yield stamp(Draft("system", f"parser: member unreadable ({unreadable}); no rows from it", "file",
                          timestamp_source="none"), ordinal)
        ordinal, complete = ordinal + 1, False
    except Exception as crash:  # noqa: BLE001 - the point is to survive any parser bug
        text = (f"parser: crashed on this file after {ordinal} rows ({type(crash).__name__}: {crash}); "
                "the rest of the file was not read")
        yield stamp(Draft("system", text, "file", timestamp_source="none"), ordinal)
        ordinal, complete = ordinal + 1, False
    for draft in watch.tail(complete):  # a file not read to its end has no known last record
        yield stamp(draft, ordinal)
        ordinal += 1
