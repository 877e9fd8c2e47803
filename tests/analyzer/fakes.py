"""An in-memory stand-in for analyzer.bundle.Bundle, so parsers can be fed any bytes quickly."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
import weakref

from aitrail.analyzer.engine.dispatch import parse_source
from aitrail.analyzer.engine.registry import parsers
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext

REGISTRY = parsers()


class FakeBundle:
    """Files given as {(store, path): bytes}; SQLite bytes are written to a temp file to open."""

    def __init__(self, files: dict[tuple[str, str], bytes], collection: dict | None = None, location: str = "home"):
        self.collection = collection or {"mode": "homes"}
        self.problems: list[str] = []
        self._data: dict[str, bytes] = {}
        self.sources: list[Source] = []
        self._temp = tempfile.mkdtemp(prefix="aitrail-fake-")
        # removed with the fake: the fuzz targets build hundreds of thousands of them
        weakref.finalize(self, shutil.rmtree, self._temp, True)
        for (store, path), data in files.items():
            member = f"data/{location}/{path}"
            agent = store.split(".", 1)[0]
            self._data[member] = data
            self.sources.append(Source(member=member, sha256=hashlib.sha256(data).hexdigest(), agent=agent,
                                       store=store, parser=None, origin="primary",
                                       format="jsonl_zst" if path.endswith(".zst") else "", location=location,
                                       path=path, size=len(data), mtime_ns=1_700_000_000_000_000_000))

    def source(self, path: str) -> Source:
        return next(source for source in self.sources if source.path == path)

    def by_store(self, store: str) -> list[Source]:
        return [source for source in self.sources if source.store == store]

    def by_store_at(self, store: str, location: str) -> list[Source]:
        return [source for source in self.by_store(store) if source.location == location]

    def at(self, location: str, path: str, store: str | None = None) -> Source | None:
        for source in self.sources:
            if source.location == location and source.path == path and (store is None or source.store == store):
                return source
        return None

    def read(self, source: Source) -> bytes:
        if source.member not in self._data:
            raise MemberUnreadable(source.member)
        return self._data[source.member]

    def iter_bytes(self, source: Source):
        data = self.read(source)
        for start in range(0, len(data), 7):  # odd chunk size: exercises lines that span chunks
            yield data[start:start + 7]

    def companions(self, source: Source) -> list[Source]:
        return []

    def open_sqlite(self, source: Source) -> sqlite3.Connection:
        handle, path = tempfile.mkstemp(dir=self._temp)
        with os.fdopen(handle, "wb") as out:
            out.write(self.read(source))
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.execute("PRAGMA trusted_schema = OFF")
        return connection

    def copy_with_wal(self, source: Source) -> tuple[str, str | None]:
        """The database and its ``-wal`` (a source at ``<path>-wal`` of the same location) copied, as Bundle does."""
        directory = self.scratch_directory()
        database = os.path.join(directory, "db")
        with open(database, "wb") as out:
            out.write(self.read(source))
        wal = self.at(source.location, source.path + "-wal")
        if wal is None:
            return database, None
        with open(database + "-wal", "wb") as out:
            out.write(self.read(wal))
        return database, database + "-wal"

    def scratch_directory(self) -> str:
        return tempfile.mkdtemp(dir=self._temp)


def run(bundle: FakeBundle, path: str, parser_id: str) -> list[tuple]:
    """All rows one parser gives for one fake file (through dispatch, as in a real run)."""
    return [row for _, row in parse_source(bundle, bundle.source(path), REGISTRY[parser_id], {})]


def drafts(bundle: FakeBundle, path: str, parser_id: str):
    """The parser's own drafts, without dispatch (to see exceptions directly)."""
    return list(REGISTRY[parser_id](ParseContext(bundle, bundle.source(path), {})))
