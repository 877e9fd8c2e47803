"""``aitrail verify``: prove a bundle whole, or name everything that is wrong.

Checks, in order: the sidecar ``<bundle>.sha256`` (when present); the index
trailer and index digest; that the frames tile the file; the structure
(verify/structure.py: metadata limits, tag manifest, collection.json schema,
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
import json
import os
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle import vocabulary as oc
from aitrail.collector.bundle.metadata import COUNT_KEYS, iter_lines, iter_records, link_target
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader, Member
from aitrail.collector.bundle.tarheader import ns_text
from aitrail.collector.verify.frames import FrameFindings, check_frame_of, tarfile_header
from aitrail.collector.verify.structure import (
    REQUIRED_TAG_FILES,
    SignaturePolicy,
    Structure,
    check_structure,
    parse_manifest_line,
)

__all__ = ["REQUIRED_TAG_FILES", "SignaturePolicy", "Verification", "VerifyReport", "begin", "tarfile_header", "verify"]


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
    signer_fingerprint: str = ""  # computed from the key the signature verified under ("" if none did)
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
    policy = SignaturePolicy(public_key_path, require_signature)
    if reader is not None:
        return _run(reader, report, policy, progress).complete({})
    try:
        reader = BundleReader(path)
    except (BundleFormatError, OSError) as exc:
        report.problems.append(str(exc))
        return report
    with reader:
        return _run(reader, report, policy, progress).complete({})


def begin(path: str, reader: BundleReader, public_key_path: str | None = None, require_signature: bool = False,
          progress: Callable[[str], None] | None = None, bundle_sha256: str | None = None,
          delegated: Collection[int] = (), loads: Callable[[bytes], object] = json.loads,
          structure: Structure | None = None) -> Verification:
    """Verify an opened bundle except the frames at the ``delegated`` offsets, which are checked elsewhere.

    The analyzer's workers check the frames they decompress to parse
    (verify_frames.check_frame_of); ``complete`` takes their findings and
    gives the report ``verify`` would have: the same problems, in the same order.
    ``loads``: how files.jsonl lines are decoded; a decoder that gives exactly
    what ``json.loads`` gives and raises what it raises (the analyzer's is faster).
    ``structure``: what ``check_structure`` found on this reader under the same
    signature policy, when the caller has checked it already (it is not checked twice).
    """
    report = VerifyReport(path)
    report.bundle_sha256 = _check_sidecar(path, report, bundle_sha256)
    return _run(reader, report, SignaturePolicy(public_key_path, require_signature), progress, delegated, loads,
                structure)


def _run(reader: BundleReader, report: VerifyReport, policy: SignaturePolicy,
         progress: Callable[[str], None] | None, delegated: Collection[int] = (),
         loads: Callable[[bytes], object] = json.loads, structure: Structure | None = None) -> Verification:
    verification = Verification(reader, report, policy, progress, delegated, loads)
    verification.run(structure)
    return verification


class Verification:
    """One bundle's checks, in verify's order; those that wait on a delegated frame are kept as places.

    While it runs, ``report.problems`` holds problem texts and, for what a
    delegated frame decides (its own problems; a files.jsonl record's
    comparison with its member's tar header), callables that ``complete``
    replaces by the texts they give once the frame's findings are in.
    """

    def __init__(self, reader: BundleReader, report: VerifyReport, policy: SignaturePolicy,
                 progress: Callable[[str], None] | None = None, delegated: Collection[int] = (),
                 loads: Callable[[bytes], object] = json.loads):
        self.reader, self.report, self.policy, self.progress = reader, report, policy, progress
        self.loads = loads  # of files.jsonl's lines: json.loads, or one that gives exactly what it gives
        self.delegated = frozenset(delegated)
        self.seen = _Seen()
        self.findings: dict[int, FrameFindings] = {}

    def run(self, structure: Structure | None = None) -> None:
        """Every check this process makes itself: structure, its frames, tar end, manifest, files.jsonl.

        ``structure``: the structural check's findings on this reader and policy, if made already.
        """
        reader, report = self.reader, self.report
        report.members = len(reader.members)
        if structure is None:
            structure = check_structure(reader, self.policy)
        report.problems += structure.problems
        report.signature, report.signed, report.pinned = structure.signature, structure.signed, structure.pinned
        report.signer_fingerprint = structure.signer_fingerprint
        report.warnings += structure.warnings
        self._read_frames()
        self.seen.collection = structure.collection
        _check_end(reader, report)
        _check_payload_manifest(reader, report)
        _check_files_jsonl(reader, self, report)

    def complete(self, findings: Mapping[int, FrameFindings]) -> VerifyReport:
        """The report, with the delegated frames' findings (a frame without any is checked here, now)."""
        for offset, frame in self._delegated_frames():
            found = findings.get(offset)
            self._take(offset, found if found is not None else check_frame_of(self.reader, frame))
        problems: list[str] = []
        for problem in self.report.problems:
            problems.extend([problem] if isinstance(problem, str) else problem())
        self.report.problems = problems
        return self.report

    def header(self, member: Member) -> tuple | None | _Later:
        """A payload or link member's tar header tuple; _LATER while its frame's findings are awaited."""
        header = self.seen.headers.get(member.name)
        if header is None and member.frame_offset in self.delegated and member.frame_offset not in self.findings:
            return _LATER
        return header

    def _read_frames(self) -> None:
        limiter = RateLimiter()
        frames = self.reader.frames()
        elsewhere = sum(frame[0].frame_offset in self.delegated for frame in frames)
        suffix = f" (and {elsewhere} with the parse)" if elsewhere else ""
        checked = 0
        for frame in frames:
            offset = frame[0].frame_offset
            if offset in self.delegated:
                self.report.problems.append(lambda offset=offset: self.findings[offset].problems)
                continue
            self._take(offset, check_frame_of(self.reader, frame))
            self.report.problems += self.findings[offset].problems
            checked += 1
            if self.progress is not None and limiter.ready():
                self.progress(f"verified {checked}/{len(frames) - elsewhere} frames{suffix}")

    def _take(self, offset: int, found: FrameFindings) -> None:
        self.findings[offset] = found
        self.seen.headers.update(found.headers)
        self.report.links += found.links
        self.report.payload_files += found.payload_files

    def _delegated_frames(self) -> list[tuple[int, list[Member]]]:
        return [(frame[0].frame_offset, frame) for frame in self.reader.frames()
                if frame[0].frame_offset in self.delegated]


class _Later:
    """The header of a member whose frame is checked elsewhere: known at ``complete``."""


_LATER = _Later()


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


def _check_files_jsonl(reader: BundleReader, verification: Verification, report: VerifyReport) -> None:
    """Every record, streamed: its schema, its member, that member's tar header; then the counts."""
    by_class = dict.fromkeys(("collected", "skipped", "failed"), 0)
    referenced: set[str] = set()
    try:
        for _, record, problem in iter_records(reader, verification.loads):
            if record is None:
                report.problems.append(f"{layout.FILES_JSONL}: {problem}")
                continue
            by_class[oc.OUTCOME_CLASS[record["outcome"]]] += 1
            if record.get("member"):
                member = reader.get(record["member"])
                referenced.add(record["member"] if member is None else member.name)  # one copy per name
                _check_record_member(reader, verification, record, report)
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
    _check_counts(verification.seen, report)


def _check_record_member(reader: BundleReader, verification: Verification, record: dict,
                         report: VerifyReport) -> None:
    name = record["member"]
    member = reader.get(name)
    if member is None:
        report.problems.append(f"{layout.FILES_JSONL}: {record.get('path')} names member {name}, which is missing")
        return
    if member.type == "symlink":
        _against_header(verification, member, link_target(record), _link_problems, report)
        return
    if member.sha256 != record.get("sha256") or member.size != record.get("stored_size"):
        report.problems.append(f"member {name}: digest or size differs from {layout.FILES_JSONL}")
    stat = record.get("stat")
    if stat:
        mtime = stat["mtime_ns"]
        recorded = (None if mtime is None else ns_text(mtime), int(stat["mode"], 8) & 0o7777, stat["uid"], stat["gid"])
        _against_header(verification, member, recorded, _stat_problems, report)


def _against_header(verification: Verification, member: Member, recorded, compare, report: VerifyReport) -> None:
    """Compare what files.jsonl records with the member's tar header: now, or once its frame is checked."""
    header = verification.header(member)
    if header is _LATER:
        report.problems.append(lambda: compare(member.name, recorded, verification.seen.headers.get(member.name)))
    else:
        report.problems += compare(member.name, recorded, header)


def _link_problems(name: str, target: bytes, header: tuple | None) -> list[str]:
    if header is not None and os.fsencode(header[4]) != target:
        return [f"member {name}: link target differs from {layout.FILES_JSONL}"]
    return []


def _stat_problems(name: str, recorded: tuple, header: tuple | None) -> list[str]:
    # a field recorded null was not recorded (an import from a tool that keeps no owner, foreign/): not compared
    if header is not None and any(value is not None and value != got for value, got in
                                  zip(recorded, header[:4], strict=False)):
        return [f"member {name}: tar header metadata differs from {layout.FILES_JSONL}"]
    return []


def _check_counts(seen: _Seen, report: VerifyReport) -> None:
    if seen.collection is None:
        return  # unreadable or malformed: named by the structural check
    recorded = seen.collection["counts"]
    if any(recorded.get(key) != value for key, value in report.counts.items()):
        report.problems.append(f"{layout.COLLECTION_JSON}: counts differ from {layout.FILES_JSONL}")
    if sum(recorded[key] for key in COUNT_KEYS[1:]) != recorded["matched"]:
        report.problems.append(f"{layout.COLLECTION_JSON}: collected + skipped + failed != matched")
