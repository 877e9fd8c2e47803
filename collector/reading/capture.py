"""Read one matched file safely and hand its exact bytes to the bundle writer.

Order of operations for a regular file: ``lstat`` first (statx on Linux);
a cloud placeholder (SF_DATALESS, macOS) stops here, never opened; open by
name relative to the parent directory's descriptor with ``O_NOFOLLOW |
O_NONBLOCK``, and ``O_NOATIME`` where the platform has it and the kernel
allows it (so neither a symlink swapped in nor a FIFO is ever followed or
blocks; fs/platform.py chooses the backend, each file records its atime
protection); ``fstat`` to prove the open file is the inode that was
``lstat``-ed; read to end of file; ``fstat`` and ``lstat`` again. The bytes
stored are exactly the bytes read, the digest is theirs, and any difference
between the before and after states flags the file as changed during read,
with both states recorded.

A file read into memory is hashed once, whole, from the one immutable
``bytes`` object that is then stored. A large one (HASHED_BY_WRITER bytes or
more) is left to the bundle writer, which hashes it on its compressing thread
from the same object, in parallel with the next reads; small ones are hashed
here, because handing the GIL to that thread for each of thousands of small
digests costs more than the digests (measured: bench/collect-notes.md).
Files that are streamed or spooled are hashed here, as read. The parent
directory's descriptor is looked up once per file and every call of the
sequence is made relative to it.
"""

from __future__ import annotations

import errno as errno_module
import hashlib
import os
import stat as stat_module
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO

from aitrail.collector.bundle.layout import IndexEntry
from aitrail.collector.bundle.vocabulary import NOT_READ_WOULD_DOWNLOAD
from aitrail.collector.bundle.writer import BundleWriter, HeaderFields
from aitrail.collector.finding.secret_inodes import SecretInodes
from aitrail.collector.finding.vetoes import inode_veto
from aitrail.collector.finding.walk import Tree
from aitrail.collector.fs.backend import DATALESS_REASON
from aitrail.collector.fs.meta import Meta, meta_of_stat

CHUNK = 1024 * 1024
# A small file is read with requests of its expected remaining length + 1 (at
# least this much), not CHUNK: a 1 MiB request for a 12 KB file costs an
# allocation of 1 MiB per read(), about twice the time of the read itself.
READ_AT_LEAST = 64 * 1024
HASHED_BY_WRITER = 1024 * 1024  # in-memory files at least this large are hashed on the compressing thread
IN_MEMORY_LIMIT = 16 * 1024 * 1024  # larger files stream straight into the bundle
# A file still growing while read is read to its size at the first lstat plus
# this margin, then left (docs/bundle-format.md, "Files that change while read"):
# a writer that never stops cannot make the run read forever.
GROWTH_MARGIN = 16 * 1024 * 1024
# A large file's holes (SEEK_HOLE) are stored as the zeros they read as, without reading them: a
# sparse 4 GiB file took 13 s of reads of nothing. Their places go to files.jsonl (``holes``), at most
# MAX_HOLES of them (a file of more is read whole, as before).
SEEK_DATA, SEEK_HOLE = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
MAX_HOLES = 10_000
_ZEROS = bytes(CHUNK)


@dataclass
class Capture:
    """What happened when one file was read."""

    # collected | changed_during_read | vanished | permission_denied | read_error | special_file | symlink
    # | never_collect | not_read_would_download
    outcome: str
    before: Meta | None = None
    after: Meta | None = None
    size: int = 0
    sha256: str | None = None  # None for large bytes in ``data``: the writer hashes them (see write_to)
    atime_protection: str | None = None  # what the open had (backend.ATIME_*); None: never opened
    reason: str = ""
    attempts: int = 0
    error: OSError | None = None
    notes: list[str] = field(default_factory=list)
    link_target: bytes | None = None
    data: bytes | None = None  # bytes read, not yet written (a reader thread hands them over)
    holes: list[list[int]] | None = None  # [offset, length] of the holes stored as zeros without reading them
    spool: IO[bytes] | None = None  # the same, for a file that outgrew memory while read

    def write_to(self, writer: BundleWriter, member: str, link_member: str) -> IndexEntry | None:
        """Write what was read to the bundle; the member written, if any.

        For bytes in memory the member's ``sha256`` is filled in by the writer
        once their frame is written (``BundleWriter.end_frame``).
        """
        if self.link_target is not None and self.outcome == "symlink":
            return writer.add_symlink(link_member, self.link_target, tar_meta(self.before))
        if self.data is not None:
            stored = writer.add_bytes(member, self.data, tar_meta(self.before), self.sha256)
            self.data = None
            return stored
        if self.spool is not None:
            with self.spool:
                self.spool.seek(0)
                stored = writer.add_file_object(member, self.spool, self.size, tar_meta(self.before), self.sha256)
            self.spool = None
            return stored
        return None


