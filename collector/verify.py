"""``aitrail verify``: prove a bundle whole, or name everything that is wrong.

Checks, in order: the sidecar ``<bundle>.sha256`` (when present); the index
trailer and index digest; that the frames tile the file; every member frame
(zstd checksum, tar header against the index, data digest, zero padding);
the tar end; the payload manifest against every payload member; the tag
manifest against every tag file; files.jsonl against the members it names,
the tar headers' metadata and the counts in collection.json; and the
Ed25519 signature over the tag manifest. Every problem is collected; nothing
stops at the first.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field

import zstandard

from aitrail.collector import outcomes as oc
from aitrail.collector.bundle import layout, seal
from aitrail.collector.bundle.tarheader import ns_text
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader, Member

REQUIRED_TAG_FILES = (layout.BAGIT_TXT, layout.BAG_INFO, layout.PAYLOAD_MANIFEST, layout.COLLECTION_JSON, layout.FILES_JSONL)


@dataclass
class VerifyReport:
    path: str
    problems: list[str] = field(default_factory=list)
    members: int = 0
    payload_files: int = 0
    links: int = 0
    signature: str = "absent"
    bundle_sha256: str | None = None
    counts: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Seen:
    """What reading the members established."""

    digests: dict[str, str] = field(default_factory=dict)
    headers: dict[str, tarfile.TarInfo] = field(default_factory=dict)
    small: dict[str, bytes] = field(default_factory=dict)  # tag files, kept for parsing


def verify(path: str, public_key_path: str | None = None) -> VerifyReport:
    report = VerifyReport(path)
    report.bundle_sha256 = _check_sidecar(path, report)
    try:
        reader = BundleReader(path)
    except (BundleFormatError, OSError) as exc:
        report.problems.append(str(exc))
        return report
    with reader:
        report.members = len(reader.members)
        seen = _read_members(reader, report)
        _check_end(reader, report)
        _check_required(seen, report)
        _check_payload_manifest(reader, seen, report)
        _check_tag_manifest(reader, seen, report)
        _check_files_jsonl(reader, seen, report)
        _check_signature(seen, report, public_key_path)
    return report


def _sha256_of_file(path: str) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(4 * 1024 * 1024), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def _check_sidecar(path: str, report: VerifyReport) -> str | None:
    try:
        digest = _sha256_of_file(path)
    except OSError as exc:
        report.problems.append(f"bundle file: cannot be read: {exc}")
        return None
    sidecar = path + ".sha256"
    if os.path.exists(sidecar):
        with open(sidecar, encoding="utf-8", errors="replace") as handle:
            recorded = handle.read().split()
        if not recorded or recorded[0].lower() != digest:
            report.problems.append(f"bundle file: SHA-256 {digest} does not match {os.path.basename(sidecar)}")
    return digest


# -- members --------------------------------------------------------------------


def _read_members(reader: BundleReader, report: VerifyReport) -> _Seen:
    seen = _Seen()
    for frame in reader.frames():
        try:
            _read_frame(reader, frame, seen, report)
        except (BundleFormatError, zstandard.ZstdError) as exc:
            names = ", ".join(member.name for member in frame)
            report.problems.append(f"member {names}: zstd frame is damaged or truncated ({exc})")
    return seen


class _Span:
    """One member's bytes inside a decompressed frame: header, data (hashed), zero padding."""

    def __init__(self, member: Member):
        self.member = member
        self.head = bytearray()
        self.hasher = hashlib.sha256()
        keep = member.type == "file" and not member.name.startswith(layout.PAYLOAD_DIR)
        self.body: bytearray | None = bytearray() if keep else None
        self.padding_ok = True

    def feed(self, chunk: bytes, start: int) -> None:
        """Take the part of ``chunk`` (which begins at frame position ``start``) that is ours."""
        member, end = self.member, start + len(chunk)
        low, high = max(start, member.member_offset), min(end, member.data_offset)
        if low < high:
            self.head += chunk[low - start: high - start]
        low, high = max(start, member.data_offset), min(end, member.data_offset + member.size)
        if low < high:
            piece = chunk[low - start: high - start]
            self.hasher.update(piece)
            if self.body is not None:
                self.body += piece
        low, high = max(start, member.data_offset + member.size), min(end, member.span_end)
        if low < high and any(chunk[low - start: high - start]):
            self.padding_ok = False


