"""What a parser sees: its source file's bytes, and the other members it asks for by store.

Parsers are pure functions of a ParseContext: they read bytes (or a
read-only SQLite copy) and yield Drafts. Joins go through ``related`` and
``sibling``, which return sources of the same bundle by catalog store, so a
parser never names a member path of its own making.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import zstandard

from aitrail.analyzer.view.bundle import Bundle, MemberUnreadable, Source
from aitrail.analyzer.view.rows import Draft, over_limit

# Limits of parsing (docs/timeline.md "Limits of parsing"). A line or document over a limit
# is one ``parser:`` row; the bytes over it are counted, never held.
MAX_LINE_BYTES = 32 * 1024 * 1024  # tool results and base64 images make real lines of several MB
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a whole-file JSON/text document read by ``data``/``read``
MAX_CONFIG_BYTES = 4 * 1024 * 1024  # TOML and Starlark: parsed into objects of many times their size
MAX_DECOMPRESSED_BYTES = 1024 * 1024 * 1024  # content of one .jsonl.zst file
ZSTD_INPUT_STEP = 512  # compressed bytes per decompress call: at most 16 MiB of output each


class FileTooLarge(MemberUnreadable):
    """A member over MAX_DOCUMENT_BYTES asked for whole; dispatch turns it into one ``parser:`` row."""

    def __init__(self, size: int, limit: int, member: str = ""):
        self.size, self.limit, self.member = size, limit, member
        suffix = f": {member}" if member else ""
        super().__init__(f"file too large to read whole ({size} bytes, limit {limit}){suffix}")


class ContentCapped(Exception):
    """Decompressed content reached MAX_DECOMPRESSED_BYTES; what came before it was given."""


class RawLine:
    """One line of a member: number from 1, byte offset, bytes without the newline, ended by a newline.

    A plain slotted class, not a frozen dataclass: one is made per line of
    every file, and a frozen dataclass's __init__ costs three times as much.
    """

    __slots__ = ("number", "offset", "raw", "terminated")

    def __init__(self, number: int, offset: int, raw: bytes, terminated: bool):
        self.number, self.offset, self.raw, self.terminated = number, offset, raw, terminated

    def __repr__(self) -> str:
        return f"RawLine({self.number}, {self.offset}, {self.raw[:40]!r}, {self.terminated})"


def line_too_long(number: int, length: int) -> Draft:
    """The row standing for a line over MAX_LINE_BYTES (its bytes were skipped, not read)."""
    return Draft("system", f"parser: line too long ({length} bytes)", f"line:{number}", timestamp_source="none")


def content_capped(number: int, limit: int) -> Draft:
    """The row that says a compressed member's content passed the cap at line ``number``."""
    return over_limit("decompressed content", f"{limit} bytes", "the rest of the file was not read", f"line:{number}")


class _Splitter:
    """Linear line splitting: a partial line is a list of pieces (joined once), never ``bytes +=``.

    A line longer than ``limit`` is only counted until its newline, so memory
    stays within ``limit`` plus one chunk whatever the input.
    """

    def __init__(self, limit: int, line_type: type[RawLine] = RawLine):
        self.limit, self.line_type = limit, line_type
        self.number = self.offset = 0
        self.pieces: list[bytes] = []
        self.held = 0  # length of the partial line so far (held in pieces, or only counted)
        self.skipping = False

    def feed(self, chunk: bytes) -> Iterator[RawLine | Draft]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            yield self._line(chunk, start, end, True)
            start = end + 1
        rest = len(chunk) - start
        if rest:
            self.held += rest
            if self.skipping or self.held > self.limit:
                self.skipping, self.pieces = True, []
            else:
                self.pieces.append(chunk[start:] if start else chunk)

    def finish(self) -> Iterator[RawLine | Draft]:
        if self.held:
            yield self._line(b"", 0, 0, False)

    def _line(self, chunk: bytes, start: int, end: int, terminated: bool) -> RawLine | Draft:
        length = self.held + end - start
        self.number += 1
        if self.skipping or length > self.limit:
            item: RawLine | Draft = line_too_long(self.number, length)
        else:
            raw = chunk[start:end]
            if self.pieces:
                self.pieces.append(raw)
                raw = b"".join(self.pieces)
            item = self.line_type(self.number, self.offset, raw, terminated)
        self.offset += length + 1
        self.pieces, self.held, self.skipping = [], 0, False
        return item