def tar_meta(meta: Meta) -> HeaderFields:
    """The tar header fields of a file's lstat: the Meta itself, which has every field a header needs."""
    return meta


class Capturer:
    """Reads files of one location through its Tree.

    Small files come back in memory (or, if one grew past the limit while
    read, in a spool) for ``Capture.write_to``; large files are streamed
    straight into the bundle as they are read.
    """

    def __init__(self, tree: Tree, spool_dir: str, writer: BundleWriter,
                 forbidden: SecretInodes | None = None, file_seconds: float | None = None):
        self.tree = tree
        self.backend = tree.backend
        self.writer = writer
        self.spool_dir = spool_dir
        self.forbidden = forbidden if forbidden is not None else SecretInodes({}, [])
        self.file_seconds = file_seconds  # how long one large file may take to read (None: no bound)
        self._deadline = float("inf")
        self._streamed = 0  # bytes of the current large file streamed so far (read, or a hole's zeros)

    def capture(self, parts: tuple[str, ...], member: str) -> Capture:
        """Read one matched path (file or link) and say what happened; ``parts`` names something below the location."""
        name = parts[-1]
        try:
            parent = self.tree.dir_fd(parts[:-1])  # opened without following links
            before = self.backend.lstat_at(parent, name)
        except FileNotFoundError as exc:
            return Capture("vanished", error=exc)
        except OSError as exc:
            return Capture(_failure_outcome(exc), error=exc)
        if before.kind == "symlink":
            return self._capture_link(parent, name, before)
        if before.kind != "file":
            return Capture("special_file", before=before, notes=[f"{before.kind}: recorded from lstat, never opened"])
        return self._capture_regular(parent, name, before, member)

    # -- symlinks -------------------------------------------------------------------

    def _capture_link(self, parent: int, name: str, before: Meta) -> Capture:
        try:
            target = self.backend.readlink(os.fsencode(name), parent)
        except FileNotFoundError as exc:
            return Capture("vanished", before=before, error=exc)
        except OSError as exc:
            return Capture(_failure_outcome(exc), before=before, error=exc)
        return Capture("symlink", before=before, link_target=target, notes=["stored as a link, not followed"])

    # -- regular files --------------------------------------------------------------

    def _open(self, parent: int, name: str) -> tuple[int, str]:
        """The backend's open: (fd, the atime protection it had)."""
        return self.backend.open_file(name, parent)

    def _capture_regular(self, parent: int, name: str, before: Meta, member: str) -> Capture:
        veto = inode_veto(self.forbidden, before)
        if veto is not None:  # the walk leaves a listed file's lstat to here: vetoed before any open
            return Capture("never_collect", before=before, notes=[veto])
        if before.dataless:  # a cloud placeholder: opening it would download it
            return Capture(NOT_READ_WOULD_DOWNLOAD, before=before, reason=DATALESS_REASON)
        try:
            fd, atime_protection = self._open(parent, name)
        except FileNotFoundError as exc:
            return Capture("vanished", before=before, error=exc)
        except OSError as exc:
            if exc.errno == errno_module.ELOOP:
                return Capture("changed_during_read", before=before, error=exc,
                               notes=["replaced by a symlink between lstat and open: not followed"])
            return Capture(_failure_outcome(exc), before=before, error=exc)
        try:
            opened = os.fstat(fd)  # the raw result: a Meta is built only if it differs
            if not stat_module.S_ISREG(opened.st_mode) or opened.st_ino != before.ino or opened.st_dev != before.dev:
                now = meta_of_stat(opened)
                return Capture("changed_during_read", before=before, after=now, atime_protection=atime_protection,
                               notes=[f"replaced between lstat and open (now {now.kind}): not read"])
            veto = self.forbidden.veto(opened.st_dev, opened.st_ino, opened.st_nlink)
            if veto is not None:  # linked since the lstat: the open descriptor is closed unread
                return Capture("never_collect", before=before, atime_protection=atime_protection,
                               notes=[veto.replace(": never opened", ": never read")])
            if before.size <= IN_MEMORY_LIMIT:
                result = self._read_small(fd, before, member)
            else:
                result = self._read_streaming(fd, before, member)
            result.atime_protection = atime_protection
            result.after = self._state_after(parent, name, fd, result)
            if result.after is not None and not before.same_content_state(result.after):
                result.outcome = "changed_during_read"
                result.notes.append("lstat after the read differs from lstat before it")
            if result.size != before.size and result.outcome == "collected":
                result.outcome = "changed_during_read"
            return result
        except OSError as exc:
            return Capture("read_error", before=before, error=exc, atime_protection=atime_protection)
        finally:
            os.close(fd)

    def _state_after(self, parent: int, name: str, fd: int, result: Capture) -> Meta | None:
        after_fd = self.backend.fstat_meta(fd)
        try:
            after_path = os.stat(name, dir_fd=parent, follow_symlinks=False)  # only its inode is compared
        except OSError:
            result.notes.append("path gone or unreadable after the read (file unlinked or renamed)")
            return after_fd
        if after_path.st_ino != after_fd.ino:
            result.notes.append("path names another inode after the read (file replaced)")
        return after_fd

    def _read_small(self, fd: int, before: Meta, member: str) -> Capture:
        """Read to end of file (at most the read limit) into one ``bytes``; hash it (or leave that to the writer)."""
        chunks: list[bytes] = []
        size = 0
        limit = read_limit(before)
        while size < limit:
            chunk = os.read(fd, min(CHUNK, limit - size, max(before.size - size + 1, READ_AT_LEAST)))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > IN_MEMORY_LIMIT:
                return self._continue_in_spool(fd, before, member, chunks, size)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)  # one chunk: no copy
        notes = [] if size == before.size else [f"read {size} bytes, lstat said {before.size}"]
        digest = hashlib.sha256(data).hexdigest() if size < HASHED_BY_WRITER else None
        capture = Capture("collected", before=before, size=size, sha256=digest, attempts=1, data=data, notes=notes)
        _note_if_cut(fd, size, limit, capture)
        return capture

    def _continue_in_spool(self, fd, before, member, chunks: list[bytes], offset: int) -> Capture:
        """A small file that grew past the in-memory limit while being read: spooled, and hashed here."""
        spool = tempfile.TemporaryFile(dir=self.spool_dir)  # closed by Capture.write_to
        hasher = hashlib.sha256()
        for chunk in chunks:
            hasher.update(chunk)
            spool.write(chunk)
        limit = read_limit(before)
        size = _spool_from(fd, offset, spool, hasher, limit)
        capture = Capture("changed_during_read", before=before, size=size, sha256=hasher.hexdigest(), attempts=1,
                          spool=spool, notes=[f"grew while read: read {size} bytes, lstat said {before.size}"])
        _note_if_cut(fd, size, limit, capture)
        return capture

    def _read_streaming(self, fd: int, before: Meta, member: str) -> Capture:
        """Stream a large file with the lstat length (holes as zeros, unread); a spool if the length was wrong."""
        hasher = hashlib.sha256()
        self.writer.begin_stream(member, before.size, tar_meta(before))
        self._deadline = time.monotonic() + self.file_seconds if self.file_seconds else float("inf")
        self._streamed = 0
        holes = data_holes(fd, before.size)
        remaining, position = before.size, 0
        try:
            for hole_start, hole_length in [*holes, [before.size, 0]]:
                if position < hole_start:  # the data before this hole, read
                    os.lseek(fd, position, os.SEEK_SET)
                    remaining -= self._stream_data(fd, hole_start - position, hasher)
                    if remaining != before.size - hole_start:
                        break  # the file ended early: shrank while read
                for start in range(0, hole_length, CHUNK):  # the hole, as the zeros a read would give
                    zeros = _ZEROS if hole_length - start >= CHUNK else _ZEROS[:hole_length - start]
                    hasher.update(zeros)
                    self.writer.write_chunk(zeros)
                    self._streamed += len(zeros)
                    self._check_deadline()
                remaining -= hole_length
                position = hole_start + hole_length
        except _TooSlow as slow:
            self.writer.abort_stream()
            return Capture("read_error", before=before, attempts=1, notes=[
                f"reading stopped after {self.file_seconds:g} s (--max-file-seconds), {slow.offset} of "
                f"{before.size} bytes streamed: not collected (nothing of it is in the bundle); collect it alone "
                "with a larger bound if it is needed"])
        if remaining == 0:
            os.lseek(fd, before.size, os.SEEK_SET)
        grew = not remaining and bool(os.read(fd, 1))
        if not remaining and not grew:
            digest = hasher.hexdigest()
            self.writer.end_stream(digest)
            notes = [f"{len(holes)} hole(s), {sum(length for _, length in holes)} bytes, stored as zeros without "
                     "being read (SEEK_HOLE)"] if holes else []
            return Capture("collected", before=before, size=before.size, sha256=digest, attempts=1,
                           holes=holes or None, notes=notes)
        self.writer.abort_stream()
        why = "grew" if grew else f"shrank ({before.size - remaining} of {before.size} bytes read)"
        capture = self._reread_into_spool(fd, before, member)
        capture.notes.insert(0, f"{why} while read: first read discarded, re-read whole from offset 0")
        return capture

    def _stream_data(self, fd: int, length: int, hasher) -> int:
        """Read up to ``length`` bytes at the offset into the stream; the bytes read (fewer: the file ended)."""
        done = 0
        while done < length:
            chunk = os.read(fd, min(CHUNK, length - done))
            if not chunk:
                break
            hasher.update(chunk)
            self.writer.write_chunk(chunk)
            done += len(chunk)
            self._streamed += len(chunk)
            self._check_deadline()
        return done

    def _check_deadline(self) -> None:
        if time.monotonic() > self._deadline:
            raise _TooSlow(self._streamed)

    def _reread_into_spool(self, fd: int, before: Meta, member: str) -> Capture:
        hasher = hashlib.sha256()
        limit = read_limit(before)
        with tempfile.TemporaryFile(dir=self.spool_dir) as spool:
            size = _spool_from(fd, 0, spool, hasher, limit)
            spool.seek(0)
            digest = hasher.hexdigest()
            self.writer.add_file_object(member, spool, size, tar_meta(before), digest)
        capture = Capture("changed_during_read", before=before, size=size, sha256=digest, attempts=2)
        _note_if_cut(fd, size, limit, capture)
        return capture


