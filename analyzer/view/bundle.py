"""The analyzer's read-only view of a bundle: collected files as sources, by store.

Nothing here touches the live filesystem except the analyzer's own temporary
directory, and only for SQLite: a database and its -wal/-shm/-journal
companions are copied there under names the analyzer makes up (member names
are untrusted) and opened from the copy, read-only where SQLite allows it,
with extension loading off and untrusted schema features disabled.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import zstandard

from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.decode import json_loads
from aitrail.analyzer.view.sparse import write_sparse
from aitrail.collector.bundle import layout, metadata
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
CHUNK = 1024 * 1024


def _text(exc: BaseException) -> str:
    return exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)


class MemberUnreadable(Exception):
    """A member whose bytes cannot be read or do not match their recorded digest."""


@dataclass(frozen=True, slots=True)  # slots: a bundle can hold MAX_MEMBERS of these
class Source:
    """One collected regular file, as files.jsonl describes it (only the fields the analyzer uses)."""

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
    role: str = ""  # the store's role in the catalog (transcript, prompt_history, ...), as files.jsonl records it
    changed_during_read: bool = False  # the collector saw the file change while it read it
    order: int = 0  # position of the member in the bundle: sources read in this order share frames
    opaque: str | None = None  # why the store can never be read (encrypted, no public schema): the catalog's reason

    @property
    def name(self) -> str:
        """The file name: the last component of ``path``."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def directory(self) -> str:
        """The directory part of ``path`` ("" for a path without a slash)."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


def _interned(text: str | None) -> str | None:
    # agent, store, parser, format and location repeat across thousands of sources: keep one copy
    return None if text is None else sys.intern(text)


def _source(record: dict, reader: BundleReader, order: dict[str, int]) -> Source | None:
    """The Source of a checked files.jsonl record (metadata.record_problem found nothing), or None."""
    if record["outcome"] not in ("collected", "changed_during_read") or not record.get("member"):
        return None
    if not record["member"].startswith(layout.PAYLOAD_DIR):
        return None
    stat = record.get("stat") or {}
    entry = reader.get(record["member"])
    sha256 = record.get("sha256") or ""
    if entry is not None and entry.sha256 == sha256:
        sha256 = entry.sha256  # share the index's strings: one copy per member, not two
    return Source(
        member=record["member"] if entry is None else entry.name, sha256=sha256,
        agent=_interned(record["agent"]), store=_interned(record["store"]), parser=_interned(record.get("parser")),
        origin=_interned(record.get("origin") or "primary"), format=_interned(record.get("format") or ""),
        location=_interned(record.get("location") or ""), path=record.get("path") or "",
        size=record.get("stored_size") or 0, mtime_ns=stat.get("mtime_ns"),
        companion_of=record.get("sqlite_companion_of"),
        role=_interned(record["role"]) if isinstance(record.get("role"), str) else "",
        changed_during_read=record["outcome"] == "changed_during_read",
        # a member missing from the index (a forced run) sorts last and reads as unreadable
        order=order.get(record["member"], len(order)),
        opaque=record["opaque"] if isinstance(record.get("opaque"), str) else None,
    )


def _add(table: dict[str, Source | list[Source]], key: str, source: Source) -> None:
    present = table.get(key)
    if present is None:
        table[key] = source
    elif isinstance(present, list):
        present.append(source)
    else:
        table[key] = [present, source]


def _all(entry: Source | list[Source] | None) -> list[Source] | tuple:
    if entry is None:
        return ()
    return entry if isinstance(entry, list) else (entry,)


class Bundle:
    """Sources of a bundle, member reads that check digests, and SQLite copies.

    Opening reads the index, collection.json and files.jsonl (streamed, each
    record checked against its schema); every problem found is in
    ``problems``, and the caller refuses the bundle unless the run is forced.
    """

    def __init__(self, path: str, temp_dir: str | None = None, check_digests: bool = True):
        self.path = path
        # Verification hashes every member; a forced run on a bundle that failed it
        # checks each member's digest again as it is read, and says so per member.
        self.check_digests = check_digests
        self.reader = BundleReader(path)
        self._temp_dir = temp_dir or tempfile.mkdtemp(prefix="aitrail-analyze-")
        self._owns_temp = temp_dir is None
        self._sqlite_copies = 0
        self.problems: list[str] = []  # metadata problems; in a forced run, also what could not be read
        self.collection = self._collection()
        self.sources = self._sources()
        self._by_store: dict[str, list[Source]] = {}
        self._by_location: dict[str, dict[str, list[Source]]] = {}  # store -> location -> sources, when asked
        # keyed by strings the sources already hold, a list only where a key repeats (memory per file)
        self._by_path: dict[str, Source | list[Source]] = {}
        self._by_member: dict[str, Source | list[Source]] = {}
        for source in self.sources:
            self._by_store.setdefault(source.store, []).append(source)
            _add(self._by_path, source.path, source)
            _add(self._by_member, source.member, source)

    def reopen(self) -> None:
        """In a forked worker: a file handle of its own, everything decoded kept (nothing is decoded again)."""
        self.reader.reopen()

    def close(self) -> None:
        """Close the bundle file and remove the temporary directory if this bundle made it."""
        self.reader.close()
        if self._owns_temp:
            shutil.rmtree(self._temp_dir, ignore_errors=True)

    def __enter__(self) -> Bundle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- metadata -------------------------------------------------------------------

    def _collection(self) -> dict:
        try:
            return metadata.load_collection(self.reader)
        except (KeyError, BundleFormatError) as exc:
            self.problems.append(f"{layout.COLLECTION_JSON} unreadable ({_text(exc)})")
            return {}

    def _sources(self) -> list[Source]:
        """files.jsonl, streamed; a bad line is a problem (a forced run goes on without that file)."""
        order = {member.name: position for position, member in enumerate(self.reader.members)}
        sources: list[Source] = []
        try:
            for _, record, problem in metadata.iter_records(self.reader, json_loads):
                if record is None:
                    self.problems.append(f"{layout.FILES_JSONL}: {problem}: that file is not parsed")
                elif (source := _source(record, self.reader, order)) is not None:
                    sources.append(source)
        except (KeyError, BundleFormatError) as exc:
            self.problems.append(f"{layout.FILES_JSONL} unreadable ({_text(exc)}): "
                                 + ("no member can be given to a parser" if not sources else
                                    f"only the {len(sources)} file(s) listed before the problem are parsed"))
        return sources

    # -- lookups --------------------------------------------------------------------

    def source_for(self, member: str, store: str) -> Source:
        """The source of ``member`` in ``store`` (a file matched by two stores is two sources)."""
        return next(source for source in _all(self._by_member.get(member)) if source.store == store)

    def by_store(self, store: str) -> list[Source]:
        """A new list of the sources collected for ``store``, in files.jsonl order (empty if none)."""
        return list(self._by_store.get(store, ()))

    def by_store_at(self, store: str, location: str) -> list[Source]:
        """``by_store(store)`` within one location (one home or image), from an index built once per store.

        A join made per location reads only its own sources: a bundle of many
        homes costs each home its own sources, not every home's.
        """
        grouped = self._by_location.get(store)
        if grouped is None:
            grouped = self._by_location[store] = {}
            for source in self._by_store.get(store, ()):
                grouped.setdefault(source.location, []).append(source)
        return list(grouped.get(location, ()))

    def at(self, location: str, path: str, store: str | None = None) -> Source | None:
        """The first source at ``path`` under ``location`` (in ``store``, if given), or None."""
        for source in _all(self._by_path.get(path)):
            if source.location == location and (store is None or source.store == store):
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
        """The member's whole data, digest-checked like ``iter_bytes``."""
        return b"".join(self.iter_bytes(source))

    # -- SQLite ---------------------------------------------------------------------

    def companions(self, source: Source) -> list[Source]:
        """The sources in the same store and location that say they are companions of ``source``."""
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

    def copy_with_wal(self, source: Source) -> tuple[str, str | None]:
        """A private copy of a database and of its -wal (never its -shm): their paths, the second None without one.

        For readers of a WAL's history (analyzer/formats/sqlite_history.py),
        which open the database as of each earlier commit from these copies.
        """
        self._sqlite_copies += 1
        directory = os.path.join(self._temp_dir, f"sqlite-{os.getpid()}-{self._sqlite_copies}")
        os.makedirs(directory)
        database = os.path.join(directory, "db")
        self._copy(source, database)
        for companion in self.companions(source):
            if companion.path == source.path + "-wal":
                self._copy(companion, database + "-wal")
                return database, database + "-wal"
        return database, None

    def scratch_directory(self) -> str:
        """A new empty directory in the analyzer's temporary directory (removed with it)."""
        self._sqlite_copies += 1
        directory = os.path.join(self._temp_dir, f"scratch-{os.getpid()}-{self._sqlite_copies}")
        os.makedirs(directory)
        return directory

    def _copy(self, source: Source, target: str) -> None:
        """The member's bytes at ``target``, zeros as holes: a sparse 4 GiB database costs the disk its data only."""
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            write_sparse(fd, self.iter_bytes(source))
        finally:
            os.close(fd)
