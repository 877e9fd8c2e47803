"""Checking one zstd frame of a bundle: its length, every member's tar header, data digest and padding.

What a frame's check finds depends only on the frame's bytes and the index,
so it can be made wherever those bytes are at hand: by ``aitrail verify``,
which decompresses every frame itself, or by an analyzer worker that has
just decompressed the frame to parse a member of it (analyzer/engine/coordinator.py hands
each frame to one worker, and verify.Verification takes their findings in
frame order): the same problems, in the same words, either way.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader, Member
from aitrail.collector.bundle.tarread import Header, read_header

if TYPE_CHECKING:
    import tarfile


@dataclass
class FrameFindings:
    """What checking one frame found: its problems, and what the later checks compare.

    ``headers``: for payload and link members, (pax mtime, mode, uid, gid,
    linkname) of the tar header, which files.jsonl is checked against. Small:
    no member's bytes, no TarInfo objects.
    """

    problems: list[str] = field(default_factory=list)
    headers: dict[str, tuple] = field(default_factory=dict)
    links: int = 0
    payload_files: int = 0


def check_frame(frame: list[Member], chunks: Iterable[bytes]) -> FrameFindings:
    """Check a frame (its members, in order) from its decompressed bytes, in chunks from its start.

    A frame that fails to decompress is one problem; reading stops past the
    length the index implies (a decompression bomb is not read to its end).
    """
    findings = FrameFindings()
    spans = [_Span(member) for member in frame]
    position, first = 0, 0
    try:
        for chunk in chunks:
            end = position + len(chunk)
            while first < len(spans) and spans[first].member.span_end <= position:
                first += 1  # members tile the frame: those wholly before this chunk are done
            for span in spans[first:]:
                if span.member.member_offset >= end:
                    break
                span.feed(chunk, position)
            position = end
            if position > frame[-1].span_end:
                break
    except (BundleFormatError, zstandard.ZstdError) as exc:
        names = ", ".join(member.name for member in frame)
        findings.problems.append(f"member {names}: zstd frame is damaged or truncated ({exc})")
        return findings
    if position != frame[-1].span_end:
        held = f"{position}" if position < frame[-1].span_end else f"more than {frame[-1].span_end}"
        findings.problems.append(f"member {frame[-1].name}: its frame holds {held} bytes, "
                                 f"the index implies {frame[-1].span_end}")
    for span in spans:
        _check_span(span, findings)
    return findings


def check_frame_of(reader: BundleReader, frame: list[Member]) -> FrameFindings:
    """Check a frame with the reader: from the frame it holds decompressed, else decompressing it now."""
    data = reader.cached_frame(frame[0])
    return check_frame(frame, [data] if data is not None else reader.iter_decompressed(frame[0]))


class _Span:
    """One member's bytes inside a decompressed frame: header, data (hashed), zero padding."""

    def __init__(self, member: Member):
        self.member = member
        self.head = bytearray()
        self.hasher = hashlib.sha256()
        self.padding_ok = True

    def feed(self, chunk: bytes, start: int) -> None:
        """Take the part of ``chunk`` (which begins at frame position ``start``) that is ours."""
        member, end = self.member, start + len(chunk)
        view = memoryview(chunk)  # slices of a whole frame are not copied
        low, high = max(start, member.member_offset), min(end, member.data_offset)
        if low < high:
            self.head += view[low - start: high - start]
        low, high = max(start, member.data_offset), min(end, member.data_offset + member.size)
        if low < high:
            self.hasher.update(view[low - start: high - start])
        low, high = max(start, member.data_offset + member.size), min(end, member.span_end)
        if low < high and any(view[low - start: high - start]):
            self.padding_ok = False


def _check_span(span: _Span, findings: FrameFindings) -> None:
    member, problems = span.member, findings.problems
    if not span.padding_ok:
        problems.append(f"member {member.name}: non-zero bytes in the tar padding")
    info = _parse_header(bytes(span.head))
    if info is None or info.name != member.name:
        problems.append(f"member {member.name}: tar header does not name this member")
        return
    if member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR)):
        findings.headers[member.name] = (info.pax_headers.get("mtime", ""), info.mode, info.uid, info.gid,
                                         info.linkname)
    if member.type == "symlink":
        findings.links += 1
        if not info.issym():
            problems.append(f"member {member.name}: index says symlink, tar header disagrees")
        return
    if not info.isreg() or info.size != member.size:
        problems.append(f"member {member.name}: tar header type or size disagrees with the index")
    digest = span.hasher.hexdigest()
    if digest != member.sha256:
        problems.append(f"member {member.name}: SHA-256 {digest} does not match the index")
    if member.name.startswith(layout.PAYLOAD_DIR):
        findings.payload_files += 1


def _parse_header(head: bytes) -> Header | tarfile.TarInfo | None:
    """A member's header: read directly for the shapes aitrail writes, else by tarfile (tarread.py)."""
    return read_header(head) or tarfile_header(head)


def tarfile_header(head: bytes) -> tarfile.TarInfo | None:
    """A member's header as tarfile reads it; None where it refuses the bytes."""
    import tarfile  # here: only a header of a shape aitrail does not write comes this far (tarread.py)

    try:
        with tarfile.open(fileobj=io.BytesIO(head + b"\0" * 1024), mode="r:", encoding="utf-8",
                          errors="surrogateescape") as archive:
            return archive.next()
    except (tarfile.TarError, UnicodeError, ValueError, OverflowError, EOFError):  # untrusted header bytes
        return None
