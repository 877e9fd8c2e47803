"""Compressed values inside OpenClaw's SQLite, decompressed within bounds, and documents held in a value cut into lines.

``transcript_events.event_zstd`` (one event, a checksummed level-1 zstd frame
of the event's JSON, at most 4 MiB by the table's CHECK), the ``zstd``
archives of ``session_transcript_archives`` and the embedded blobs of
``session_transcript_cold_archives`` are zstd frames written by Node's
``zlib.zstdCompressSync``. The file is the subject's: a frame header can claim
any content size, and python-zstandard allocates what the header claims,
whatever ``max_output_size`` says. So the claimed size is checked first, and
``max_output_size`` bounds a frame that claims none. Every value decompressed
from one database counts against one budget (``Budget``, MAX_DECOMPRESSED_BYTES,
the same as one ``.jsonl.zst`` file's): past it the later values are counted,
not decompressed, and one ``parser:`` row says so.

``document_lines`` gives the lines of a decompressed (or identity) archive as
the JSONL reader gives a file's: each a ``Line`` with its value, or the
``parser:`` row of a line that is too long, not UTF-8 or not JSON.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import zstandard

from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view import context
from aitrail.analyzer.view.decode import decode_json_utf8, stack_depth
from aitrail.analyzer.view.rows import Draft, over_limit

EVENT_LIMIT = context.MAX_LINE_BYTES  # one event is one JSONL line of a session file
ARCHIVE_LIMIT = context.MAX_DOCUMENT_BYTES  # one archived transcript, held whole as a document is


class Unreadable(Exception):
    """A value that could not be decompressed; the message says why."""


class Budget:
    """The bytes decompressed from one database (MAX_DECOMPRESSED_BYTES, read at call time); past it, counted."""

    def __init__(self) -> None:
        self.spent = 0
        self.refused = 0  # values not decompressed once the budget was spent
        self.first_refused = ""

    def decompress(self, blob: bytes, limit: int, locator: str) -> bytes | None:
        """The content of ``blob`` (one zstd frame), within ``limit`` bytes; None once the budget is spent.

        Unreadable when it is not zstd, is cut short, or claims or gives more than ``limit``.
        """
        remaining = context.MAX_DECOMPRESSED_BYTES - self.spent
        claimed = claimed_size(blob)
        if claimed > limit:
            raise Unreadable(f"the frame claims {claimed} bytes of content, over the limit of {limit}")
        if remaining <= 0 or claimed > remaining:
            return self.refuse(locator)
        try:
            content = decompress(blob, min(limit, remaining))
        except Unreadable:
            if remaining < limit:  # it may be whole and only larger than what is left of the budget
                return self.refuse(locator)
            raise
        self.spent += len(content)
        return content

    def refuse(self, locator: str) -> None:
        """Count a value left compressed for the budget (the first one's locator kept for the row)."""
        self.refused += 1
        self.first_refused = self.first_refused or locator

    def over_limit_rows(self) -> Iterator[Draft]:
        """One ``parser:`` row when values were left compressed, at the first of them."""
        if self.refused:
            yield over_limit("decompressed content of this database", f"{context.MAX_DECOMPRESSED_BYTES} bytes",
                             f"the compressed values from here on were not read ({self.refused} in all)",
                             self.first_refused)


def claimed_size(blob: bytes) -> int:
    """The content size a frame's header states (-1 when it states none); Unreadable when it is not a frame."""
    try:
        return zstandard.frame_content_size(blob)
    except zstandard.ZstdError as exc:
        raise Unreadable(f"not a zstd frame ({exc})") from exc


_DECOMPRESSORS: dict[int, zstandard.ZstdDecompressor] = {}


def _decompressor() -> zstandard.ZstdDecompressor:
    """One decompressor per process (a new one for every event cost 21 µs a frame, a reused one 3 µs)."""
    pid = os.getpid()  # a forked worker makes its own: the object is not shared across processes
    found = _DECOMPRESSORS.get(pid)
    if found is None:
        _DECOMPRESSORS.clear()
        found = _DECOMPRESSORS[pid] = zstandard.ZstdDecompressor()
    return found


def decompress(blob: bytes, limit: int) -> bytes:
    """One zstd frame's content, at most ``limit`` bytes; Unreadable otherwise (never allocates past ``limit``)."""
    claimed = claimed_size(blob)
    if claimed > limit:
        raise Unreadable(f"the frame claims {claimed} bytes of content, over the limit of {limit}")
    try:
        # a frame that states its size is decompressed into that size (checked above); one that does not, into
        # at most ``limit``: more is an error, not a larger buffer
        return _decompressor().decompress(blob, max_output_size=limit)
    except zstandard.ZstdError as exc:
        raise Unreadable(f"not a valid zstd frame, or more than {limit} bytes of content ({exc})") from exc


def document_lines(data: bytes, locator_of) -> Iterator[Line | Draft]:
    """The JSON object lines of an archive held in memory; a ``parser:`` row for each line that is not one.

    ``locator_of(number)`` names line ``number`` (from 1). A blank line is
    skipped; a last line without its newline that does not decode is a torn
    tail, as in a file.
    """
    depth = stack_depth()
    start, number, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        terminated = end >= 0
        end = end if terminated else size
        number += 1
        raw = data[start:end]
        start = end + 1
        if len(raw) > context.MAX_LINE_BYTES:
            yield Draft("system", f"parser: line too long ({len(raw)} bytes)", locator_of(number),
                        timestamp_source="none")
            continue
        stripped = raw.strip()
        if stripped:
            yield _decoded(Line(number, start - len(raw) - 1, raw, terminated), stripped, depth, locator_of)


def _decoded(line: Line, stripped: bytes, depth: int, locator_of) -> Line | Draft:
    try:
        value = decode_json_utf8(stripped, depth)
    except UnicodeDecodeError as not_utf8:  # a ValueError too: caught first
        return _bad(line, f"not UTF-8 at byte {not_utf8.start}", locator_of)
    except ValueError as exc:
        reason = f"invalid JSON: {exc}" if line.terminated else f"torn last line, no newline: {exc}"
        return _bad(line, reason, locator_of)
    if not isinstance(value, dict):
        return _bad(line, f"a JSON {type(value).__name__}, not an object", locator_of)
    line.value, line.locator = value, locator_of(line.number)
    return line


def _bad(line: Line, reason: str, locator_of) -> Draft:
    return Draft("system", f"parser: unparseable line ({reason}): {excerpt(line.raw)}", locator_of(line.number),
                 timestamp_source="none")
