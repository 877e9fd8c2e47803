"""Random access to a bundle through its index (used by verify and the analyzer).

The reader trusts nothing: the trailer, the index digest, member names and
frame bounds are all checked, and a problem raises BundleFormatError naming
what is wrong. Whether members match their recorded digests is verify's job.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from typing import BinaryIO

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle.layout import IndexEntry

CHUNK = 1024 * 1024
CACHE_LIMIT = 32 * 1024 * 1024  # members up to this size are read through the frame cache
FRAME_LIMIT = 2 * CACHE_LIMIT
# the frame read before the last is kept too when it is this small: reads that alternate between two
# frames (collection.json's and the catalog's) decompress each once, and the second slot stays small
SECOND_SLOT_LIMIT = 4 * 1024 * 1024


class BundleFormatError(ValueError):
    """The file is not a complete, well-formed aitrail bundle."""


def decode_index(compressed: bytes) -> dict:
    """The index JSON, decompressed under INDEX_MAX and checked against its schema.

    Members become IndexEntry objects as the JSON is decoded (object_hook), so
    the decoded dicts never all exist at once; the count of JSON values is
    bounded before decoding, so no index can expand into unbounded objects.
    """
    text = _decompress_capped(compressed, layout.INDEX_MAX, "index")
    values = text.count(b",") + text.count(b"[") + text.count(b"{")
    if values > layout.INDEX_VALUES_PER_MEMBER * layout.MAX_MEMBERS:
        raise BundleFormatError(f"index: {values} JSON values, more than {layout.MAX_MEMBERS} members can have")
    ints: dict[int, int] = {}
    try:
        index = json.loads(text, object_hook=_index_object, parse_float=_no_float, parse_constant=_no_float,
                           parse_int=lambda digits: _shared_int(ints, digits))
    except (ValueError, RecursionError) as exc:
        raise BundleFormatError(f"index: cannot be decoded: {exc}") from exc
    del text
    return _checked_index(index)


def _decompress_capped(compressed: bytes, limit: int, what: str) -> bytearray:
    """Decompress a whole zstd stream, refusing it as soon as it passes ``limit`` bytes."""
    out = bytearray()
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)
        while chunk := reader.read(CHUNK):
            out += chunk
            if len(out) > limit:
                raise BundleFormatError(f"{what}: decompresses to more than the limit of {limit} bytes")
    except zstandard.ZstdError as exc:
        raise BundleFormatError(f"{what}: cannot be decompressed: {exc}") from exc
    return out  # not bytes(out): no second copy of up to INDEX_MAX bytes


def _shared_int(ints: dict[int, int], digits: str) -> int:
    """One int object per distinct value (about 100 bytes less per member).

    Members of a frame share its offset and length, and most share a header length.
    """
    if len(digits) > 40:  # no offset has more than 20 digits; do not convert 4000-digit numbers
        raise ValueError(f"number {digits[:40]!r}... is too long")
    value = int(digits)
    return ints.setdefault(value, value)


def _no_float(text: str):
    raise ValueError(f"unexpected number {text[:40]!r}")


_MEMBER_KEYS = frozenset(field.name for field in dataclasses.fields(IndexEntry))
_INT_FIELDS = ("frame_offset", "frame_length", "member_offset", "header_length", "size")


def _index_object(record: dict):
    """object_hook: a dict with exactly the member keys becomes a checked IndexEntry."""
    if record.keys() != _MEMBER_KEYS:
        return record
    name = record["name"]
    if not isinstance(name, str) or not layout.is_safe_member_name(name):
        raise BundleFormatError(f"index: unsafe member name {name!r}"[:300])
    for key in _INT_FIELDS:
        value = record[key]
        if type(value) is not int or not 0 <= value < 2**63:
            raise BundleFormatError(f"index: member {name!r} has {key} {value!r}, not an offset or length"[:300])
    if record["header_length"] > layout.TAR_HEADER_MAX:
        raise BundleFormatError(f"index: member {name!r} has a {record['header_length']}-byte tar header, over the "
                                f"limit of {layout.TAR_HEADER_MAX}"[:300])
    digest = record["sha256"]
    if record["type"] not in ("file", "symlink") or not (
            digest is None or (isinstance(digest, str) and _is_sha256(digest))):
        raise BundleFormatError(f"index: member {name!r} has a malformed entry"[:300])
    return IndexEntry(**record)


def _is_sha256(text: str) -> bool:
    return layout.SHA256_HEX.fullmatch(text) is not None


def _checked_index(index) -> dict:
    if not isinstance(index, dict) or index.get("format") != layout.FORMAT_NAME \
            or index.get("version") != layout.FORMAT_VERSION:
        raise BundleFormatError("index: not an aitrail bundle index of a known version")
    members, end = index.get("members"), index.get("end")
    if not isinstance(members, list) or not all(isinstance(member, IndexEntry) for member in members):
        raise BundleFormatError("index: 'members' is not a list of member records "
                                f"(each with exactly the keys {', '.join(sorted(_MEMBER_KEYS))})")
    if len(members) > layout.MAX_MEMBERS:
        raise BundleFormatError(f"index: {len(members)} members, over the limit of {layout.MAX_MEMBERS}")
    if not isinstance(end, dict) or any(type(end.get(key)) is not int or end[key] < 0
                                        for key in ("frame_offset", "frame_length")):
        raise BundleFormatError("index: 'end' is not {frame_offset, frame_length} as integers")
    return index


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
        self._previous_frame: tuple[int, bytes] | None = None  # the one before it, if small (SECOND_SLOT_LIMIT)
        self._frames_by_offset: dict[int, list[Member]] | None = None
        # called with (frame offset, bytes) each time a frame is decompressed whole into the cache: the
        # analyzer's workers verify their frames from those bytes instead of decompressing them again
        self.on_frame: Callable[[int, bytes], None] | None = None

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the bundle file."""
        self._file.close()

    def reopen(self) -> None:
        """Open the file again: a forked worker must not share its parent's file offset."""
        self._file = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        self._cached_frame = self._previous_frame = None

    # -- index ------------------------------------------------------------------

    def _read_index(self) -> tuple[dict, int, str]:
        trailer_size = layout.TRAILER.size
        if self.file_size < trailer_size + layout.SKIPPABLE_HEADER.size:
            self._refuse_without_trailer()
        self._file.seek(self.file_size - trailer_size)
        digest, length, magic = layout.TRAILER.unpack(self._file.read(trailer_size))
        if magic != layout.TRAILER_MAGIC:
            self._refuse_without_trailer()
        frame_start = self.file_size - trailer_size - length - layout.SKIPPABLE_HEADER.size
        if length <= 0 or frame_start < 0:
            raise BundleFormatError("index: trailer gives an impossible index length")
        if length > layout.INDEX_COMPRESSED_MAX:
            raise BundleFormatError(f"index: {length} bytes compressed, over the limit of "
                                    f"{layout.INDEX_COMPRESSED_MAX}")
        self._file.seek(frame_start)
        frame_magic, frame_size = layout.SKIPPABLE_HEADER.unpack(self._file.read(layout.SKIPPABLE_HEADER.size))
        if frame_magic != layout.SKIPPABLE_MAGIC or frame_size != length + trailer_size:
            raise BundleFormatError("index: skippable frame header does not match the trailer")
        compressed = self._file.read(length)
        if hashlib.sha256(compressed).digest() != digest:
            raise BundleFormatError("index: SHA-256 of the index does not match its trailer")
        index = decode_index(compressed)
        return index, frame_start, digest.hex()

    def _refuse_without_trailer(self) -> None:
        """Say why there is no trailer at the end: not a bundle, data appended, or cut short."""
        self._file.seek(0)
        start = self._file.read(len(layout.ZSTD_FRAME_MAGIC))
        if not start:
            raise BundleFormatError("incomplete: the file is empty (bundle cut short?)")
        if start != layout.ZSTD_FRAME_MAGIC[:len(start)]:
            raise BundleFormatError("not an aitrail bundle: the file does not start with a zstd frame")
        extra = self._bytes_after_a_trailer()
        if extra is not None:
            raise BundleFormatError(f"data after the end of the bundle: {extra} byte(s) follow the index trailer")
        if not self._starts_like_a_bundle():
            raise BundleFormatError("not an aitrail bundle: a zstd stream with neither aitrail's index trailer nor "
                                    "its member names (a plain tar --zstd archive?)")
        raise BundleFormatError("incomplete: no index trailer at the end of the file (bundle cut short?)")

    def _starts_like_a_bundle(self) -> bool:
        """Whether the first tar header names an aitrail member (data/, links/, aitrail/): a cut bundle does."""
        self._file.seek(0)
        head = self._file.read(64 * 1024)
        try:
            text = zstandard.ZstdDecompressor().decompressobj().decompress(head)[:4096]
        except zstandard.ZstdError:
            return True  # not even its first frame decodes: say cut short or damaged, not "another format"
        if len(text) < 512:  # not one whole tar header decoded: too little to say it is another format
            return True
        return any(marker in text for marker in (b"data/", b"links/", b"aitrail/"))

    def _bytes_after_a_trailer(self) -> int | None:
        """Bytes after the last index trailer found in the file's tail window, or None."""
        window = min(self.file_size, layout.TAIL_WINDOW)
        self._file.seek(self.file_size - window)
        tail = self._file.read(window)
        position = tail.rfind(layout.TRAILER_MAGIC)
        while position >= 0:
            trailer_start = position + len(layout.TRAILER_MAGIC) - layout.TRAILER.size
            if trailer_start >= 0 and self._is_index_trailer(self.file_size - window + trailer_start):
                return window - position - len(layout.TRAILER_MAGIC)
            position = tail.rfind(layout.TRAILER_MAGIC, 0, position)
        return None

    def _is_index_trailer(self, offset: int) -> bool:
        self._file.seek(offset)
        _, length, _ = layout.TRAILER.unpack(self._file.read(layout.TRAILER.size))
        frame_start = offset - length - layout.SKIPPABLE_HEADER.size
        if frame_start < 0 or length > layout.INDEX_COMPRESSED_MAX:
            return False
        self._file.seek(frame_start)
        magic, size = layout.SKIPPABLE_HEADER.unpack(self._file.read(layout.SKIPPABLE_HEADER.size))
        return magic == layout.SKIPPABLE_MAGIC and size == length + layout.TRAILER.size

    def _parse_members(self) -> list[Member]:
        """Members in order; frames must tile the file, and members tile each frame."""
        members: list[Member] = []
        self._frame_spans: dict[int, int] = {}  # frame offset -> decompressed size the index implies
        frame_start, frame_length, expected_member_offset = 0, 0, 0
        seen: set[str] = set()
        for member in self.index["members"]:
            if member.name in seen:
                raise BundleFormatError(f"index: member {member.name!r} listed twice")
            if members and member.frame_offset == frame_start:
                if member.frame_length != frame_length or member.member_offset != expected_member_offset:
                    raise BundleFormatError(f"index: {member.name!r} does not follow the previous member in its frame")
            elif member.frame_offset != frame_start + frame_length or member.member_offset != 0 \
                    or member.frame_length <= 0:
                raise BundleFormatError(f"index: frame of {member.name!r} is not where the previous one ended")
            frame_start, frame_length = member.frame_offset, member.frame_length
            expected_member_offset = member.span_end
            self._frame_spans[frame_start] = expected_member_offset
            seen.add(member.name)
            members.append(member)
        end = self.index["end"]
        if (end["frame_offset"] != frame_start + frame_length
                or end["frame_offset"] + end["frame_length"] != self.index_offset):
            raise BundleFormatError("index: the frames do not tile the file up to the index")
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

    def frame_at(self, offset: int) -> list[Member]:
        """The members of the frame that starts at ``offset``, in order (KeyError for no such frame)."""
        if self._frames_by_offset is None:
            self._frames_by_offset = {frame[0].frame_offset: frame for frame in self.frames()}
        return self._frames_by_offset[offset]

    # -- members ------------------------------------------------------------------

    def member(self, name: str) -> Member:
        """The index entry of a member; KeyError naming it when the bundle has none."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no member {name!r} in the bundle") from None

    def get(self, name: str) -> Member | None:
        """The member called ``name``, or None."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """Every member name, in archive order."""
        return [member.name for member in self.members]

    def read_frame(self, member: Member) -> bytes:
        """The compressed frame that holds ``member``, exactly as stored."""
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
        until another frame is read (and one read after it, if it is small:
        SECOND_SLOT_LIMIT), so reading the members of a packed frame in order
        costs one decompression; larger members, and the members of a
        frame larger than FRAME_LIMIT (the collector packs a large files.jsonl
        with collection.json), are streamed.
        """
        if member.size <= CACHE_LIMIT and self._frame_spans.get(member.frame_offset, 0) <= FRAME_LIMIT:
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
        cached, offset = self._cached_frame, member.frame_offset
        if cached is not None and cached[0] == offset:
            return cached[1]
        previous = self._previous_frame
        if previous is not None and previous[0] == offset:
            self._cached_frame, self._previous_frame = previous, _small(cached)
            return previous[1]
        chunks, total = [], 0
        for chunk in self.iter_decompressed(member):
            total += len(chunk)
            if total > FRAME_LIMIT:  # no aitrail writer makes such a frame: refuse a decompression bomb
                raise BundleFormatError(f"{member.name}: its frame decompresses to more than {FRAME_LIMIT} bytes")
            chunks.append(chunk)
        self._cached_frame, self._previous_frame = (offset, b"".join(chunks)), _small(cached)
        if self.on_frame is not None:
            self.on_frame(*self._cached_frame)
        return self._cached_frame[1]

    def cached_frame(self, member: Member) -> bytes | None:
        """The decompressed frame holding ``member`` if this reader keeps it (read whole, no error)."""
        for kept in (self._cached_frame, self._previous_frame):
            if kept is not None and kept[0] == member.frame_offset:
                return kept[1]
        return None

    def read_data(self, name: str) -> bytes:
        """A member's data, whole (for members known to be small)."""
        return b"".join(self.iter_data(self.member(name)))


def _small(frame: tuple[int, bytes] | None) -> tuple[int, bytes] | None:
    """``frame`` if it may stay in the second slot, else None."""
    return frame if frame is not None and len(frame[1]) <= SECOND_SLOT_LIMIT else None


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
