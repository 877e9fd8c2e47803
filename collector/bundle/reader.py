"""Random access to a bundle through its index (used by verify and the analyzer).

The reader trusts nothing: the trailer, the index digest, member names and
frame bounds are all checked, and a problem raises BundleFormatError naming
what is wrong. Whether members match their recorded digests is verify's job.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import BinaryIO, Iterator

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle.layout import IndexEntry

CHUNK = 1024 * 1024
CACHE_LIMIT = 32 * 1024 * 1024  # members up to this size are read through the frame cache
FRAME_LIMIT = 2 * CACHE_LIMIT


class BundleFormatError(ValueError):
    """The file is not a complete, well-formed aitrail bundle."""


Member = IndexEntry  # what the reader calls an index entry


class BundleReader:
    """Opens a bundle read-only and serves members by name."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        try:
            self.file_size = os.fstat(self._file.fileno()).st_size
            self.index, self.index_offset, self.index_sha256 = self._read_index()
            self.members = self._parse_members()
        except Exception:
            self._file.close()
            raise
        self._by_name = {member.name: member for member in self.members}
        self._cached_frame: tuple[int, bytes] | None = None  # the last packed frame read whole

    def __enter__(self) -> "BundleReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    # -- index ------------------------------------------------------------------

    def _read_index(self) -> tuple[dict, int, str]:
        trailer_size = layout.TRAILER.size
        if self.file_size < trailer_size + layout.SKIPPABLE_HEADER.size:
            raise BundleFormatError("incomplete: file too short to hold an index (cut short?)")
        self._file.seek(self.file_size - trailer_size)
        digest, length, magic = layout.TRAILER.unpack(self._file.read(trailer_size))
        if magic != layout.TRAILER_MAGIC:
            raise BundleFormatError("incomplete: no index trailer at the end of the file (bundle cut short?)")
        frame_start = self.file_size - trailer_size - length - layout.SKIPPABLE_HEADER.size
        if length <= 0 or frame_start < 0:
            raise BundleFormatError("index: trailer gives an impossible index length")
        self._file.seek(frame_start)
        frame_magic, frame_size = layout.SKIPPABLE_HEADER.unpack(self._file.read(layout.SKIPPABLE_HEADER.size))
        if frame_magic != layout.SKIPPABLE_MAGIC or frame_size != length + trailer_size:
            raise BundleFormatError("index: skippable frame header does not match the trailer")
        compressed = self._file.read(length)
        if hashlib.sha256(compressed).digest() != digest:
            raise BundleFormatError("index: SHA-256 of the index does not match its trailer")
        try:
            index = json.loads(zstandard.ZstdDecompressor().decompress(compressed))
        except (zstandard.ZstdError, ValueError) as exc:
            raise BundleFormatError(f"index: cannot be decoded: {exc}") from exc
        if index.get("format") != layout.FORMAT_NAME or index.get("version") != layout.FORMAT_VERSION:
            raise BundleFormatError("index: not an aitrail bundle index of a known version")
        return index, frame_start, digest.hex()

    def _parse_members(self) -> list[Member]:
        """Members in order; frames must tile the file, and members tile each frame."""
        members: list[Member] = []
        frame_start, frame_length, expected_member_offset = 0, 0, 0
        seen: set[str] = set()
        try:
            for record in self.index["members"]:
                member = Member(**record)
                if not layout.is_safe_member_name(member.name):
                    raise BundleFormatError(f"index: unsafe member name {member.name!r}")
                if member.name in seen:
                    raise BundleFormatError(f"index: member {member.name!r} listed twice")
                if member.type not in ("file", "symlink") or min(member.size, member.header_length) < 0:
                    raise BundleFormatError(f"index: member {member.name!r} has a malformed entry")
                if members and member.frame_offset == frame_start:
                    if member.frame_length != frame_length or member.member_offset != expected_member_offset:
                        raise BundleFormatError(f"index: {member.name!r} does not follow the previous member in its frame")
                elif member.frame_offset != frame_start + frame_length or member.member_offset != 0 \
                        or member.frame_length <= 0:
                    raise BundleFormatError(f"index: frame of {member.name!r} is not where the previous one ended")
                frame_start, frame_length = member.frame_offset, member.frame_length
                expected_member_offset = member.span_end
                seen.add(member.name)
                members.append(member)
            end = self.index["end"]
            if end["frame_offset"] != frame_start + frame_length or end["frame_offset"] + end["frame_length"] != self.index_offset:
                raise BundleFormatError("index: the frames do not tile the file up to the index")
        except (KeyError, TypeError) as exc:
            raise BundleFormatError(f"index: malformed member record ({exc})") from exc
        return members

    def frames(self) -> list[list[Member]]:
        """Members grouped by the frame that holds them, in file order."""
        groups: list[list[Member]] = []
        for member in self.members:
            if groups and groups[-1][0].frame_offset == member.frame_offset:
                groups[-1].append(member)
            else:
                groups.append([member])
        return groups

    # -- members ------------------------------------------------------------------

    def member(self, name: str) -> Member:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no member {name!r} in the bundle") from None

    def names(self) -> list[str]:
        return [member.name for member in self.members]

    def read_frame(self, member: Member) -> bytes:
        self._file.seek(member.frame_offset)
        frame = self._file.read(member.frame_length)
        if len(frame) != member.frame_length:
            raise BundleFormatError(f"{member.name}: frame runs past the end of the file")
        return frame

    def iter_decompressed(self, member: Member) -> Iterator[bytes]:
        """The whole decompressed frame holding ``member``, in chunks of at most 1 MiB.

        Output is bounded per chunk whatever the compression ratio (a 3 GiB run
        of zeros is a few kilobytes of frame). A damaged frame raises
        zstandard.ZstdError (the frames carry content checksums); a frame that
        ends early yields fewer bytes, which iter_data and verify detect
        against the index.
        """
        source = _RangeReader(self._file, member.frame_offset, member.frame_length)
        yield from zstandard.ZstdDecompressor().read_to_iter(source, read_size=CHUNK, write_size=CHUNK)
        if source.short:
            raise BundleFormatError(f"{member.name}: frame runs past the end of the file")
        if source.remaining:
            raise BundleFormatError(f"{member.name}: bytes after the end of its zstd frame")

    def iter_data(self, member: Member) -> Iterator[bytes]:
        """The member's data only, in chunks (no header, no padding, no other members).

        The frame of a member up to CACHE_LIMIT is decompressed whole and kept
        until another frame is read, so reading the members of a packed frame in
        order costs one decompression; larger members are streamed.
        """
        if member.size <= CACHE_LIMIT:
            frame = self._packed_frame(member)
            if len(frame) < member.data_offset + member.size:
                raise BundleFormatError(f"{member.name}: data shorter than its index entry")
            yield frame[member.data_offset: member.data_offset + member.size]
            return
        skip, remaining = member.data_offset, member.size
        for chunk in self.iter_decompressed(member):
            if skip:
                cut = min(skip, len(chunk))
                chunk, skip = chunk[cut:], skip - cut
            if remaining and chunk:
                piece = chunk[:remaining]
                remaining -= len(piece)
                yield piece
            if not remaining and not skip:
                break
        if remaining:
            raise BundleFormatError(f"{member.name}: data shorter than its index entry")

    def _packed_frame(self, member: Member) -> bytes:
        if self._cached_frame is None or self._cached_frame[0] != member.frame_offset:
            chunks, total = [], 0
            for chunk in self.iter_decompressed(member):
                total += len(chunk)
                if total > FRAME_LIMIT:  # no aitrail writer makes such a frame: refuse a decompression bomb
                    raise BundleFormatError(f"{member.name}: its frame decompresses to more than {FRAME_LIMIT} bytes")
                chunks.append(chunk)
            self._cached_frame = (member.frame_offset, b"".join(chunks))
        return self._cached_frame[1]

    def read_data(self, name: str) -> bytes:
        return b"".join(self.iter_data(self.member(name)))


class _RangeReader:
    """A file-like view of one frame: read() never goes past the frame's end."""

    def __init__(self, handle: BinaryIO, offset: int, length: int):
        self._handle = handle
        self._position = offset
        self.remaining = length
        self.short = False

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.remaining:
            size = self.remaining
        if size == 0:
            return b""
        self._handle.seek(self._position)
        data = self._handle.read(size)
        self._position += len(data)
        self.remaining -= len(data)
        if len(data) < size:
            self.short = True
            self.remaining = 0
        return data