class ParseContext:
    """One source file being parsed, with access to the rest of the bundle."""

    def __init__(self, bundle: Bundle, source: Source, cache: dict):
        self.bundle = bundle
        self.source = source
        self._data: bytes | None = None
        self._cache = cache  # shared by the parsers of one worker, for joins read once

    @property
    def data(self) -> bytes:
        """The whole member (for JSON documents); JSONL parsers use ``lines`` instead.

        FileTooLarge (one ``parser:`` row, from dispatch) past MAX_DOCUMENT_BYTES.
        """
        if self._data is None:
            self._data = read_whole(self.bundle, self.source)
        return self._data

    def config_data(self) -> bytes:
        """The whole member for a configuration format (TOML, Starlark), within MAX_CONFIG_BYTES.

        Their parsers build a tree tens of times the size of the text, and real
        files are a few kilobytes; FileTooLarge past the limit.
        """
        if self._data is None:
            self._data = read_whole(self.bundle, self.source, MAX_CONFIG_BYTES)
        return self._data

    def lines(self, limit: int | None = None, line_type: type[RawLine] = RawLine) -> Iterator[RawLine | Draft]:
        """Every line as a RawLine (or ``line_type``, a subclass), streamed; a Draft where a line cannot be given.

        A line over ``limit`` bytes is a ``parser: line too long`` Draft at its
        line number, and the next line is read. Consumers yield the Drafts as
        rows, so no limit can hide silently. Only the file's last line can be
        unterminated: a torn tail. When the content ends early (a cut zstd
        stream), the partial last line is still given, then the error is raised
        for dispatch to report.
        """
        splitter = _Splitter(MAX_LINE_BYTES if limit is None else limit, line_type)
        failure: MemberUnreadable | None = None
        chunks = self.chunks()
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except ContentCapped:
                yield content_capped(splitter.number + 1, MAX_DECOMPRESSED_BYTES)
                return  # the cut partial line is not a torn tail: it is not given
            except MemberUnreadable as exc:
                failure = exc
                break
            yield from splitter.feed(chunk)
        yield from splitter.finish()
        if failure is not None:
            raise failure

    def chunks(self) -> Iterator[bytes]:
        """The member's content in chunks, decompressed when the catalog says ``jsonl_zst``.

        Offsets and line numbers of a compressed file refer to its decompressed
        content (the same content the agent reads back). Decompression is fed
        ZSTD_INPUT_STEP bytes at a time, so one step never yields more than
        16 MiB (a zstd block of at most 128 KiB can be written in 4 bytes), and
        ContentCapped is raised once MAX_DECOMPRESSED_BYTES have been given.
        """
        raw = iter((self._data,)) if self._data is not None else self.bundle.iter_bytes(self.source)
        if self.source.format != "jsonl_zst":
            yield from raw
            return
        decompressor, fed, given = zstandard.ZstdDecompressor().decompressobj(), False, 0
        try:
            for block in raw:
                for start in range(0, len(block), ZSTD_INPUT_STEP):
                    chunk = block[start:start + ZSTD_INPUT_STEP]
                    while chunk:
                        if decompressor.eof:  # a further zstd frame follows the last one
                            decompressor = zstandard.ZstdDecompressor().decompressobj()
                        out = decompressor.decompress(chunk)
                        fed = True
                        if out:
                            if given + len(out) > MAX_DECOMPRESSED_BYTES:
                                yield out[:MAX_DECOMPRESSED_BYTES - given]
                                raise ContentCapped()
                            given += len(out)
                            yield out
                        chunk = decompressor.unused_data if decompressor.eof else b""
        except zstandard.ZstdError as exc:
            raise MemberUnreadable(f"{self.source.member}: not a valid zstd stream ({exc})") from exc
        if fed and not decompressor.eof:
            raise MemberUnreadable(f"{self.source.member}: the zstd stream ends in the middle of a frame")

    def sqlite(self, source: Source | None = None) -> sqlite3.Connection:
        """A read-only copy of a database of this bundle (this source's by default), opened safely."""
        return self.bundle.open_sqlite(source or self.source)

    def related(self, store: str) -> list[Source]:
        """Sources of another store of the same agent, in this source's location (the same home or image).

        ``store`` is local (``session_index``) or qualified (``agent.store``).
        A join never crosses homes: two users' homes in one bundle (or one
        user's home beside an image's) are two subjects, and one's index must
        not answer for the other's transcripts.
        """
        qualified = store if "." in store else f"{self.source.agent}.{store}"
        return self.bundle.by_store_at(qualified, self.source.location)

    def sibling(self, name: str, store: str | None = None) -> Source | None:
        """A source in the same directory (same location), by file name."""
        path = f"{self.source.directory}/{name}" if self.source.directory else name
        qualified = None if store is None else (store if "." in store else f"{self.source.agent}.{store}")
        return self.bundle.at(self.source.location, path, qualified)

    def at(self, path: str, store: str | None = None) -> Source | None:
        """The source at ``path`` (a path of this location, e.g. ``.claude/history.jsonl``), in ``store`` if given."""
        qualified = None if store is None else (store if "." in store else f"{self.source.agent}.{store}")
        return self.bundle.at(self.source.location, path, qualified)

    def read(self, source: Source) -> bytes:
        """Another member whole (a join); FileTooLarge past MAX_DOCUMENT_BYTES."""
        return read_whole(self.bundle, source, named=source.member != self.source.member)

    def cached(self, key: tuple, compute: Callable[[], object]) -> object:
        """Compute a join table once per worker, agent and location (e.g. a task list read from state.vscdb).

        The cache is shared by every parser of the worker, so the key is
        always qualified here by this source's agent and location: two agents
        that call their stores alike (Continue's and PearAI's
        ``session_index``), or two homes of one bundle, never answer for each
        other, whatever key a parser passes.
        """
        qualified = (self.source.agent, self.source.location, *key)
        if qualified not in self._cache:
            self._cache[qualified] = compute()
        return self._cache[qualified]

    @property
    def collection(self) -> dict:
        """The bundle's run metadata (collection.json): mode, time zone, homes."""
        return self.bundle.collection


def read_whole(bundle: Bundle, source: Source, limit: int | None = None, named: bool = False) -> bytes:
    """A member's bytes, or FileTooLarge when it (by files.jsonl, or as read) is over ``limit``.

    The bytes past the limit are counted, not held, so the row can say the
    real size and the member's digest is still checked.
    """
    member = source.member if named else ""
    limit = MAX_DOCUMENT_BYTES if limit is None else limit
    if source.size > limit:
        raise FileTooLarge(source.size, limit, member)
    parts, size = [], 0
    for chunk in bundle.iter_bytes(source):
        size += len(chunk)
        if size <= limit:
            parts.append(chunk)
        elif parts:
            parts = []  # over the limit: keep counting, hold nothing
    if size > limit:
        raise FileTooLarge(size, limit, member)
    return b"".join(parts)
