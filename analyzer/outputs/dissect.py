r"""``aitrail export dissect``: a verified bundle as a plain tar that dissect.target opens (UAC's layout).

dissect.target cannot open a bundle: its tar loader knows gzip, bzip2, xz and
lzma, not zstd (dissect.target 3.25.1, ``dissect/target/loaders/tar.py``).
It does open a tar whose members are under ``[root]/``, as UAC writes them
(``loaders/uac.py`` UacTarSubloader, which maps ``[root]`` as the target's
``/``). So this writes, as one uncompressed POSIX.1-2001 (pax) tar:

* ``[root]/<path on the subject>``: every collected file with the bundle's
  bytes (checked against the index's SHA-256 as they are copied), its
  permission bits, owner ids, and atime and mtime in nanoseconds in pax
  headers; every link as a link, after the files. The paths are those
  ``aitrail extract`` writes (analyzer/outputs/payload.py), with the same
  refusals: an empty, ``.`` or ``..`` component or a NUL byte is refused and
  named, and no member can name anything outside ``[root]/``.
* the system files dissect needs to tell the system, host name, time zone
  and users, **made by aitrail from collection.json** (analyzer/outputs/
  dissect_system.py), unless the bundle collected a file at that path;
* ``[root]/aitrail-export/README.txt``: what was made and from what, what
  was refused, and the SHA-256 of the bundle file.

Directories get mode 755 and owner 0; they and every made file have the
time 0 (1970-01-01): their times are not recorded, and a made-up time would
pass for one. The same bundle gives the same tar, byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import zstandard

from aitrail.analyzer import __version__
from aitrail.analyzer.outputs.dissect_system import Subject, SystemFile, subject_of, system_files
from aitrail.analyzer.outputs.extract import ExtractReport
from aitrail.analyzer.outputs.payload import (
    UnsafePath,
    file_mode,
    file_times,
    iter_payload,
    path_parts,
    record_stat,
)
from aitrail.collector.bundle import metadata
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

ROOT = "[root]"
EXPORT_DIR = "aitrail-export"  # below [root]: visible in dissect's shell, and never a subject path (refused)
README = f"{EXPORT_DIR}/README.txt"
NS = 1_000_000_000
CHUNK = 1 << 20


class ExportError(RuntimeError):
    """The tar could not be written whole (a member's bytes differ from what verify read)."""


@dataclass
class DissectReport(ExtractReport):
    """What went into the tar (extract's counts and refusals), what was made, and what was not."""

    made: list[SystemFile] = field(default_factory=list)
    not_made: list[str] = field(default_factory=list)
    subject: Subject | None = None


def pax_time(ns: int) -> str:
    """Nanoseconds since the epoch as a pax time value (decimal seconds, nine places)."""
    seconds, rest = divmod(abs(ns), NS)
    return f"{'-' if ns < 0 else ''}{seconds}.{rest:09d}"


def owner_id(stat: dict, key: str) -> int:
    """A stat's uid or gid when it is one (verify checked its range), else 0."""
    value = stat.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 32 else 0


class VerifiedStream(io.RawIOBase):
    """A member's data as a file tarfile reads: exactly ``size`` bytes, hashed as they go by.

    A member up to the reader's cache limit comes as one chunk; it is handed
    out by slices of it (never by re-copying what is left), so the cost stays
    linear in the member's size.
    """

    def __init__(self, chunks: Iterator[bytes], size: int):
        super().__init__()
        self.chunks, self.size = chunks, size
        self.chunk = memoryview(b"")
        self.offset = 0
        self.hasher = hashlib.sha256()
        self.length = 0

    def readable(self) -> bool:
        """It is read, never written."""
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left when negative); fewer only at the end of the data."""
        pieces, wanted = [], size
        while wanted != 0:
            if self.offset == len(self.chunk):
                chunk = next(self.chunks, None)
                if chunk is None:
                    break
                self.hasher.update(chunk)
                self.length += len(chunk)
                self.chunk, self.offset = memoryview(chunk), 0
            end = len(self.chunk) if wanted < 0 else min(len(self.chunk), self.offset + wanted)
            pieces.append(self.chunk[self.offset:end])
            wanted -= end - self.offset if wanted > 0 else 0
            self.offset = end
        return b"".join(pieces)

    def problem(self, expected_sha256: str) -> str | None:
        """Why the bytes read are not the member's (checked once tarfile has read ``size`` of them)."""
        for chunk in self.chunks:  # anything past the size is counted, never kept
            self.hasher.update(chunk)
            self.length += len(chunk)
        if self.length != self.size:
            return f"{self.length} bytes, the index says {self.size}"
        if self.hasher.hexdigest() != expected_sha256:
            return "SHA-256 does not match the index"
        return None