def _read_frame(reader: BundleReader, frame: list[Member], seen: _Seen, report: VerifyReport) -> None:
    spans = [_Span(member) for member in frame]
    position = 0
    for chunk in reader.iter_decompressed(frame[0]):
        for span in spans:
            if span.member.member_offset < position + len(chunk) and position < span.member.span_end:
                span.feed(chunk, position)
        position += len(chunk)
    if position != frame[-1].span_end:
        report.problems.append(f"member {frame[-1].name}: its frame holds {position} bytes, "
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
    seen.headers[member.name] = info
    if member.type == "symlink":
        report.links += 1
        if not info.issym():
            report.problems.append(f"member {member.name}: index says symlink, tar header disagrees")
        return
    if not info.isreg() or info.size != member.size:
        report.problems.append(f"member {member.name}: tar header type or size disagrees with the index")
    digest = span.hasher.hexdigest()
    seen.digests[member.name] = digest
    if digest != member.sha256:
        report.problems.append(f"member {member.name}: SHA-256 {digest} does not match the index")
    if span.body is not None:
        seen.small[member.name] = bytes(span.body)
    if member.name.startswith(layout.PAYLOAD_DIR):
        report.payload_files += 1


def _parse_header(head: bytes) -> tarfile.TarInfo | None:
    try:
        with tarfile.open(fileobj=io.BytesIO(head + b"\0" * 1024), mode="r:", encoding="utf-8",
                          errors="surrogateescape") as archive:
            return archive.next()
    except (tarfile.TarError, UnicodeError, ValueError):
        return None


def _check_end(reader: BundleReader, report: VerifyReport) -> None:
    end = reader.index["end"]
    end_member = Member("(tar end)", "file", end["frame_offset"], end["frame_length"], 0, 0, 0, None)
    try:
        data = b"".join(reader.iter_decompressed(end_member))
    except (BundleFormatError, zstandard.ZstdError) as exc:
        report.problems.append(f"tar end: frame is damaged ({exc})")
        return
    if data != b"\0" * 1024:
        report.problems.append("tar end: the end-of-archive blocks are not two zero blocks")


def _check_required(seen: _Seen, report: VerifyReport) -> None:
    for name in (*REQUIRED_TAG_FILES, layout.TAG_MANIFEST):
        if name not in seen.small:
            report.problems.append(f"{name}: missing from the bundle")


# -- manifests ----------------------------------------------------------------------


def _parse_manifest(name: str, data: bytes, report: VerifyReport) -> dict[str, str]:
    lines: dict[str, str] = {}
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        digest, _, member = line.partition("  ")
        if len(digest) != 64 or not member:
            report.problems.append(f"{name}: line {number} is not '<sha256>  <path>'")
            continue
        if member in lines:
            report.problems.append(f"{name}: {member} listed twice")
        lines[member] = digest.lower()
    return lines


def _check_payload_manifest(reader: BundleReader, seen: _Seen, report: VerifyReport) -> None:
    data = seen.small.get(layout.PAYLOAD_MANIFEST)
    if data is None:
        return
    listed = _parse_manifest(layout.PAYLOAD_MANIFEST, data, report)
    payload = {m.name for m in reader.members if m.type == "file" and m.name.startswith(layout.PAYLOAD_DIR)}
    for name in sorted(payload - set(listed)):
        report.problems.append(f"{layout.PAYLOAD_MANIFEST}: payload member {name} is not listed")
    for name, digest in sorted(listed.items()):
        if name not in payload:
            report.problems.append(f"{layout.PAYLOAD_MANIFEST}: lists {name}, which is not in the bundle")
        elif seen.digests.get(name) not in (None, digest):
            report.problems.append(f"member {name}: SHA-256 does not match {layout.PAYLOAD_MANIFEST}")


def _check_tag_manifest(reader: BundleReader, seen: _Seen, report: VerifyReport) -> None:
    data = seen.small.get(layout.TAG_MANIFEST)
    if data is None:
        return
    listed = _parse_manifest(layout.TAG_MANIFEST, data, report)
    tag_files = {m.name for m in reader.members if m.type == "file" and not m.name.startswith(layout.PAYLOAD_DIR)}
    tag_files -= {layout.TAG_MANIFEST, layout.SIGNATURE}
    for name in sorted(tag_files - set(listed)):
        report.problems.append(f"{layout.TAG_MANIFEST}: tag file {name} is not listed")
    for name, digest in sorted(listed.items()):
        if name not in seen.small:
            report.problems.append(f"{layout.TAG_MANIFEST}: lists {name}, which is not in the bundle")
        elif hashlib.sha256(seen.small[name]).hexdigest() != digest:
            report.problems.append(f"{name}: SHA-256 does not match {layout.TAG_MANIFEST}")
    for member in reader.members:
        known = member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR, layout.CATALOG_DIR))
        if not known and member.name not in (*REQUIRED_TAG_FILES, layout.TAG_MANIFEST, layout.SIGNATURE):
            report.problems.append(f"member {member.name}: not part of the bundle format")


# -- files.jsonl ------------------------------------------------------------------------


