"""Write a bundle: tar members as independent zstd frames, then the index frame.

Every member (its pax header, data and padding) is one zstd frame, so the
analyzer can decompress any member alone and ``tar --zstd`` still reads the
concatenation as one archive. A member whose length is only known after it is
read is streamed with the length ``lstat`` gave; if the read ends at another
length, the frame is cut off the output file (truncated back to where it
began) and the caller writes the member again from a spool with the true
length. Nothing is ever padded.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass

import zstandard

from aitrail.collector.bundle import layout

BLOCK = 512


@dataclass(frozen=True)
class TarMeta:
    """What the tar header carries about a source file."""

    mode: int
    uid: int
    gid: int
    mtime_ns: int
    atime_ns: int | None = None
    ctime_ns: int | None = None


@dataclass
class IndexEntry:
    name: str
    type: str  # file | symlink
    frame_offset: int
    frame_length: int
    header_length: int
    size: int
    sha256: str | None

    def as_record(self) -> dict:
        return self.__dict__.copy()


def _ns_text(value: int) -> str:
    seconds, nanos = divmod(value, 1_000_000_000)
    return f"{seconds}.{nanos:09d}"


def tar_header(name: str, size: int, meta: TarMeta, kind: int = tarfile.REGTYPE, linkname: str = "") -> bytes:
    """A pax tar header; times keep full ns precision in pax records."""
    info = tarfile.TarInfo(name)
    info.size = size if kind == tarfile.REGTYPE else 0
    info.type = kind
    info.linkname = linkname
    info.mode = meta.mode & 0o7777
    info.uid, info.gid = meta.uid, meta.gid
    info.uname = info.gname = ""
    info.mtime = max(0, meta.mtime_ns // 1_000_000_000)
    pax = {"mtime": _ns_text(meta.mtime_ns)}
    if meta.atime_ns is not None:
        pax["atime"] = _ns_text(meta.atime_ns)
    if meta.ctime_ns is not None:
        pax["ctime"] = _ns_text(meta.ctime_ns)
    info.pax_headers = pax
    return info.tobuf(tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")


def _padding(size: int) -> bytes:
    return b"\0" * (-size % BLOCK)


class BundleWriter:
    """Sequential writer of one bundle file (opened exclusively; never overwrites)."""

    def __init__(self, path: str, level: int = 3):
        self.path = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        self._file = os.fdopen(fd, "w+b", buffering=1024 * 1024)
        self._compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
        self.entries: list[IndexEntry] = []
        self._names: set[str] = set()
        self._stream: _Stream | None = None

    # -- whole members ----------------------------------------------------------

    def add_bytes(self, name: str, data: bytes | memoryview, meta: TarMeta, sha256: str | None = None) -> IndexEntry:
        """Add a regular file whose bytes are in memory."""
        self._claim(name)
        header = tar_header(name, len(data), meta)
        digest = sha256 or hashlib.sha256(data).hexdigest()
        offset = self._file.tell()
        compressor = self._compressor.compressobj(size=len(header) + len(data) + (-len(data) % BLOCK))
        self._file.write(compressor.compress(header))
        self._file.write(compressor.compress(data))
        self._file.write(compressor.compress(_padding(len(data))))
        self._file.write(compressor.flush())
        entry = IndexEntry(name, "file", offset, self._file.tell() - offset, len(header), len(data), digest)
        self.entries.append(entry)
        return entry

    def add_file_object(self, name: str, source: io.BufferedIOBase, size: int, meta: TarMeta, sha256: str) -> IndexEntry:
        """Add a regular file from a spool whose length and digest are already known."""
        self.begin_stream(name, size, meta)
        remaining = size
        while remaining:
            chunk = source.read(min(remaining, 1024 * 1024))
            if not chunk:
                raise IOError(f"spool for {name} ended {remaining} bytes early")
            self.write_chunk(chunk)
            remaining -= len(chunk)
        return self.end_stream(sha256)

    def add_symlink(self, name: str, target: bytes, meta: TarMeta) -> IndexEntry:
        self._claim(name)
        header = tar_header(name, 0, meta, tarfile.SYMTYPE, os.fsdecode(target))
        offset = self._file.tell()
        self._file.write(self._compressor.compress(header))
        entry = IndexEntry(name, "symlink", offset, self._file.tell() - offset, len(header), 0, None)
        self.entries.append(entry)
        return entry

    # -- streamed members -------------------------------------------------------

    def begin_stream(self, name: str, declared_size: int, meta: TarMeta) -> None:
        """Start a member whose data will arrive in chunks adding up to ``declared_size``."""
        if self._stream is not None:
            raise RuntimeError("a streamed member is already open")
        self._claim(name)
        header = tar_header(name, declared_size, meta)
        offset = self._file.tell()
        writer = self._compressor.stream_writer(self._file, size=len(header) + declared_size + (-declared_size % BLOCK), closefd=False, write_return_read=True)
        writer.write(header)
        self._stream = _Stream(name, declared_size, offset, len(header), writer)

    def write_chunk(self, chunk: bytes | memoryview) -> None:
        stream = self._stream
        if stream is None or stream.written + len(chunk) > stream.declared:
            raise ValueError("chunk beyond the declared size of the streamed member")
        stream.writer.write(chunk)
        stream.written += len(chunk)

    def end_stream(self, sha256: str) -> IndexEntry:
        stream = self._require_stream()
        if stream.written != stream.declared:
            raise ValueError("streamed member is short; call abort_stream")
        stream.writer.write(_padding(stream.declared))
        stream.writer.flush(zstandard.FLUSH_FRAME)
        self._stream = None
        entry = IndexEntry(stream.name, "file", stream.offset, self._file.tell() - stream.offset,
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
        self._names.discard(stream.name)

    def _require_stream(self) -> "_Stream":
        if self._stream is None:
            raise RuntimeError("no streamed member is open")
        return self._stream

    # -- the end ----------------------------------------------------------------

    def finish(self) -> str:
        """Write the tar end, the index frame, fsync; return the index's SHA-256."""
        end_offset = self._file.tell()
        self._file.write(self._compressor.compress(b"\0" * (2 * BLOCK)))
        index = {
            "format": layout.FORMAT_NAME,
            "version": layout.FORMAT_VERSION,
            "members": [entry.as_record() for entry in self.entries],
            "end": {"frame_offset": end_offset, "frame_length": self._file.tell() - end_offset},
        }
        compressed = zstandard.ZstdCompressor(level=9).compress(
            json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
        )
        digest = hashlib.sha256(compressed).digest()
        trailer = layout.TRAILER.pack(digest, len(compressed), layout.TRAILER_MAGIC)
        payload = compressed + trailer
        self._file.write(layout.SKIPPABLE_HEADER.pack(layout.SKIPPABLE_MAGIC, len(payload)))
        self._file.write(payload)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        return digest.hex()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def _claim(self, name: str) -> None:
        if not layout.is_safe_member_name(name):
            raise ValueError(f"unsafe member name {name!r}")
        if name in self._names:
            raise ValueError(f"member {name!r} written twice")
        self._names.add(name)


@dataclass
class _Stream:
    name: str
    declared: int
    offset: int
    header_length: int
    writer: zstandard.ZstdCompressionWriter
    written: int = 0