class RootTree:
    """The tar's ``[root]/`` tree: each path once, every parent a directory written before its children."""

    def __init__(self, tar: tarfile.TarFile):
        self.tar = tar
        self.directories: set[tuple[bytes, ...]] = set()
        self.leaves: set[tuple[bytes, ...]] = set()
        self.links: dict[tuple[bytes, ...], bytes] = {}
        self.directory(())

    @staticmethod
    def name(parts: tuple[bytes, ...]) -> str:
        """The member name of a path below [root] (bytes that are not UTF-8 kept, as tarfile's pax writes them)."""
        return "/".join([ROOT, *(part.decode("utf-8", "surrogateescape") for part in parts)])

    def claimable(self, parts: tuple[bytes, ...]) -> str | None:
        """Why ``parts`` cannot be a new file or link here, or None."""
        if parts in self.leaves or parts in self.directories:
            return "already in the export"
        for length in range(1, len(parts)):
            if parts[:length] in self.leaves:
                return f"its parent {b'/'.join(parts[:length]).decode('utf-8', 'backslashreplace')} is a file or link"
        return None

    def directory(self, parts: tuple[bytes, ...]) -> None:
        """``parts`` and its parents as directories (mode 755, owner 0, time 0), each once."""
        for length in range(len(parts) + 1):
            path = parts[:length]
            if path in self.directories:
                continue
            info = tarfile.TarInfo(self.name(path))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            self.tar.addfile(info)
            self.directories.add(path)

    def add_file(self, parts: tuple[bytes, ...], info: tarfile.TarInfo, data: io.RawIOBase | None) -> None:
        """A file (or, without data, a link) at ``parts``, its parents made first."""
        self.directory(parts[:-1])
        info.name = self.name(parts)
        self.tar.addfile(info, data)
        self.leaves.add(parts)
        if info.type == tarfile.SYMTYPE:
            self.links[parts] = info.linkname.encode("utf-8", "surrogateescape")

    def through_links(self, parts: tuple[bytes, ...]) -> tuple[bytes, ...]:
        """``parts`` with each parent that is a collected link replaced by its target inside the tree.

        A macOS image holds ``var -> private/var``: a file made at ``var/db/...`` belongs at
        ``private/var/db/...``, where dissect finds it through the link. The walk is lexical (a target's
        ``..`` never climbs above [root], as the root of an image cannot be left) and stops after 16 links.
        """
        for _ in range(16):
            for length in range(1, len(parts)):
                target = self.links.get(parts[:length])
                if target is not None:
                    base = [] if target.startswith(b"/") else list(parts[:length - 1])
                    for part in target.split(b"/"):
                        if part == b"..":
                            base = base[:-1]
                        elif part not in (b"", b"."):
                            base.append(part)
                    parts = (*base, *parts[length:])
                    break
            else:
                return parts
        return parts