class _TooSlow(Exception):
    """A large file's read passed --max-file-seconds at ``offset``."""

    def __init__(self, offset: int):
        super().__init__(offset)
        self.offset = offset


def data_holes(fd: int, size: int) -> list[list[int]]:
    """[offset, length] of each hole below ``size`` (SEEK_DATA/SEEK_HOLE); [] where the system has none or they fail.

    A file with more than MAX_HOLES holes is read whole ([]): the map is
    bounded, and a file that fragmented is no sparse-file attack.
    """
    if SEEK_HOLE is None or SEEK_DATA is None or size == 0:
        return []
    holes: list[list[int]] = []
    try:
        position = 0
        while position < size:
            hole = min(os.lseek(fd, position, SEEK_HOLE), size)
            if hole >= size:
                break
            try:
                data = min(os.lseek(fd, hole, SEEK_DATA), size)
            except OSError as exc:
                if exc.errno != errno_module.ENXIO:  # ENXIO: no data after the hole, it runs to the end
                    raise
                data = size
            holes.append([hole, data - hole])
            if len(holes) > MAX_HOLES:
                return []
            position = data
    except OSError:
        return []
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
    return holes


def read_limit(before: Meta) -> int:
    """How far a file is read: its size at the first lstat plus GROWTH_MARGIN."""
    return before.size + GROWTH_MARGIN


def _note_if_cut(fd: int, size: int, limit: int, capture: Capture) -> None:
    """Say so when the read stopped at the limit while the file still had bytes beyond it."""
    if size < limit:
        return
    try:
        more = bool(os.pread(fd, 1, size))
    except OSError:
        more = False
    if more:
        capture.outcome = "changed_during_read"
        capture.notes.append(f"still growing while read: stored the first {size} bytes (the size at the first "
                             f"lstat plus the {GROWTH_MARGIN}-byte margin); the bytes written after that were not read")


def _spool_from(fd: int, offset: int, spool, hasher, limit: int) -> int:
    """Copy the file from ``offset`` up to ``limit`` (or its end) into the spool, hashing; return the end offset."""
    while offset < limit:
        chunk = os.pread(fd, min(CHUNK, limit - offset), offset)
        if not chunk:
            return offset
        hasher.update(chunk)
        spool.write(chunk)
        offset += len(chunk)
    return offset


def _failure_outcome(exc: OSError) -> str:
    if exc.errno in (errno_module.EACCES, errno_module.EPERM):
        return "permission_denied"
    if exc.errno == errno_module.ENOENT:
        return "vanished"
    return "read_error"
