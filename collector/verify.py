"""``aitrail verify``: prove a bundle whole, or name everything that is wrong.

Checks, in order: the sidecar ``<bundle>.sha256`` (when present); the index
trailer and index digest; that the frames tile the file; the structure
(verify_structure.py: metadata limits, tag manifest, collection.json schema,
signature policy); every member frame
(zstd checksum, tar header against the index, data digest, zero padding);
the tar end; the payload manifest against every payload member;
files.jsonl against the members it names, the tar headers' metadata and the
counts in collection.json. Every problem is collected; nothing stops at the
first. Memory is bounded: metadata members are streamed or read under their
limits (layout.py), and per member only a small header tuple is kept.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle import vocabulary as oc
from aitrail.collector.bundle.metadata import COUNT_KEYS, iter_lines, iter_records, link_target
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader, Member
from aitrail.collector.bundle.tarheader import ns_text
from aitrail.collector.bundle.tarread import Header, read_header
from aitrail.collector.verify_structure import REQUIRED_TAG_FILES, SignaturePolicy, check_structure, parse_manifest_line

__all__ = ["REQUIRED_TAG_FILES", "SignaturePolicy", "VerifyReport", "verify"]


@dataclass
class VerifyReport:
    """Everything verify found: counts, the signature's state and every problem."""
    path: str
    problems: list[str] = field(default_factory=list)
    members: int = 0
    payload_files: int = 0
    links: int = 0
    signature: str = "absent"
    signed: bool = False
    pinned: bool = False
    warnings: list[str] = field(default_factory=list)
    bundle_sha256: str | None = None
    counts: dict | None = None

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


@dataclass
class _Seen:
    """What reading the members established (kept small: no member's bytes, no TarInfo objects)."""

    headers: dict[str, tuple] = field(default_factory=dict)  # name -> (pax mtime, mode, uid, gid, linkname)
    collection: dict | None = None


class RateLimiter:
    """True at most once per ``interval`` seconds (the clock is injectable, for tests)."""

    def __init__(self, interval: float = 1.0, clock: Callable[[], float] = time.monotonic):
        self.interval, self.clock = interval, clock
        self._last = clock()

    def ready(self) -> bool:
        now = self.clock()
        if now - self._last < self.interval:
            return False
        self._last = now
        return True


def verify(path: str, public_key_path: str | None = None, require_signature: bool = False,
           progress: Callable[[str], None] | None = None, reader: BundleReader | None = None,
           bundle_sha256: str | None = None) -> VerifyReport:
    """Check a bundle whole; every problem is named in the report, none raises.

    ``reader``: an already opened reader of ``path`` (the analyzer's), used and
    left open; otherwise the bundle is opened here. ``progress`` is called with
    a short line at most once a second. ``bundle_sha256``: the file's digest
    when the caller has just computed it (the file is then not read twice).
    """
    report = VerifyReport(path)
    report.bundle_sha256 = _check_sidecar(path, report, bundle_sha256)
    if reader is not None:
        _verify_opened(reader, report, SignaturePolicy(public_key_path, require_signature), progress)
        return report
    try:
        reader = BundleReader(path)
    except (BundleFormatError, OSError) as exc:
        report.problems.append(str(exc))
        return report
    with reader:
        _verify_opened(reader, report, SignaturePolicy(public_key_path, require_signature), progress)
    return report


def _verify_opened(reader: BundleReader, report: VerifyReport, policy: SignaturePolicy,
                   progress: Callable[[str], None] | None) -> None:
    report.members = len(reader.members)
    structure = check_structure(reader, policy)
    report.problems += structure.problems
    report.signature, report.signed, report.pinned = structure.signature, structure.signed, structure.pinned
    report.warnings += structure.warnings
    seen = _read_members(reader, report, progress)
    seen.collection = structure.collection
    _check_end(reader, report)
    _check_payload_manifest(reader, report)
    _check_files_jsonl(reader, seen, report)


def sha256_of_file(path: str) -> str:
    """The SHA-256 of a whole file (a bundle), read in 4 MiB blocks."""
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(4 * 1024 * 1024), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def _check_sidecar(path: str, report: VerifyReport, digest: str | None = None) -> str | None:
    if digest is None:
        try:
            digest = sha256_of_file(path)
        except OSError as exc:
            report.problems.append(f"bundle file: cannot be read: {exc}")
            return None
    sidecar = path + ".sha256"
    if os.path.exists(sidecar):
        with open(sidecar, encoding="utf-8", errors="replace") as handle:
            recorded = handle.read(4096).split()  # '<sha256>  <name>': a hostile sidecar is not read whole
        if not recorded or recorded[0].lower() != digest:
            report.problems.append(f"bundle file: SHA-256 {digest} does not match {os.path.basename(sidecar)}")
    return digest


