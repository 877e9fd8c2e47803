"""The analyzer's read-only view of a bundle: collected files as sources, by store.

Nothing here touches the live filesystem except the analyzer's own temporary
directory, and only for SQLite: a database and its -wal/-shm/-journal
companions are copied there under names the analyzer makes up (member names
are untrusted) and opened from the copy, read-only where SQLite allows it,
with extension loading off and untrusted schema features disabled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from typing import Iterator

import zstandard

from aitrail.analyzer import sqlite_safe
from aitrail.collector.bundle import layout
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
CHUNK = 1024 * 1024


class MemberUnreadable(Exception):
    """A member whose bytes cannot be read or do not match their recorded digest."""


@dataclass(frozen=True)
class Source:
    """One collected regular file, as files.jsonl describes it."""

    member: str
    sha256: str
    agent: str
    store: str
    parser: str | None
    origin: str
    format: str
    location: str
    path: str
    size: int
    mtime_ns: int | None
    companion_of: str | None = None
    order: int = 0  # position of the member in the bundle: sources read in this order share frames
    record: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def directory(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


def _source(record: dict, order: dict[str, int]) -> Source | None:
    if record.get("outcome") not in ("collected", "changed_during_read") or not record.get("member"):
        return None
    if not record["member"].startswith(layout.PAYLOAD_DIR):
        return None
    stat = record.get("stat") or {}
    return Source(
        member=record["member"], sha256=record.get("sha256") or "", agent=record["agent"], store=record["store"],
        parser=record.get("parser"), origin=record.get("origin") or "primary", format=record.get("format") or "",
        location=record.get("location") or "", path=record.get("path") or "", size=record.get("stored_size") or 0,
        mtime_ns=stat.get("mtime_ns"), companion_of=record.get("sqlite_companion_of"),
        # a member missing from the index (a forced run) sorts last and reads as unreadable
        order=order.get(record["member"], len(order)), record=record,
    )


class Bundle:
    """Sources of a bundle, member reads that check digests, and SQLite copies."""

    def __init__(self, path: str, temp_dir: str | None = None, check_digests: bool = True):
        self.path = path
        # Verification hashes every member; a forced run on a bundle that failed it
        # checks each member's digest again as it is read, and says so per member.
        self.check_digests = check_digests
        self.reader = BundleReader(path)
        self._temp_dir = temp_dir or tempfile.mkdtemp(prefix="aitrail-analyze-")
        self._owns_temp = temp_dir is None
        self._sqlite_copies = 0
        self.problems: list[str] = []  # what a forced run could not read at all
        self.collection = self._json(layout.COLLECTION_JSON)
        self.records = self._files()
        order = {member.name: position for position, member in enumerate(self.reader.members)}
        self.sources = [source for source in (_source(record, order) for record in self.records) if source]
        self._by_store: dict[str, list[Source]] = {}
        self._by_path: dict[tuple[str, str], list[Source]] = {}
        for source in self.sources:
            self._by_store.setdefault(source.store, []).append(source)
            self._by_path.setdefault((source.location, source.path), []).append(source)

    def close(self) -> None:
        self.reader.close()
        if self._owns_temp:
            shutil.rmtree(self._temp_dir, ignore_errors=True)

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- metadata -------------------------------------------------------------------

    def _json(self, name: str) -> dict:
        try:
            value = json.loads(self.reader.read_data(name))
            return value if isinstance(value, dict) else {}
        except (KeyError, ValueError, BundleFormatError, zstandard.ZstdError) as exc:
            self.problems.append(f"{name} unreadable ({exc})")
            return {}

    def _files(self) -> list[dict]:
        """files.jsonl; a damaged one (only in a forced run) yields what can be read, and says so."""
        try:
            text = self.reader.read_data(layout.FILES_JSONL)
        except (KeyError, BundleFormatError, zstandard.ZstdError) as exc:
            self.problems.append(f"{layout.FILES_JSONL} unreadable ({exc}): no member can be given to a parser")
            return []
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                self.problems.append(f"{layout.FILES_JSONL} line {number} unreadable: that file is not parsed")
                continue
            if isinstance(record, dict) and isinstance(record.get("agent"), str) and isinstance(record.get("store"), str):
                records.append(record)
        return records

    # -- lookups --------------------------------------------------------------------

    def by_store(self, store: str) -> list[Source]:
        return list(self._by_store.get(store, ()))

    def at(self, location: str, path: str, store: str | None = None) -> Source | None:
        for source in self._by_path.get((location, path), ()):
            if store is None or source.store == store:
                return source
        return None

    # -- bytes ----------------------------------------------------------------------

    def iter_bytes(self, source: Source) -> Iterator[bytes]:
        """The member's data in chunks, checked against its SHA-256 as it is read."""
        hasher = hashlib.sha256() if self.check_digests else None
        try:
            member = self.reader.member(source.member)
            for chunk in self.reader.iter_data(member):
                if hasher is not None:
                    hasher.update(chunk)
                yield chunk
        except (KeyError, BundleFormatError, zstandard.ZstdError) as exc:
            raise MemberUnreadable(f"{source.member}: cannot be read ({exc})") from exc
        if hasher is not None and source.sha256 and hasher.hexdigest() != source.sha256:
            raise MemberUnreadable(f"{source.member}: bytes do not match the SHA-256 in files.jsonl")

    def read(self, source: Source) -> bytes:
        return b"".join(self.iter_bytes(source))

    # -- SQLite ---------------------------------------------------------------------

    def companions(self, source: Source) -> list[Source]:
        return [other for other in self._by_store.get(source.store, ())
                if other.companion_of == source.path and other.location == source.location]

    def open_sqlite(self, source: Source) -> sqlite3.Connection:
        """Open a read-only copy of a database and its companions (never the member in place)."""
        self._sqlite_copies += 1
        directory = os.path.join(self._temp_dir, f"sqlite-{os.getpid()}-{self._sqlite_copies}")
        os.makedirs(directory)
        database = os.path.join(directory, "db")
        self._copy(source, database)
        for companion in self.companions(source):
            for suffix in COMPANION_SUFFIXES:
                if companion.path == source.path + suffix:
                    self._copy(companion, database + suffix)
        # read-only where SQLite allows it, every query within a budget and a heap limit
        return sqlite_safe.open_copy(database)

    def _copy(self, source: Source, target: str) -> None:
        with open(target, "xb") as handle:
            for chunk in self.iter_bytes(source):
                handle.write(chunk)
