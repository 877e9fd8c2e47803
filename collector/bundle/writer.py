"""Write a bundle: tar members packed into independent zstd frames, then the index frame.

Small members are packed, whole, into blocks of about 1 MiB; each block is one
zstd frame, compressed on one of two background threads (zstd releases the
GIL, so compression overlaps with reading the next files) and written in the
order the blocks were made. The same thread joins the block and hashes the
members added without a digest (hashlib and bytes.join release the GIL on
large buffers too), so the digest is taken from the very bytes stored and the
reading thread does not pay for it. Frame boundaries depend only on the
members' sizes, and a frame's bytes only on its block, never on timing or on
which thread compressed it. A member larger than that
gets a frame of its own and is streamed. Either way a frame holds whole tar
members only, so the analyzer can decompress any member's frame alone, and
``tar --zstd`` reads the concatenation as one archive.

A streamed member's length is the length ``lstat`` gave; if the read ends at
another length, its frame is cut off the output file (truncated back to where
it began) and the caller writes the member again from a spool with the true
length. Nothing is ever padded.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import os
import tarfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii  # what json.dumps uses for str by default
from typing import Protocol

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle.layout import IndexEntry
from aitrail.collector.bundle.tarheader import BLOCK, ns_text, regular_file_header

FRAME_TARGET = 1024 * 1024  # bytes of tar stream per packed frame
# How far reading may run ahead of writing: tar bytes handed to the compressing
# threads and not yet written. Counted in bytes, not frames: eleven 5 MB SQLite
# files in a row once made the reading thread wait 150 ms for a queue of four
# frames, while a 1 MiB frame of small files is a thousandth of the budget.
COMPRESS_AHEAD_BYTES = 32 * 1024 * 1024
# Two, so that both cores compress while the reading thread waits (a run of large
# files) and none is idle while it reads; each thread has its own compressor.
COMPRESSING_THREADS = 2


class HeaderFields(Protocol):
    """What a tar header is built from: TarMeta, or the collector's lstat record (fsmeta.Meta) as it is."""

    mode: int
    uid: int
    gid: int
    mtime_ns: int
    atime_ns: int | None
    ctime_ns: int | None


@dataclass(frozen=True)
class TarMeta:
    """What the tar header carries about a source file."""

    mode: int
    uid: int
    gid: int
    mtime_ns: int
    atime_ns: int | None = None
    ctime_ns: int | None = None