# -- members --------------------------------------------------------------------


def _read_members(reader: BundleReader, report: VerifyReport, progress: Callable[[str], None] | None) -> _Seen:
    seen = _Seen()
    limiter = RateLimiter()
    frames = reader.frames()
    for number, frame in enumerate(frames, 1):
        try:
            _read_frame(reader, frame, seen, report)
        except (BundleFormatError, zstandard.ZstdError) as exc:
            names = ", ".join(member.name for member in frame)
            report.problems.append(f"member {names}: zstd frame is damaged or truncated ({exc})")
        if progress is not None and limiter.ready():
            progress(f"verified {number}/{len(frames)} frames")
    return seen


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
        low, high = max(start, member.member_offset), min(end, member.data_offset)
        if low < high:
            self.head += chunk[low - start: high - start]
        low, high = max(start, member.data_offset), min(end, member.data_offset + member.size)
        if low < high:
            self.hasher.update(chunk[low - start: high - start])
        low, high = max(start, member.data_offset + member.size), min(end, member.span_end)
        if low < high and any(chunk[low - start: high - start]):
            self.padding_ok = False


def _read_frame(reader: BundleReader, frame: list[Member], seen: _Seen, report: VerifyReport) -> None:
    spans = [_Span(member) for member in frame]
    position, first = 0, 0
    for chunk in reader.iter_decompressed(frame[0]):
        end = position + len(chunk)
        while first < len(spans) and spans[first].member.span_end <= position:
            first += 1  # members tile the frame: those wholly before this chunk are done
        for span in spans[first:]:
            if span.member.member_offset >= end:
                break
            span.feed(chunk, position)
        position = end
        if position > frame[-1].span_end:
            break  # more than the index declares: a decompression bomb is not read to its end
    if position != frame[-1].span_end:
        held = f"{position}" if position < frame[-1].span_end else f"more than {frame[-1].span_end}"
        report.problems.append(f"member {frame[-1].name}: its frame holds {held} bytes, "
                               f"the index implies {frame[-1].span_end}")
    for span in spans:
        _check_span(span, seen, report)


def _check_span(span: _Span, seen: _Seen, report: VerifyReport) -> None:
    member = span.member
    if not span.padding_ok:
        report.problems.append(f"member {member.name}: non-zero bytes in the tar padding")
    info = _parse_header(bytes(span.head))
    if info is None or info.name != member.name:
        report.problems.append(f"member {member.name}: tar header does not name this member")
        return
    if member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR)):
        seen.headers[member.name] = (info.pax_headers.get("mtime", ""), info.mode, info.uid, info.gid, info.linkname)
    if member.type == "symlink":
        report.links += 1
        if not info.issym():
            report.problems.append(f"member {member.name}: index says symlink, tar header disagrees")
        return
    if not info.isreg() or info.size != member.size:
        report.problems.append(f"member {member.name}: tar header type or size disagrees with the index")
    digest = span.hasher.hexdigest()
    if digest != member.sha256:
        report.problems.append(f"member {member.name}: SHA-256 {digest} does not match the index")
    if member.name.startswith(layout.PAYLOAD_DIR):
        report.payload_files += 1


def _parse_header(head: bytes) -> Header | tarfile.TarInfo | None:
    """A member's header: read directly for the shapes aitrail writes, else by tarfile (tarread.py)."""
    return read_header(head) or tarfile_header(head)


def tarfile_header(head: bytes) -> tarfile.TarInfo | None:
    """A member's header as tarfile reads it; None where it refuses the bytes."""
    try:
        with tarfile.open(fileobj=io.BytesIO(head + b"\0" * 1024), mode="r:", encoding="utf-8",
                          errors="surrogateescape") as archive:
            return archive.next()
    except (tarfile.TarError, UnicodeError, ValueError, OverflowError, EOFError):  # untrusted header bytes
        return None


def _check_end(reader: BundleReader, report: VerifyReport) -> None:
    end = reader.index["end"]
    end_member = Member("(tar end)", "file", end["frame_offset"], end["frame_length"], 0, 0, 0, None)
    data = bytearray()
    try:
        for chunk in reader.iter_decompressed(end_member):
            data += chunk
            if len(data) > 1024:
                break
    except (BundleFormatError, zstandard.ZstdError) as exc:
        report.problems.append(f"tar end: frame is damaged ({exc})")
        return
    if data != b"\0" * 1024:
        report.problems.append("tar end: the end-of-archive blocks are not two zero blocks")


