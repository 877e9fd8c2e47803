"""The bundle-wide integrity rules: sessions named but not held, and files no parser read.

An agent package says which of its parsers *name* sessions (prompt histories,
session indexes) and which parsers' rows *hold* them (``SESSIONS_NAMED``:
``(naming parser id, (holding parser ids, ...))``). While files are parsed,
each process notes the sessions named (first and last time, first locator,
the naming file) and the sessions held; the coordinator joins the notes of
every process once all files are parsed. Memory grows with the number of
sessions, never with rows; past ``rules.NAMED_MAX`` named sessions the rest
are not noted, and a row says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aitrail.analyzer.integrity import rules
from aitrail.analyzer.view.bundle import Bundle, Source
from aitrail.analyzer.view.rows import Draft, format_timestamp

if TYPE_CHECKING:  # the engine calls this room: a run-time import back would be a cycle of rooms
    from aitrail.analyzer.engine.unparsed import Unparsed


@dataclass
class Named:
    """Where a session was first named, and the span of the entries naming it."""

    member: str
    store: str
    locator: str
    first_ns: int | None
    last_ns: int | None
    entries: int = 1


@dataclass
class SessionNotes:
    """Sessions named and sessions held (per home or image, agent and session id), as one process saw them."""

    # keyed by (location, agent, session id): a history in one home names sessions of that home alone
    named: dict[tuple[str, str, str], Named] = field(default_factory=dict)
    held: set[tuple[str, str, str]] = field(default_factory=set)
    over: bool = False  # NAMED_MAX was reached

    def name(self, source: Source, draft: Draft) -> None:
        """A row of a naming store: note its session."""
        if not draft.session_id:
            return
        key = (source.location, source.agent, draft.session_id)
        ns = draft.timestamp_ns if draft.timestamp_source == "record" else None
        seen = self.named.get(key)
        if seen is None:
            if len(self.named) >= rules.NAMED_MAX:
                self.over = True
                return
            self.named[key] = Named(source.member, source.store, draft.locator, ns, ns)
            return
        seen.entries += 1
        if ns is not None:
            seen.first_ns = ns if seen.first_ns is None else min(seen.first_ns, ns)
            seen.last_ns = ns if seen.last_ns is None else max(seen.last_ns, ns)

    def hold(self, source: Source, draft: Draft) -> None:
        """A row of a holding store: its session is in the bundle."""
        if draft.session_id:
            self.held.add((source.location, source.agent, draft.session_id))

    def merge(self, other: SessionNotes) -> None:
        """Add another process's notes (the earliest naming file of a session is kept: member order)."""
        self.held |= other.held
        self.over = self.over or other.over
        for key, named in other.named.items():
            mine = self.named.get(key)
            if mine is None:
                self.named[key] = named
                continue
            mine.entries += named.entries
            for ns in (named.first_ns, named.last_ns):
                if ns is not None:
                    mine.first_ns = ns if mine.first_ns is None else min(mine.first_ns, ns)
                    mine.last_ns = ns if mine.last_ns is None else max(mine.last_ns, ns)
            if (named.member, named.locator) < (mine.member, mine.locator):
                mine.member, mine.store, mine.locator = named.member, named.store, named.locator


def missing_rows(notes: SessionNotes, bundle: Bundle,
                 holding: frozenset[str]) -> Iterator[tuple[Source, Draft]]:
    """A ``session missing`` row (with the naming file) for every session named and held by no file of its home.

    ``holding``: the parser ids whose rows hold sessions; the text names the stores
    of those parsers in the session's home (never another home's). Sorted by home, agent and session id.
    """
    stores_of: dict[tuple[str, str], str] = {}  # once per home and agent: a bundle may name 200,000 sessions
    for (location, agent, session), named in sorted(notes.named.items()):
        if (location, agent, session) in notes.held:
            continue
        if (location, agent) not in stores_of:
            stores_of[(location, agent)] = ", ".join(_holders(bundle, holding, location, agent)) or "transcript"
        source = _source(bundle, named.member, named.store)
        if source is None:
            continue
        span = _span(named.first_ns, named.last_ns)
        noun = "entry" if named.entries == 1 else "entries"
        stores = stores_of[(location, agent)]
        detail = (f"{named.store} names session {session} ({named.entries} {noun}{span}, first at {named.locator}) "
                  f"and no file of {stores} in the bundle holds a row of it")
        yield source, Draft("system", rules.text("session missing", detail), named.locator, named.last_ns,
                            "record" if named.last_ns is not None else "none", session)
    if notes.over:
        yield _over_row(bundle)


def _holders(bundle: Bundle, holding: frozenset[str], location: str, agent: str) -> list[str]:
    """The stores of one home whose parsers hold ``agent``'s sessions."""
    return sorted({source.store for source in bundle.sources
                   if source.location == location and source.agent == agent and source.parser in holding})


def _source(bundle: Bundle, member: str, store: str) -> Source | None:
    try:
        return bundle.source_for(member, store)
    except StopIteration:
        return None


def _span(first: int | None, last: int | None) -> str:
    if first is None or last is None:
        return ""
    return f" from {format_timestamp(first)}" + (f" to {format_timestamp(last)}" if last != first else "")


def _over_row(bundle: Bundle) -> tuple[Source, Draft]:
    source = bundle.sources[0]
    return source, Draft("system", rules.text("session missing", (
        f"more than {rules.NAMED_MAX} sessions are named by indexes and histories; the sessions named past that "
        "were not checked")), "bundle", timestamp_source="none")


def not_parsed_rows(bundle: Bundle, unparsed: Iterable[Unparsed]) -> Iterator[tuple[Source, Draft]]:
    """A ``not parsed`` row for every collected file no parser read, timed by the file's modification time."""
    for item in unparsed:
        source = _source(bundle, item.member, item.store)
        if source is None:
            continue
        detail = f"{item.reason}; {item.size} bytes, SHA-256 {item.sha256}"
        ns = source.mtime_ns
        yield source, Draft("system", rules.text("not parsed", detail), "file", ns,
                            "file-mtime" if ns is not None else "none")