def _check_files_jsonl(reader: BundleReader, seen: _Seen, report: VerifyReport) -> None:
    data = seen.small.get(layout.FILES_JSONL)
    if data is None:
        return
    records = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            record = json.loads(line)
            if record["outcome"] not in oc.OUTCOME_CLASS:
                raise ValueError(f"unknown outcome {record['outcome']!r}")
            records.append(record)
        except (ValueError, KeyError, TypeError) as exc:
            report.problems.append(f"{layout.FILES_JSONL}: line {number} is not a valid record ({exc})")
    referenced: set[str] = set()
    for record in records:
        member_name = record.get("member")
        if member_name:
            referenced.add(member_name)
            _check_record_member(reader, seen, record, report)
        elif record["outcome"] in (oc.COLLECTED, oc.CHANGED, oc.SYMLINK):
            report.problems.append(f"{layout.FILES_JSONL}: {record.get('path')} is {record['outcome']} but names no member")
    stored = {m.name for m in reader.members if m.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR))}
    for name in sorted(stored - referenced):
        report.problems.append(f"member {name}: not accounted for in {layout.FILES_JSONL}")
    _check_counts(records, seen, report)


def _check_record_member(reader, seen: _Seen, record: dict, report: VerifyReport) -> None:
    name = record["member"]
    try:
        member = reader.member(name)
    except KeyError:
        report.problems.append(f"{layout.FILES_JSONL}: {record.get('path')} names member {name}, which is missing")
        return
    header = seen.headers.get(name)
    if member.type == "symlink":
        target = base64.b64decode(record.get("link_target_b64") or "")
        if header is not None and os.fsencode(header.linkname) != target:
            report.problems.append(f"member {name}: link target differs from {layout.FILES_JSONL}")
        return
    if seen.digests.get(name) not in (None, record.get("sha256")) or member.size != record.get("stored_size"):
        report.problems.append(f"member {name}: digest or size differs from {layout.FILES_JSONL}")
    stat = record.get("stat") or {}
    if header is not None and stat:
        mtime = header.pax_headers.get("mtime", "")
        expected = ns_text(stat["mtime_ns"])
        if (mtime != expected or header.mode != int(stat["mode"], 8) & 0o7777
                or header.uid != stat["uid"] or header.gid != stat["gid"]):
            report.problems.append(f"member {name}: tar header metadata differs from {layout.FILES_JSONL}")


def _check_counts(records: list[dict], seen: _Seen, report: VerifyReport) -> None:
    by_class = {"collected": 0, "skipped": 0, "failed": 0}
    for record in records:
        by_class[oc.OUTCOME_CLASS[record["outcome"]]] += 1
    report.counts = {"matched": len(records), **by_class}
    try:
        recorded = json.loads(seen.small.get(layout.COLLECTION_JSON, b"{}"))["counts"]
    except (ValueError, KeyError, TypeError):
        report.problems.append(f"{layout.COLLECTION_JSON}: no readable counts")
        return
    if any(recorded.get(key) != value for key, value in report.counts.items()):
        report.problems.append(f"{layout.COLLECTION_JSON}: counts differ from {layout.FILES_JSONL}")
    if recorded.get("collected", 0) + recorded.get("skipped", 0) + recorded.get("failed", 0) != recorded.get("matched"):
        report.problems.append(f"{layout.COLLECTION_JSON}: collected + skipped + failed != matched")


# -- signature ------------------------------------------------------------------------


def _check_signature(seen: _Seen, report: VerifyReport, public_key_path: str | None) -> None:
    signature = seen.small.get(layout.SIGNATURE)
    try:
        signer = json.loads(seen.small.get(layout.COLLECTION_JSON, b"{}")).get("signer")
    except ValueError:
        signer = None
    if signature is None:
        if signer:
            report.problems.append(f"signature: {layout.COLLECTION_JSON} names a signer but {layout.SIGNATURE} is missing")
        if public_key_path:
            report.problems.append("signature: --public-key given but the bundle is not signed")
        return
    try:
        if public_key_path:
            with open(public_key_path, "rb") as handle:
                key = seal.load_public(handle.read(), public_key_path)
            report.signature = f"valid, by the given key {seal.fingerprint(key)}"
        elif signer:
            key = seal.load_public(signer["public_key_pem"].encode("ascii"), layout.COLLECTION_JSON)
            report.signature = f"valid, by the key recorded in the bundle {seal.fingerprint(key)} (not pinned: pass --public-key)"
        else:
            report.problems.append(f"signature: {layout.SIGNATURE} present but no signer recorded")
            return
    except (seal.SigningKeyError, OSError, KeyError, TypeError) as exc:
        report.problems.append(f"signature: cannot load the public key ({exc})")
        return
    if not seal.check(key, signature, seen.small.get(layout.TAG_MANIFEST, b"")):
        report.signature = "INVALID"
        report.problems.append(f"signature: {layout.SIGNATURE} does not verify over {layout.TAG_MANIFEST}")