# -- the payload manifest -------------------------------------------------------------


def _check_payload_manifest(reader: BundleReader, report: VerifyReport) -> None:
    """manifest-sha256.txt, streamed line by line, against the index (whose digests the frame pass checked)."""
    name = layout.PAYLOAD_MANIFEST
    listed: set[str] = set()
    try:
        for number, line in iter_lines(reader, name, layout.MANIFEST_LINE_MAX):
            parsed = parse_manifest_line(line)
            if parsed is None:
                report.problems.append(f"{name}: line {number} is not '<sha256>  <path>'")
                continue
            digest, member_name = parsed
            if member_name in listed:
                report.problems.append(f"{name}: {member_name} listed twice")
                continue
            member = reader.get(member_name)
            if member is None or member.type != "file" or not member_name.startswith(layout.PAYLOAD_DIR):
                report.problems.append(f"{name}: lists {member_name}, which is not in the bundle")
                continue
            listed.add(member.name)  # the index's string: one copy per name
            if member.sha256 != digest:
                report.problems.append(f"member {member_name}: SHA-256 does not match {name}")
    except KeyError:
        return  # missing: named by the structural check
    except BundleFormatError as exc:
        report.problems.append(str(exc))
    for member in reader.members:
        if member.type == "file" and member.name.startswith(layout.PAYLOAD_DIR) and member.name not in listed:
            report.problems.append(f"{name}: payload member {member.name} is not listed")


# -- files.jsonl ------------------------------------------------------------------------


def _check_files_jsonl(reader: BundleReader, seen: _Seen, report: VerifyReport) -> None:
    """Every record, streamed: its schema, its member, that member's tar header; then the counts."""
    by_class = dict.fromkeys(("collected", "skipped", "failed"), 0)
    referenced: set[str] = set()
    try:
        for _, record, problem in iter_records(reader):
            if record is None:
                report.problems.append(f"{layout.FILES_JSONL}: {problem}")
                continue
            by_class[oc.OUTCOME_CLASS[record["outcome"]]] += 1
            if record.get("member"):
                member = reader.get(record["member"])
                referenced.add(record["member"] if member is None else member.name)  # one copy per name
                _check_record_member(reader, seen, record, report)
            elif record["outcome"] in (oc.COLLECTED, oc.CHANGED, oc.SYMLINK):
                report.problems.append(f"{layout.FILES_JSONL}: {record.get('path')} is {record['outcome']} "
                                       "but names no member")
    except KeyError:
        return  # missing: named by the structural check
    except BundleFormatError as exc:
        report.problems.append(str(exc))
        return
    for member in reader.members:
        if member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR)) and member.name not in referenced:
            report.problems.append(f"member {member.name}: not accounted for in {layout.FILES_JSONL}")
    report.counts = {"matched": sum(by_class.values()), **by_class}
    _check_counts(seen, report)


def _check_record_member(reader: BundleReader, seen: _Seen, record: dict, report: VerifyReport) -> None:
    name = record["member"]
    member = reader.get(name)
    if member is None:
        report.problems.append(f"{layout.FILES_JSONL}: {record.get('path')} names member {name}, which is missing")
        return
    header = seen.headers.get(name)
    if member.type == "symlink":
        if header is not None and os.fsencode(header[4]) != link_target(record):
            report.problems.append(f"member {name}: link target differs from {layout.FILES_JSONL}")
        return
    if member.sha256 != record.get("sha256") or member.size != record.get("stored_size"):
        report.problems.append(f"member {name}: digest or size differs from {layout.FILES_JSONL}")
    stat = record.get("stat")
    if header is not None and stat:
        mtime, mode, uid, gid, _ = header
        if (mtime != ns_text(stat["mtime_ns"]) or mode != int(stat["mode"], 8) & 0o7777
                or uid != stat["uid"] or gid != stat["gid"]):
            report.problems.append(f"member {name}: tar header metadata differs from {layout.FILES_JSONL}")


def _check_counts(seen: _Seen, report: VerifyReport) -> None:
    if seen.collection is None:
        return  # unreadable or malformed: named by the structural check
    recorded = seen.collection["counts"]
    if any(recorded.get(key) != value for key, value in report.counts.items()):
        report.problems.append(f"{layout.COLLECTION_JSON}: counts differ from {layout.FILES_JSONL}")
    if sum(recorded[key] for key in COUNT_KEYS[1:]) != recorded["matched"]:
        report.problems.append(f"{layout.COLLECTION_JSON}: collected + skipped + failed != matched")
