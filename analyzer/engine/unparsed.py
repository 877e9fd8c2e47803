"""Collected files that no parser read: listed, never silently left out of the analysis.

A bundle holds documentary stores (memory files, logs, pasted images, hook
scripts, caches whose record schema is not known), stores whose parser this
analyzer does not have, and SQLite companions whose database is missing. None
of them gives a row, so the summary and the report list each one with its
agent, store, path, size and SHA-256: an examiner sees what is in the bundle
and was not turned into rows, and can extract it by its member name.

An opaque store (catalog ``opaque``: encrypted at rest, or a binary format
with no public schema) is one no analyzer can read. Its files say so with
the catalog's reason ("encrypted: AES-256-GCM, key in the macOS Keychain")
and their modification time: that a conversation existed, how large and how
recent it is, is the evidence that remains.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from aitrail.analyzer.view.bundle import Bundle, Source
from aitrail.analyzer.view.rows import format_timestamp


@dataclass(frozen=True, slots=True)
class Unparsed:
    """One collected file no parser read, and why."""

    agent: str
    store: str
    path: str
    member: str
    size: int
    sha256: str
    reason: str
    opaque: bool = False  # the store can never be read (catalog ``opaque``), not only "not parsed by this analyzer"
    mtime_ns: int | None = None

    def as_record(self) -> dict:
        """The summary's JSON form (keys in this order)."""
        return {"agent": self.agent, "store": self.store, "path": self.path, "member": self.member,
                "size": self.size, "sha256": self.sha256, "reason": self.reason, "opaque": self.opaque,
                "modified_utc": format_timestamp(self.mtime_ns) if self.mtime_ns is not None else None}


def unparsed_sources(bundle: Bundle, registry: Collection[str], agents: Iterable[str] = ()) -> list[Unparsed]:
    """Every collected source of the bundle (of ``agents``, when given) that no parser reads, in member order.

    A SQLite companion (``-wal``, ``-shm``, ``-journal``) is read with its
    database; it is listed only when that database is not in the bundle or has
    no parser.
    """
    wanted = set(agents)
    found = []
    for source in bundle.sources:
        if wanted and source.agent not in wanted:
            continue
        reason = _reason(bundle, source, registry)
        if reason is not None:
            found.append(Unparsed(source.agent, source.store, source.path, source.member, source.size,
                                  source.sha256, reason, source.opaque is not None, source.mtime_ns))
    return sorted(found, key=lambda item: (item.member, item.store))


def _reason(bundle: Bundle, source: Source, registry: Collection[str]) -> str | None:
    """Why no parser reads ``source``; None when one does."""
    if source.opaque is not None:  # the database and its companions alike
        return f"cannot be read: {source.opaque}"
    if source.companion_of:
        database = bundle.at(source.location, source.companion_of, source.store)
        if database is not None and database.parser in registry:
            return None
        return f"SQLite companion of {source.companion_of}, which is not in the bundle or has no parser"
    if source.parser is None:
        return "documentary store: collected, no parser of its own"
    if source.parser not in registry:
        return f"no parser yet for {source.parser}"
    return None

