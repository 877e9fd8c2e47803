"""What a parser sees: its source file's bytes, and the other members it asks for by store.

Parsers are pure functions of a ParseContext: they read bytes (or a
read-only SQLite copy) and yield Drafts. Joins go through ``related`` and
``sibling``, which return sources of the same bundle by catalog store, so a
parser never names a member path of its own making.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Iterator

import zstandard

from aitrail.analyzer.bundle import Bundle, MemberUnreadable, Source

LINE_CHUNK = 1024 * 1024


class ParseContext:
    """One source file being parsed, with access to the rest of the bundle."""

    def __init__(self, bundle: Bundle, source: Source, cache: dict):
        self.bundle = bundle
        self.source = source
        self._data: bytes | None = None
        self._cache = cache  # shared by the parsers of one worker, for joins read once

    @property
    def data(self) -> bytes:
        """The whole member (for JSON documents); JSONL parsers use ``lines`` instead."""
        if self._data is None:
            self._data = self.bundle.read(self.source)
        return self._data

    def lines(self) -> Iterator[tuple[int, int, bytes, bool]]:
        """(line number from 1, byte offset, raw line without newline, ended by a newline), streamed.

        Only the file's last line can be unterminated: a torn tail. When the
        content ends early (a cut zstd stream), the partial last line is still
        given, then the error is raised for dispatch to report.
        """
        number, offset, pending = 0, 0, b""
        failure: MemberUnreadable | None = None
        chunks = self.chunks()
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except MemberUnreadable as exc:
                failure = exc
                break
            pending += chunk
            start = 0
            while True:
                end = pending.find(b"\n", start)
                if end < 0:
                    break
                number += 1
                yield number, offset, pending[start:end], True
                offset += end - start + 1
                start = end + 1
            pending = pending[start:]
        if pending:
            yield number + 1, offset, pending, False
        if failure is not None:
            raise failure

    def chunks(self) -> Iterator[bytes]:
        """The member's content in chunks, decompressed when the catalog says ``jsonl_zst``.

        Offsets and line numbers of a compressed file refer to its decompressed
        content (the same content the agent reads back).
        """
        raw = iter((self._data,)) if self._data is not None else self.bundle.iter_bytes(self.source)
        if self.source.format != "jsonl_zst":
            yield from raw
            return
        decompressor, fed = zstandard.ZstdDecompressor().decompressobj(), False
        try:
            for chunk in raw:
                while chunk:
                    if decompressor.eof:  # a further zstd frame follows the last one
                        decompressor = zstandard.ZstdDecompressor().decompressobj()
                    out = decompressor.decompress(chunk)
                    fed = True
                    if out:
                        yield out
                    chunk = decompressor.unused_data if decompressor.eof else b""
        except zstandard.ZstdError as exc:
            raise MemberUnreadable(f"{self.source.member}: not a valid zstd stream ({exc})") from exc
        if fed and not decompressor.eof:
            raise MemberUnreadable(f"{self.source.member}: the zstd stream ends in the middle of a frame")

    def sqlite(self, source: Source | None = None) -> sqlite3.Connection:
        return self.bundle.open_sqlite(source or self.source)

    def related(self, store: str) -> list[Source]:
        """Sources of another store of the same agent (``store`` is local, e.g. ``session_index``)."""
        qualified = store if "." in store else f"{self.source.agent}.{store}"
        return self.bundle.by_store(qualified)

    def sibling(self, name: str, store: str | None = None) -> Source | None:
        """A source in the same directory (same location), by file name."""
        path = f"{self.source.directory}/{name}" if self.source.directory else name
        qualified = None if store is None else (store if "." in store else f"{self.source.agent}.{store}")
        return self.bundle.at(self.source.location, path, qualified)

    def read(self, source: Source) -> bytes:
        return self.bundle.read(source)

    def cached(self, key: tuple, compute: Callable[[], object]) -> object:
        """Compute a join table once per worker (e.g. a task list read from state.vscdb)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    @property
    def collection(self) -> dict:
        return self.bundle.collection
