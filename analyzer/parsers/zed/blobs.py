"""The ``data`` value of a threads.db row: JSON as stored, or zstd decompressed within bounds.

[src] Zed writes every thread as ``zstd::encode_all(json, 3)`` with
``data_type = 'zstd'`` and reads ``'json'`` rows as they are
(zed-industries/zed crates/agent/src/db.rs ``save_thread_sync``,
``deserialize_thread``, ``DataType``). The blob is the subject's: a frame
header can claim any content size, so the content is decompressed a few
hundred input bytes at a time and counted as it comes, never allocated from
what the header claims. One thread's JSON is held whole to be decoded, so it
may be at most MAX_THREAD_BYTES (a document's limit); all the threads of one
database together at most MAX_DATABASE_BYTES (the limit of one compressed
file's content). Past either, ``Unreadable`` / ``Budget.refused`` say so and
the caller writes the ``parser:`` row.
"""

from __future__ import annotations

import zstandard

from aitrail.analyzer.view import context

MAX_THREAD_BYTES = context.MAX_DOCUMENT_BYTES  # one thread's JSON, held whole for decoding
MAX_DATABASE_BYTES = context.MAX_DECOMPRESSED_BYTES  # every thread of one database together
INPUT_STEP = 512  # compressed bytes per call: a zstd block of 128 KiB fits in 4 bytes, so at most 16 MiB out


class Unreadable(Exception):
    """A value that could not be read (the message says why)."""


class OverLimit(Unreadable):
    """A value whose content passed MAX_THREAD_BYTES."""


class Budget:
    """The bytes decompressed from one database; past MAX_DATABASE_BYTES later values are refused (counted)."""

    def __init__(self) -> None:
        self.spent = 0
        self.refused = 0
        self.first_refused = ""

    def left(self) -> int:
        """Bytes of content the database may still give."""
        return max(0, MAX_DATABASE_BYTES - self.spent)

    def refuse(self, locator: str) -> None:
        """Count a value left compressed because the budget is spent."""
        self.refused += 1
        self.first_refused = self.first_refused or locator


def thread_json(data_type: object, data: object, budget: Budget, locator: str) -> bytes | None:
    """The JSON bytes of one row (None when the database budget is spent: the value is counted, not read).

    Unreadable for an unknown ``data_type``, a value that is not bytes or text,
    a damaged zstd stream, or content over MAX_THREAD_BYTES.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, bytes):
        raise Unreadable(f"data is {type(data).__name__}, not a blob")
    if data_type == "json":
        if len(data) > MAX_THREAD_BYTES:
            raise OverLimit(f"{len(data)} bytes of JSON, over the limit of {MAX_THREAD_BYTES}")
        return data
    if data_type != "zstd":
        raise Unreadable(f"data_type {str(data_type)[:40]!r} is neither 'json' nor 'zstd'")
    if budget.left() <= 0:
        budget.refuse(locator)
        return None
    left = budget.left()
    try:
        content = decompress(data, min(MAX_THREAD_BYTES, left))
    except OverLimit:
        if left < MAX_THREAD_BYTES:  # it may be whole, only larger than what is left of the database's budget
            budget.refuse(locator)
            return None
        raise
    budget.spent += len(content)
    return content


def decompress(blob: bytes, limit: int) -> bytes:
    """The content of ``blob`` (one or more zstd frames, as ``zstd::decode_all`` reads), at most ``limit`` bytes."""
    parts: list[bytes] = []
    given = 0
    decompressor = zstandard.ZstdDecompressor().decompressobj()
    try:
        for start in range(0, len(blob), INPUT_STEP):
            chunk = blob[start:start + INPUT_STEP]
            while chunk:
                if decompressor.eof:  # a further frame follows the last one
                    decompressor = zstandard.ZstdDecompressor().decompressobj()
                out = decompressor.decompress(chunk)
                given += len(out)
                if given > limit:
                    raise OverLimit(f"more than {limit} bytes of content, the limit of one thread")
                if out:
                    parts.append(out)
                chunk = decompressor.unused_data if decompressor.eof else b""
    except zstandard.ZstdError as exc:
        raise Unreadable(f"not a valid zstd stream ({exc})") from exc
    if not decompressor.eof:
        raise Unreadable("the zstd stream ends in the middle of a frame")
    return b"".join(parts)