def tar_header(name: str, size: int, meta: HeaderFields, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> bytes:
    """A pax tar header; times keep full ns precision in pax records."""
    if kind == tarfile.REGTYPE:
        return regular_file_header(name, size, meta.mode, meta.uid, meta.gid, meta.mtime_ns,
                                   meta.atime_ns, meta.ctime_ns)
    info = tarfile.TarInfo(name)
    info.size = 0
    info.type = kind
    info.linkname = linkname
    info.mode = meta.mode & 0o7777
    info.uid, info.gid = meta.uid, meta.gid
    info.uname = info.gname = ""
    info.mtime = max(0, meta.mtime_ns // 1_000_000_000)
    pax = {"mtime": ns_text(meta.mtime_ns)}
    if meta.atime_ns is not None:
        pax["atime"] = ns_text(meta.atime_ns)
    if meta.ctime_ns is not None:
        pax["ctime"] = ns_text(meta.ctime_ns)
    info.pax_headers = pax
    return info.tobuf(tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")


def index_json(entries: list[IndexEntry], end: dict) -> bytes:
    """The index as ``json.dumps(index, sort_keys=True, separators=(",", ":"))`` writes it, built faster.

    Members whose fields are all of the usual types (ints, a str name and
    type, a str or None digest) are written from a template in sorted key
    order; anything else goes through json.dumps.
    """
    members = []
    for entry in entries:
        numbers = (entry.frame_length, entry.frame_offset, entry.header_length, entry.member_offset, entry.size)
        if (set(map(type, numbers)) == _INTS_ONLY and entry.name.__class__ is str and entry.type.__class__ is str
                and (entry.sha256 is None or entry.sha256.__class__ is str)):
            members.append(_MEMBER_TEXT % (*numbers[:4], encode_basestring_ascii(entry.name),
                                           "null" if entry.sha256 is None else encode_basestring_ascii(entry.sha256),
                                           entry.size, encode_basestring_ascii(entry.type)))
        else:
            members.append(json.dumps(entry.as_record(), sort_keys=True, separators=(",", ":")))
    head = json.dumps({"end": end, "format": layout.FORMAT_NAME}, sort_keys=True, separators=(",", ":"))[:-1]
    tail = json.dumps(layout.FORMAT_VERSION)
    return f'{head},"members":[{",".join(members)}],"version":{tail}}}'.encode()


_MEMBER_TEXT = ('{"frame_length":%d,"frame_offset":%d,"header_length":%d,"member_offset":%d,"name":%s,"sha256":%s,'
                '"size":%d,"type":%s}')
_INTS_ONLY = {int}


def _padding(size: int) -> bytes:
    return b"\0" * (-size % BLOCK)


def new_compressor(level: int = 3) -> zstandard.ZstdCompressor:
    """A zstd compressor that writes content checksums and sizes in every frame."""
    return zstandard.ZstdCompressor(level=level, write_checksum=True)


class BundleWriter:
    """Sequential writer of one bundle file (opened exclusively; never overwrites)."""

    def __init__(self, path: str, level: int = 3):
        self.path = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        self._file = os.fdopen(fd, "w+b", buffering=1024 * 1024)
        # Where the next packed frame goes. Kept here rather than asked of the file
        # for each frame: tell() is a system call, and each one hands the GIL over.
        self._end = 0
        self._compressor = new_compressor(level)  # streamed members and the tar end (this thread)
        self._level = level
        self._thread_compressors = threading.local()  # packed frames: a compressor per compressing thread
        self._executor = ThreadPoolExecutor(max_workers=COMPRESSING_THREADS, thread_name_prefix="aitrail-zstd")
        self._executor_for_sync = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aitrail-fsync")
        self._head_digest: Future | None = None  # hashing and syncing the payload (hash_and_sync_payload)
        # (frame being made, its members, those of them whose digest the thread computes, its tar bytes)
        self._pending: collections.deque[tuple[Future, list[IndexEntry], list[IndexEntry], int]] = collections.deque()
        self._pending_bytes = 0
        self._block: list[bytes] = []
        self._block_entries: list[IndexEntry] = []
        self._block_unhashed: list[tuple[IndexEntry, bytes | memoryview]] = []  # digests the thread computes
        self._block_size = 0
        self.entries: list[IndexEntry] = []
        self._names: set[str] = set()
        self._stream: _Stream | None = None

    # -- packed members ---------------------------------------------------------

    def add_bytes(self, name: str, data: bytes | memoryview, meta: HeaderFields,
                  sha256: str | None = None) -> IndexEntry:
        """Add a regular file whose bytes are in memory.

        Without ``sha256`` the digest of ``data`` is computed on the
        compressing thread; the returned entry's ``sha256`` is set when its
        frame has been written (at the latest by ``end_frame`` or ``finish``).
        ``data`` must not change after this call (bytes, or a view of bytes).
        """
        size = len(data)
        header = tar_header(name, size, meta)
        entry = IndexEntry(name, "file", -1, -1, -1, len(header), size, sha256)
        self._pack(entry, (header, data, _padding(size)))
        if sha256 is None:
            self._block_unhashed.append((entry, data))
        if self._block_size >= FRAME_TARGET:
            self._seal_block()
        return entry

    def add_symlink(self, name: str, target: bytes, meta: HeaderFields) -> IndexEntry:
        """Add a symlink member (its target only; nothing is read through it)."""
        header = tar_header(name, 0, meta, tarfile.SYMTYPE, os.fsdecode(target))
        entry = IndexEntry(name, "symlink", -1, -1, -1, len(header), 0, None)
        self._pack(entry, (header,))
        if self._block_size >= FRAME_TARGET:
            self._seal_block()
        return entry

    def _pack(self, entry: IndexEntry, pieces: tuple[bytes | memoryview, ...]) -> None:
        self._claim(entry.name)
        if self._stream is not None:
            raise RuntimeError("a streamed member is open")
        entry.member_offset = self._block_size
        self._block.extend(pieces)
        self._block_size += entry.header_length + entry.size + (-entry.size % BLOCK)
        self._block_entries.append(entry)
        self.entries.append(entry)

    def _seal_block(self) -> None:
        """Hand the open block to the compressing thread (where it is joined, hashed and compressed)."""
        if not self._block:
            return
        job = self._executor.submit(self._compress_block, self._block, [data for _, data in self._block_unhashed])
        self._pending.append((job, self._block_entries, [entry for entry, _ in self._block_unhashed],
                              self._block_size))
        self._pending_bytes += self._block_size
        self._block, self._block_entries, self._block_unhashed, self._block_size = [], [], [], 0
        self._drain(COMPRESS_AHEAD_BYTES)

    def _compress_block(self, pieces: list[bytes | memoryview],
                        unhashed: list[bytes | memoryview]) -> tuple[bytes, list[str]]:
        """The compressing thread's work for one block: its frame, and the digests of the members given."""
        digests = [hashlib.sha256(data).hexdigest() for data in unhashed]
        compressor = getattr(self._thread_compressors, "compressor", None)
        if compressor is None:  # a ZstdCompressor is never used by two threads at once
            compressor = self._thread_compressors.compressor = new_compressor(self._level)
        return compressor.compress(b"".join(pieces)), digests

    def _drain(self, budget: int = 0) -> None:
        """Write compressed frames, in order, until at most ``budget`` tar bytes are still queued."""
        while self._pending and (self._pending_bytes > budget or self._pending[0][0].done()):
            future, entries, unhashed, size = self._pending.popleft()
            self._pending_bytes -= size
            frame, digests = future.result()
            offset = self._end
            self._file.write(frame)
            self._end = offset + len(frame)
            for entry in entries:
                entry.frame_offset, entry.frame_length = offset, len(frame)
            for entry, digest in zip(unhashed, digests, strict=True):
                entry.sha256 = digest

    def _flush_packed(self) -> None:
        self._seal_block()
        self._drain(0)

    def end_frame(self) -> None:
        """Start a new frame for what follows (metadata never shares a frame with payload)."""
        self._flush_packed()

    # -- streamed members -------------------------------------------------------

    def add_file_object(self, name: str, source: io.BufferedIOBase, size: int, meta: HeaderFields,
                        sha256: str) -> IndexEntry:
        """Add a regular file from a spool whose length and digest are already known."""
        self.begin_stream(name, size, meta)
        remaining = size
        while remaining:
            chunk = source.read(min(remaining, 1024 * 1024))
            if not chunk:
                raise OSError(f"spool for {name} ended {remaining} bytes early")
            self.write_chunk(chunk)
            remaining -= len(chunk)
        return self.end_stream(sha256)

    def begin_stream(self, name: str, declared_size: int, meta: HeaderFields) -> None:
        """Start a member, in a frame of its own, whose data will add up to ``declared_size``."""
        if self._stream is not None:
            raise RuntimeError("a streamed member is already open")
        self._flush_packed()
        self._claim(name)
        header = tar_header(name, declared_size, meta)
        offset = self._file.tell()
        total = len(header) + declared_size + (-declared_size % BLOCK)
        writer = self._compressor.stream_writer(self._file, size=total, closefd=False, write_return_read=True)
        writer.write(header)
        self._stream = _Stream(name, declared_size, offset, len(header), writer)

    def write_chunk(self, chunk: bytes | memoryview) -> None:
        """Append data to the member begun with ``begin_stream``."""
        stream = self._stream
        if stream is None or stream.written + len(chunk) > stream.declared:
            raise ValueError("chunk beyond the declared size of the streamed member")
        stream.writer.write(chunk)
        stream.written += len(chunk)

    def end_stream(self, sha256: str) -> IndexEntry:
        """Close the streamed member; its data must have the length given to ``begin_stream``."""
        stream = self._require_stream()
        if stream.written != stream.declared:
            raise ValueError("streamed member is short; call abort_stream")
        stream.writer.write(_padding(stream.declared))
        stream.writer.flush(zstandard.FLUSH_FRAME)
        self._stream = None
        self._end = self._file.tell()
        entry = IndexEntry(stream.name, "file", stream.offset, self._end - stream.offset, 0,
                           stream.header_length, stream.declared, sha256)
        self.entries.append(entry)
        return entry

    def abort_stream(self) -> None:
        """Cut the open member off the file, as if it had never been started."""
        stream = self._require_stream()
        self._stream = None
        self._file.flush()
        self._file.seek(stream.offset)
        self._file.truncate(stream.offset)
        self._end = stream.offset
        self._names.discard(stream.name)

    def _require_stream(self) -> _Stream:
        if self._stream is None:
            raise RuntimeError("no streamed member is open")
        return self._stream

    # -- the end ----------------------------------------------------------------

    def finish(self) -> str:
        """Write the tar end, the index frame, fsync; return the index's SHA-256."""
        return self._seal(hash_file=False)[0]

    def hash_and_sync_payload(self) -> None:
        """Start hashing and syncing what is written so far on a thread of its own; the caller goes on.

        Called once the payload is written (nothing before this point is ever
        rewritten: only an open streamed member is cut back): its bytes are
        hashed and flushed to disk while the metadata members are made, and
        ``finish_and_hash`` has only the rest left to hash and sync.
        """
        self._flush_packed()
        self._file.flush()
        self._head_digest = self._executor_for_sync.submit(_hash_and_sync, self._file.fileno(), self._end)

    def finish_and_hash(self) -> tuple[str, str]:
        """``finish``, and the SHA-256 of the whole bundle file, read back from it while fsync runs.

        Both wait on the kernel with the GIL released, so the file's digest
        costs the run little beyond the fsync it waits for anyway (and less
        after ``hash_and_sync_payload``).
        """
        index_digest, file_digest = self._seal(hash_file=True)
        return index_digest, file_digest or ""

    def _seal(self, hash_file: bool) -> tuple[str, str | None]:
        self._flush_packed()
        self._executor.shutdown()
        end_offset = self._file.tell()
        if end_offset != self._end:  # every frame offset in the index was counted, not asked: they must agree
            raise RuntimeError(f"bundle is {end_offset} bytes, the frames written add up to {self._end}")
        self._file.write(self._compressor.compress(b"\0" * (2 * BLOCK)))
        end = {"frame_offset": end_offset, "frame_length": self._file.tell() - end_offset}
        # Level 3, not 9: on a 2.8 MB index of 10,000 members it is 4x faster and no larger.
        compressed = zstandard.ZstdCompressor(level=3).compress(index_json(self.entries, end))
        digest = hashlib.sha256(compressed).digest()
        trailer = layout.TRAILER.pack(digest, len(compressed), layout.TRAILER_MAGIC)
        payload = compressed + trailer
        self._file.write(layout.SKIPPABLE_HEADER.pack(layout.SKIPPABLE_MAGIC, len(payload)))
        self._file.write(payload)
        self._file.flush()
        fd = self._file.fileno()
        file_digest = None
        if hash_file:
            hasher, hashed = self._head_digest.result() if self._head_digest else (hashlib.sha256(), 0)
            syncing = self._executor_for_sync.submit(os.fsync, fd)
            try:
                _hash_range(fd, hasher, hashed, None)
                file_digest = hasher.hexdigest()
            finally:
                syncing.result()  # the fsync's own error, if any, is the run's
            self._executor_for_sync.shutdown()
        else:
            os.fsync(fd)
        self._file.close()
        return digest.hex(), file_digest

    def close(self) -> None:
        """Stop the compressing threads and close the file (after ``finish`` or on failure)."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._executor_for_sync.shutdown(wait=True)
        if not self._file.closed:
            self._file.close()

    def _claim(self, name: str) -> None:
        if not layout.is_safe_member_name(name):
            raise ValueError(f"unsafe member name {name!r}")
        if name in self._names:
            raise ValueError(f"member {name!r} written twice")
        self._names.add(name)


def _hash_and_sync(fd: int, end: int) -> tuple[hashlib._Hash, int]:
    """The SHA-256 state of a file's bytes up to ``end``, once they are also on disk (fsync)."""
    hasher = hashlib.sha256()
    _hash_range(fd, hasher, 0, end)
    os.fsync(fd)
    return hasher, end


def _hash_range(fd: int, hasher: hashlib._Hash, start: int, end: int | None) -> None:
    """Add a file's bytes from ``start`` to ``end`` (or its end) to ``hasher``, read with pread.

    pread leaves the descriptor's offset alone, so the writing thread can go
    on appending while this runs.
    """
    offset = start
    while end is None or offset < end:
        want = 4 * 1024 * 1024 if end is None else min(4 * 1024 * 1024, end - offset)
        chunk = os.pread(fd, want, offset)
        if not chunk:
            if end is not None:
                raise OSError(f"bundle ended at {offset} bytes while hashing up to {end}")
            return
        hasher.update(chunk)
        offset += len(chunk)


@dataclass
class _Stream:
    name: str
    declared: int
    offset: int
    header_length: int
    writer: zstandard.ZstdCompressionWriter
    written: int = 0