def entry_info(record: dict, kind: bytes, size: int = 0) -> tarfile.TarInfo:
    """A tar header of one record: mode, owner ids and times (ValueError when the stat holds no such values)."""
    stat = record_stat(record)
    atime, mtime = file_times(stat)
    info = tarfile.TarInfo()
    info.type, info.size = kind, size
    info.mode = file_mode(stat) if kind == tarfile.REGTYPE else 0o777
    info.uid, info.gid = owner_id(stat, "uid"), owner_id(stat, "gid")
    info.mtime = max(mtime // NS, 0)
    info.pax_headers = {"atime": pax_time(atime), "mtime": pax_time(mtime)}  # the exact times; they take precedence
    return info


class DissectWriter:
    """Writes one bundle's payload, then the made system files and the README, into one tar."""

    def __init__(self, reader: BundleReader, tar: tarfile.TarFile):
        self.reader = reader
        self.tree = RootTree(tar)
        self.report = DissectReport()
        self.owners: dict[str, set[tuple[int, int]]] = {}
        self.written: set[bytes] = set()

    def payload(self) -> None:
        """Every collected file, then every link; a refusal is named, never raised."""
        for entry in iter_payload(self.reader):
            if entry.raw in self.written:
                continue  # two stores matched the same file: it is in the bundle, and here, once
            try:
                parts = tuple(path_parts(entry.raw))
                if parts[0] == EXPORT_DIR.encode():
                    raise UnsafePath(f"/{EXPORT_DIR} is the export's own folder")
                why = self.tree.claimable(parts)
                if why:
                    raise UnsafePath(why)
                if entry.is_link:
                    self.link(parts, entry.record)
                else:
                    self.file(parts, entry.record)
            except (UnsafePath, ValueError, KeyError, TypeError, OverflowError) as exc:
                self.report.refused.append(f"{entry.raw.decode('utf-8', 'backslashreplace')}: {exc}")
                continue
            self.written.add(entry.raw)
            stat = record_stat(entry.record)
            location = str(entry.record.get("location"))
            self.owners.setdefault(location, set()).add((owner_id(stat, "uid"), owner_id(stat, "gid")))

    def file(self, parts: tuple[bytes, ...], record: dict) -> None:
        """One collected file with the bundle's bytes, checked against the index as they are copied."""
        member = self.reader.member(record["member"])
        info = entry_info(record, tarfile.REGTYPE, member.size)
        stream = VerifiedStream(self.reader.iter_data(member), member.size)
        try:
            self.tree.add_file(parts, info, stream)
        except (BundleFormatError, OSError, zstandard.ZstdError) as exc:  # half a member is in the tar: not finishable
            raise ExportError(f"{member.name}: {exc}") from exc
        problem = stream.problem(member.sha256)
        if problem:
            raise ExportError(f"{member.name}: {problem} (the bundle changed since it was verified)")
        self.report.files += 1
        self.report.bytes += member.size

    def link(self, parts: tuple[bytes, ...], record: dict) -> None:
        """One link, as a link, with its recorded target."""
        target = metadata.link_target(record)
        if not target or b"\x00" in target:
            raise ValueError("the link's target is empty or holds a NUL byte")
        info = entry_info(record, tarfile.SYMTYPE)
        info.linkname = target.decode("utf-8", "surrogateescape")
        self.tree.add_file(parts, info, None)
        self.report.links += 1

    def system(self, collection: dict) -> None:
        """The system files made from collection.json, each unless the bundle collected one at its path."""
        subject = subject_of(collection, self.owners)
        self.report.subject = subject
        for made in system_files(subject):
            named = tuple(made.path.encode().split(b"/"))
            parts = self.tree.through_links(named)
            why = self.add_made(made, parts)
            if why:
                self.report.not_made.append(f"{made.path}: {why}")
            elif parts != named:
                at = b"/".join(parts).decode("utf-8", "backslashreplace")
                note = f"{made.made_from}; made for {made.path}, a path through a collected link"
                self.report.made.append(replace(made, path=at, made_from=note))
            else:
                self.report.made.append(made)

    def add_made(self, made: SystemFile, parts: tuple[bytes, ...]) -> str | None:
        """Write one made entry at ``parts``; why it was not written (its path is the bundle's), or None."""
        if made.data is None and parts in self.tree.directories:
            return None  # the collected files' folders made it already
        if parts in self.tree.leaves:
            return "collected: the subject's own file is there"
        why = self.tree.claimable(parts)
        if why:
            return why
        if made.data is None:
            self.tree.directory(parts)
        else:
            self.tree.add_file(parts, made_info(len(made.data)), io.BytesIO(made.data))
        return None

    def readme(self, bundle_sha256: str) -> None:
        """[root]/aitrail-export/README.txt: what this tar is, made from which bundle, and how."""
        data = readme_text(self.report, bundle_sha256).encode()
        self.tree.add_file(tuple(README.encode().split(b"/")), made_info(len(data)), io.BytesIO(data))


def made_info(size: int) -> tarfile.TarInfo:
    """The header of a file aitrail made: mode 644, owner 0, time 0."""
    info = tarfile.TarInfo()
    info.size, info.mode = size, 0o644
    return info


def readme_text(report: DissectReport, bundle_sha256: str) -> str:
    """The README: provenance, what was collected, what was made from what, what was not made or refused."""
    subject = report.subject
    lines = ["aitrail export dissect", "",
             f"Written by aitrail {__version__} from the bundle file with SHA-256 {bundle_sha256}, after it verified.",
             "", "COLLECTED (the subject's own files, from the bundle):",
             f"  {report.files} files ({report.bytes} bytes) and {report.links} links under [root]/ at their paths on "
             "the subject, with the bundle's bytes, permission bits, owners, atime and mtime.", "",
             "MADE BY AITRAIL, NOT COLLECTED: made from the bundle's aitrail/collection.json (a uid from the owners "
             "aitrail/files.jsonl records) so that dissect can tell the system, host name, time zone and users.",
             f"  system: {subject.system} ({subject.system_source})"]
    lines += [f"  {made.path}{'/' if made.data is None else ''}: {made.made_from}" for made in report.made]
    lines += [f"  user {user.name} (name: {user.name_source}): home {user.home}, uid {user.uid}, gid {user.gid} "
              f"({user.uid_source})" for user in subject.users]
    if subject.system == "windows":
        lines.append("  nothing: dissect reads a Windows system's name, users and time zone from registry hives, "
                     "which aitrail does not collect; dissect opens this tar as a generic target")
    lines += ["  Directories and made files have the time 0 (1970-01-01): no time of theirs is recorded.", "",
              "What collection.json records (as it says it):", *(f"  {line}" for line in subject.recorded)]
    for title, items in (("Not made (the path is taken)", report.not_made),
                         ("Values of collection.json not used", subject.left_out),
                         ("REFUSED paths (not in this tar)", report.refused)):
        if items:
            lines += ["", f"{title}:", *(f"  {item}" for item in items)]
    return "\n".join(lines) + "\n"


def bundle_digest(path: str) -> str:
    """The SHA-256 of the bundle file."""
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


def export_dissect(reader: BundleReader, output: str) -> DissectReport:
    """Write the tar of a verified bundle to ``output`` (a new file, removed again if it cannot be finished)."""
    collection = metadata.load_collection(reader)
    digest = bundle_digest(reader.path)
    handle = open(output, "xb")  # noqa: SIM115 - closed below, and removed on failure
    try:
        with tarfile.open(fileobj=handle, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8",
                          errors="surrogateescape", copybufsize=CHUNK) as tar:
            writer = DissectWriter(reader, tar)
            writer.payload()
            writer.system(collection)
            writer.readme(digest)
        handle.close()
    except BaseException:
        handle.close()
        os.unlink(output)
        raise
    return writer.report
