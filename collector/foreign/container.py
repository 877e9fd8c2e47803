"""What another collector's container holds, as ``aitrail import`` reads it (docs/importing.md).

A container is what UAC, KAPE, Velociraptor or acquire left: an archive (tar,
tar.gz, tar.bz2, tar.xz, zip) or a directory. Each tool's reader (uac.py,
kape.py, velociraptor.py, acquire.py) turns it into ``ForeignFile`` records:
the subject's path as the tool recorded it, the kind, the size, and what the
tool recorded about the file (times, mode, owner, inode, digests) with where
that came from. The importer (run.py) matches those paths against the catalog
exactly as a live run matches a home, and reads only the bytes of what it
collects.

The container is not trusted: every name, size, count and record is bounded
here or in the reader, a name that would leave the subject's tree is a named
problem (``problems``), and nothing is ever extracted to a path built from a
member's name.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO

MAX_MEMBERS = 2_000_000  # more members than any collection of agent data; a container of more is refused
MAX_NAME_BYTES = 4096  # PATH_MAX: a longer member name is a problem, not a path
MAX_SIZE = 1 << 43  # 8 TiB: a member claiming more is a problem (a placeholder of it could not be made)
MAX_KEPT_BYTES = 256 * 1024 * 1024  # the tool's own records (bodyfile, logs, copy logs) read into memory, together
MAX_PROBLEMS = 1000  # named problems kept; past this only counted
CHUNK = 1024 * 1024


def _zlib_error() -> type[Exception]:
    import zlib

    return zlib.error


# What a damaged tar or zip raises from tarfile, zipfile and the decompressors while it is read
STREAM_ERRORS = (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
                 ValueError, _zlib_error())


class ContainerError(ValueError):
    """The container cannot be read at all (not an archive of a known kind, too many members)."""


@dataclass
class Recorded:
    """What the foreign tool recorded about one file; None: not recorded.

    Times are nanoseconds since the epoch (UTC). ``digests`` maps an
    algorithm (``md5``, ``sha1``, ``sha256``) to the lowercase hex the tool
    wrote. ``sources`` says, per field, which of the tool's records gave it
    (``"tar header"``, ``"bodyfile/bodyfile.txt line 12"``, ...).
    """

    mtime_ns: int | None = None
    atime_ns: int | None = None
    ctime_ns: int | None = None
    btime_ns: int | None = None
    mode: int | None = None  # permission bits and type, as st_mode; None where the tool records none (Windows)
    uid: int | None = None
    gid: int | None = None
    ino: int | None = None
    digests: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict:
        """The ``container_record`` object of files.jsonl (fields the tool did not record are left out)."""
        record: dict = {key: getattr(self, key) for key in
                        ("mtime_ns", "atime_ns", "ctime_ns", "btime_ns", "uid", "gid", "ino")
                        if getattr(self, key) is not None}
        if self.mode is not None:
            record["mode"] = f"{self.mode:o}"
        if self.digests:
            record["digests"] = dict(sorted(self.digests.items()))
        if self.sources:
            record["sources"] = dict(sorted(self.sources.items()))
        return record


@dataclass
class ForeignFile:
    """One file, directory or link of the subject as the container holds it.

    ``path`` is the subject's absolute path with ``/`` separators: ``/home/alice/.agent/history.jsonl``
    on Linux and macOS, ``C:/Users/alice/.agent/history.jsonl`` on Windows (a drive letter and a colon
    first). ``member`` names what holds its bytes in the container (None: the tool recorded the file but
    did not copy it). ``kind`` is ``file``, ``dir``, ``symlink`` or ``special``.
    """

    path: str
    kind: str
    size: int
    member: str | None
    recorded: Recorded
    link_target: str | None = None


@dataclass
class ArchiveEntry:
    """One member of an archive, as its headers say (tar) or its directory entry (zip)."""

    name: str
    kind: str  # file, dir, symlink, special
    size: int
    mtime_ns: int | None
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    atime_ns: int | None = None
    ctime_ns: int | None = None
    linkname: str | None = None
    offset: int | None = None  # tar: where the member's data starts in the uncompressed stream (None: sparse)


class Archive:
    """A tar (any compression tarfile knows), a zip or a directory, read with bounds and never extracted.

    ``scan`` lists the members once (keeping the bytes of the few the reader
    asks for: the tool's own records); ``stream`` then yields the bytes of the
    chosen members in the archive's order, in one more pass, so a tar.gz is
    decompressed twice at most whatever is chosen.
    """

    def __init__(self, path: str):
        self.path = path
        self.kind = _archive_kind(path)
        self.entries: list[ArchiveEntry] = []
        self.kept: dict[str, bytes] = {}
        self._kept_bytes = 0
        self.problems = Problems()
        self._data_at: dict[str, tuple[int, int]] = {}  # tar: name -> (offset, size) of its first regular member

    def scan(self, keep: Callable[[str], bool] = lambda name: False) -> list[ArchiveEntry]:
        """Every member (bounded), keeping the bytes of those ``keep`` names (MAX_KEPT_BYTES in all)."""
        scanner = {"tar": self._scan_tar, "zip": self._scan_zip, "dir": self._scan_dir}[self.kind]
        scanner(keep)
        return self.entries

    def stream(self, names: set[str]) -> Iterator[tuple[str, IO[bytes]]]:
        """(name, readable) for each chosen member, in the archive's order; read each before the next.

        A name the archive holds twice gives its first member only (the one
        ``scan`` listed first, whose record the reader kept). Damage met on
        the way is a named problem and ends the pass: the members not given
        stay unread, and the importer records them so.
        """
        if not names:
            return
        given: set[str] = set()
        try:
            for name, handle in self._members(names):
                if name not in given:
                    given.add(name)
                    yield name, handle
        except STREAM_ERRORS as exc:
            self.problems.add(f"{os.path.basename(self.path)}: damage met while reading the chosen members "
                              f"({type(exc).__name__}: {exc}); {len(names - given)} of them not read")

    def _members(self, names: set[str]) -> Iterator[tuple[str, IO[bytes]]]:
        if self.kind == "tar" and names <= self._data_at.keys():
            yield from self._tar_members_at_offsets(names)
        elif self.kind == "tar":
            with tarfile.open(self.path, "r|*") as archive:
                for info in archive:
                    if info.name in names and info.isreg():
                        handle = archive.extractfile(info)
                        if handle is not None:
                            yield info.name, handle
        elif self.kind == "zip":
            with zipfile.ZipFile(self.path) as archive:
                for info in archive.infolist():
                    if info.filename in names and not info.is_dir():
                        try:
                            handle = archive.open(info)
                        except STREAM_ERRORS as exc:  # one member's header or method: the next are still read
                            self.problems.add(f"member {info.filename!r}: not readable ({type(exc).__name__}: {exc})")
                            continue
                        with handle:
                            yield info.filename, handle
        else:
            for name in sorted(names):
                fd = _open_below(self.path, name)
                if fd is None:
                    self.problems.add(f"{name}: gone, or no longer a regular file, when it was read")
                    continue
                with os.fdopen(fd, "rb") as handle:
                    yield name, handle

    def _tar_members_at_offsets(self, names: set[str]) -> Iterator[tuple[str, IO[bytes]]]:
        """The chosen members read where the scan saw their data, with no tar header parsed again.

        Parsing 30,000 pax headers again in Python took 10 s of an import's
        48 (bench/import_bench.py); skipping to each member's data in the
        decompressed stream takes the decompression's time alone.
        """
        chosen = sorted((*self._data_at[name], name) for name in names)
        with _open_stream(self.path) as raw:
            position = 0
            for offset, size, name in chosen:
                _skip(raw, offset - position)
                member = _Bounded(raw, size, name)
                yield name, member
                _skip(raw, member.left)  # what the reader of the member left unread
                position = offset + size

    # -- scanning ----------------------------------------------------------------------

    def _add(self, entry: ArchiveEntry) -> bool:
        if len(self.entries) >= MAX_MEMBERS:
            raise ContainerError(f"{self.path}: more than {MAX_MEMBERS} members; refused")
        if len(os.fsencode(entry.name)) > MAX_NAME_BYTES or "\0" in entry.name:
            self.problems.add(f"member {entry.name[:200]!r}: name longer than {MAX_NAME_BYTES} bytes or holding NUL; "
                              "left out")
            return False
        if entry.size < 0 or entry.size > MAX_SIZE:
            self.problems.add(f"member {entry.name}: size {entry.size} out of range; left out")
            return False
        self.entries.append(entry)
        return True

    def _keep(self, name: str, data: bytes) -> None:
        if self._kept_bytes + len(data) > MAX_KEPT_BYTES:
            self.problems.add(f"member {name}: the tool's records exceed {MAX_KEPT_BYTES} bytes in all; not read")
            return
        self.kept[name] = data
        self._kept_bytes += len(data)

    def _scan_tar(self, keep: Callable[[str], bool]) -> None:
        try:
            with tarfile.open(self.path, "r|*") as archive:
                for info in archive:
                    entry = _tar_entry(info)
                    added = self._add(entry)
                    if added and entry.kind == "file" and entry.offset is not None:
                        self._data_at.setdefault(entry.name, (entry.offset, entry.size))
                    if added and entry.kind == "file" and keep(entry.name):
                        handle = archive.extractfile(info)
                        if handle is not None:
                            self._keep(entry.name, handle.read(MAX_KEPT_BYTES + 1))
        except ContainerError:
            raise
        except STREAM_ERRORS as exc:
            self.problems.add(f"{os.path.basename(self.path)}: the archive ends in damage after "
                              f"{len(self.entries)} members ({exc}); the members before it are read")

    def _scan_zip(self, keep: Callable[[str], bool]) -> None:
        try:
            archive = zipfile.ZipFile(self.path)
        except ContainerError:
            raise
        except STREAM_ERRORS as exc:
            raise ContainerError(f"{self.path}: not readable ({type(exc).__name__}: {exc})") from None
        with archive:
            for info in archive.infolist():
                entry = _zip_entry(info)
                if self._add(entry) and entry.kind == "file" and keep(entry.name):
                    try:
                        with archive.open(info) as handle:
                            self._keep(entry.name, handle.read(MAX_KEPT_BYTES + 1))
                    except STREAM_ERRORS as exc:
                        self.problems.add(f"member {entry.name}: unreadable ({exc})")

    def _scan_dir(self, keep: Callable[[str], bool]) -> None:
        root_device = os.lstat(self.path).st_dev
        stack = [""]
        while stack:
            relative = stack.pop()
            try:
                with os.scandir(os.path.join(self.path, relative) if relative else self.path) as listing:
                    children = sorted(listing, key=lambda item: item.name)
            except OSError as exc:
                self.problems.add(f"{relative or '.'}: not listed ({exc.strerror})")
                continue
            for child in children:
                name = f"{relative}/{child.name}" if relative else child.name
                try:
                    result = child.stat(follow_symlinks=False)
                except OSError as exc:
                    self.problems.add(f"{name}: no lstat ({exc.strerror})")
                    continue
                entry = _dir_entry(name, result, self.path)
                if not self._add(entry):
                    continue
                if entry.kind == "dir" and result.st_dev == root_device:
                    stack.append(name)
                elif entry.kind == "file" and keep(name):
                    fd = _open_below(self.path, name)
                    if fd is not None:
                        with os.fdopen(fd, "rb") as handle:
                            self._keep(name, handle.read(MAX_KEPT_BYTES + 1))


class Problems(list):
    """Named problems, at most MAX_PROBLEMS kept (the rest counted in a last line)."""

    dropped = 0

    def add(self, text: str) -> None:
        """Keep one problem (or count it past the bound)."""
        if len(self) < MAX_PROBLEMS:
            self.append(text)
        else:
            self.dropped += 1

    def closed(self) -> list[str]:
        """The problems, with a last line counting those left out."""
        return list(self) + ([f"{self.dropped} more problems not listed"] if self.dropped else [])


def _archive_kind(path: str) -> str:
    try:
        result = os.stat(path)
    except OSError as exc:
        raise ContainerError(f"{path}: {exc.strerror}") from None
    if stat_module.S_ISDIR(result.st_mode):
        return "dir"
    if not stat_module.S_ISREG(result.st_mode):
        raise ContainerError(f"{path}: neither a directory nor a regular file")
    if zipfile.is_zipfile(path):
        return "zip"
    try:
        with tarfile.open(path, "r|*"):
            return "tar"
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ContainerError(f"{path}: not a tar (plain, gzip, bzip2, xz) or zip archive ({exc})") from None


def _ns(seconds: float | int | str | None) -> int | None:
    """Nanoseconds of a tar time: a pax record's decimal text exactly (a float would lose the last digits)."""
    if seconds is None:
        return None
    if isinstance(seconds, str):
        whole, _, fraction = seconds.strip().partition(".")
        if not whole.lstrip("-").isdigit() or (fraction and not fraction.isdigit()):
            return None
        sign = -1 if whole.startswith("-") else 1
        return sign * (abs(int(whole)) * 1_000_000_000 + int((fraction + "000000000")[:9]))
    try:
        return int(round(float(seconds) * 1_000_000_000))
    except (TypeError, ValueError, OverflowError):
        return None


def _tar_entry(info: tarfile.TarInfo) -> ArchiveEntry:
    kind = "file" if info.isreg() else "dir" if info.isdir() else "symlink" if info.issym() else "special"
    pax = info.pax_headers or {}
    return ArchiveEntry(
        name=info.name, kind=kind, size=info.size if kind == "file" else 0,
        mtime_ns=_ns(pax.get("mtime", info.mtime)), mode=(info.mode & 0o7777) | _TYPE_BITS[kind],
        uid=info.uid, gid=info.gid, atime_ns=_ns(pax.get("atime")), ctime_ns=_ns(pax.get("ctime")),
        linkname=info.linkname if kind == "symlink" else None,
        offset=info.offset_data if kind == "file" and not info.sparse else None)


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "lzma"))


def _open_stream(path: str) -> IO[bytes]:
    """The tar's uncompressed stream (gzip, bzip2, xz or none, by its magic, as tarfile decides)."""
    with open(path, "rb") as handle:
        head = handle.read(6)
    for magic, module_name in _MAGIC:
        if head.startswith(magic):
            module = __import__(module_name)
            return module.open(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - closed by the caller's with


def _skip(stream: IO[bytes], count: int) -> None:
    """Move ``count`` bytes forward (a compressed stream decompresses them); EOFError if the stream ends first."""
    while count > 0:
        data = stream.read(min(count, CHUNK))
        if not data:
            raise EOFError("the archive ends before a member's data")
        count -= len(data)


class _Bounded:
    """``size`` bytes of a stream, as one member; EOFError if the stream ends inside them (a cut archive)."""

    def __init__(self, stream: IO[bytes], size: int, name: str):
        self.stream, self.left, self.name = stream, size, name

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the member (all that is left for -1)."""
        if size is None or size < 0:
            return b"".join(iter(lambda: self.read(CHUNK), b""))
        wanted = min(size, self.left)
        if wanted <= 0:
            return b""
        data = self.stream.read(wanted)
        if not data:
            raise EOFError(f"the archive ends inside member {self.name} ({self.left} bytes of it missing)")
        self.left -= len(data)
        return data


_TYPE_BITS = {"file": stat_module.S_IFREG, "dir": stat_module.S_IFDIR, "symlink": stat_module.S_IFLNK, "special": 0}


def _zip_entry(info: zipfile.ZipInfo) -> ArchiveEntry:
    import calendar

    kind = "dir" if info.is_dir() else "file"
    unix_mode = info.external_attr >> 16 if info.create_system == 3 else 0
    if stat_module.S_ISLNK(unix_mode):
        kind = "symlink"
    try:  # a zip's DOS time is local time with no zone; taken as UTC and said so by each reader that uses it
        mtime = calendar.timegm((*info.date_time, 0, 0, 0)) * 1_000_000_000
    except (ValueError, OverflowError):
        mtime = None
    return ArchiveEntry(name=info.filename, kind=kind, size=info.file_size if kind == "file" else 0,
                        mtime_ns=mtime, mode=unix_mode or None)


def _dir_entry(name: str, result: os.stat_result, base: str) -> ArchiveEntry:
    kind = ("file" if stat_module.S_ISREG(result.st_mode) else "dir" if stat_module.S_ISDIR(result.st_mode)
            else "symlink" if stat_module.S_ISLNK(result.st_mode) else "special")
    link = None
    if kind == "symlink":
        try:
            link = os.readlink(os.path.join(base, name))
        except OSError:
            link = None
    return ArchiveEntry(name=name, kind=kind, size=result.st_size if kind == "file" else 0,
                        mtime_ns=result.st_mtime_ns, mode=result.st_mode, uid=result.st_uid, gid=result.st_gid,
                        atime_ns=result.st_atime_ns, ctime_ns=result.st_ctime_ns, linkname=link)


def _open_below(base: str, name: str) -> int | None:
    """Open ``base/name`` to read, never through a link at any component; None if it is not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOATIME", 0) | getattr(os, "O_NONBLOCK", 0)
    parts = [part for part in name.split("/") if part]
    if any(part in (".", "..") for part in parts) or not parts:
        return None
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
            os.close(fd)
            fd = child
        try:
            opened = os.open(parts[-1], flags, dir_fd=fd)
        except PermissionError:  # O_NOATIME needs ownership; a copy the examiner does not own is read without it
            opened = os.open(parts[-1], flags & ~getattr(os, "O_NOATIME", 0), dir_fd=fd)
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    if not stat_module.S_ISREG(os.fstat(opened).st_mode):
        os.close(opened)
        return None
    return opened


def subject_path(name: str, prefix: str, windows: bool = False) -> str | None:
    """The subject's path of a member named ``prefix`` + rest; None when the rest could leave the subject's tree.

    ``..`` and ``.`` components, backslashes standing for separators and
    empty names are refused (the caller names the problem). On Windows the
    first component of the rest is the drive (``C`` or ``C:``, as the tools
    write it), given back as ``C:``.
    """
    if not name.startswith(prefix):
        return None
    parts = [part for part in name[len(prefix):].split("/") if part]
    if not parts or any(part in (".", "..") or "\\" in part for part in parts):
        return None
    if windows:
        drive = parts[0].rstrip(":")
        if len(drive) != 1 or not drive.isalpha():
            return None
        return "/".join([drive.upper() + ":", *parts[1:]])
    return "/" + "/".join(parts)


def file_sha256(path: str) -> tuple[str, int]:
    """The SHA-256 and size of a container file (the container's own digest, recorded in collection.json)."""
    hasher = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size


class Container:
    """One foreign collection, read by a tool's reader; subclasses fill ``files`` and the custody facts.

    Attributes:
        tool: ``uac``, ``kape``, ``velociraptor`` or ``acquire``.
        tool_version: the version the container states, or None.
        layout: how the container lays files out (``[root]/ tree``, ``uploads/auto/``, ...).
        windows: the subject paths are Windows paths (``C:/...``).
        metadata: what the container says of the collection (host name, times, command line, ...),
            each value with where it was read.
        recorded_fields: per field (``mtime``, ``atime``, ``ctime``, ``btime``, ``mode``, ``owner``,
            ``inode``, ``md5``, ``sha1``, ``sha256``), where this tool records it, or ``not recorded``.
        hostname: the subject's host name as the container states it, with ``hostname_source``.
    """

    tool = ""
    layout = ""
    windows = False

    def __init__(self, path: str):
        self.path = path
        self.archive = Archive(path)
        self.tool_version: str | None = None
        self.metadata: dict = {}
        self.recorded_fields: dict[str, str] = {}
        self.hostname: str | None = None
        self.hostname_source: str | None = None
        self.files: list[ForeignFile] = []

    @property
    def problems(self) -> Problems:
        """The named problems met reading the container (the archive's and the reader's)."""
        return self.archive.problems

    def read(self) -> None:
        """Scan the container and fill ``files`` and the custody facts (each reader implements it)."""
        raise NotImplementedError

    def stream(self, members: set[str]) -> Iterator[tuple[str, IO[bytes]]]:
        """The bytes of the chosen members, in the container's order."""
        return self.archive.stream(members)

    def custody(self) -> dict:
        """The ``foreign_custody`` facts of collection.json that the reader knows."""
        return {"tool": self.tool, "tool_version": self.tool_version, "layout": self.layout,
                "container_kind": self.archive.kind, "metadata": self.metadata,
                "recorded_fields": dict(sorted(self.recorded_fields.items()))}
