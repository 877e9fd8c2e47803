"""The subject's tree as a foreign container describes it, made of placeholders the catalog walk can match.

``aitrail import`` matches a container's files against the catalog with the
same planner, walk and outcomes as ``collect --root``. The walk needs a tree
to list, so the importer lays one out in a private directory (mode 0700,
beside the output bundle, removed at the end): one directory per directory
named, one **sparse placeholder** per file (its recorded size, no bytes
written), the links as links, anything else as a FIFO (recorded from lstat,
never opened, as a live run does). Only three kinds of file ever get bytes:

* the few system files that say which host and zone the subject was and who
  its users were (``CONTEXT_FILES``: hostname, passwd, the SYSTEM hive ...),
  read as ``collect --root`` reads an image's, never put in the bundle;
* the agents' settings files that move a root elsewhere (the catalog's
  ``settings`` overrides), which the planner reads before the walk;
* the files the run collects, filled just before they are read.

So a credential the foreign tool took, or anything else the catalog does not
name, never leaves the container. Every name was checked by the reader
(container.subject_path); directories are created and entered one component
at a time with ``O_NOFOLLOW``, so a link the container holds is never
followed, not even one made here.

``StagedBackend`` then gives the walk and the capture the container's own
records in place of the placeholders' lstat: times, mode and owner as the
foreign tool recorded them (the tar header a member gets is made from them),
while the staged inode stays in use for the capture's same-file checks. The
importer replaces those fields that the tool did not record with null
afterwards (run.py), so the bundle never claims what no one recorded.
"""

from __future__ import annotations

import contextlib
import errno as errno_module
import hashlib
import os
import shutil
import stat as stat_module
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import ForeignFile, Problems, Recorded
from aitrail.collector.fs.backend import Backend
from aitrail.collector.fs.meta import Meta

# What collect --root reads of an image to describe it (collector/image/identity.py, homes.py), case-folded
CONTEXT_FILES = frozenset(path.lower() for path in (
    "etc/hostname", "etc/HOSTNAME", "etc/sysconfig/network", "etc/timezone", "etc/localtime", "etc/os-release",
    "etc/passwd", "etc/login.defs", "Library/Preferences/SystemConfiguration/preferences.plist",
    "System/Library/CoreServices/SystemVersion.plist", "Windows/System32/config/SYSTEM",
))
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
FILL_FLAGS = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
CHUNK = 1024 * 1024
_HASHES = {"md5": lambda: hashlib.md5(usedforsecurity=False), "sha1": lambda: hashlib.sha1(usedforsecurity=False),
           "sha256": hashlib.sha256}


@dataclass
class Staged:
    """One placed file: its path below the staging root, the container's record of it, and what was filled."""

    relpath: str
    foreign: ForeignFile
    filled: bool = False
    digests: dict[str, str] = field(default_factory=dict)  # of the bytes the container gave, when filled
    filled_size: int = 0


class Staging:
    """The private placeholder tree of one import (``with Staging(parent) as staging``: removed at the end)."""

    def __init__(self, parent: str):
        self.path = tempfile.mkdtemp(prefix=".aitrail-import-", dir=parent)
        os.chmod(self.path, 0o700)
        self.files: dict[str, Staged] = {}  # relpath -> placed file
        self.by_inode: dict[tuple[int, int], Staged] = {}
        self.by_member: dict[str, list[Staged]] = {}
        self.problems = Problems()
        self.drives: set[str] = set()
        self.pending: list[tuple[str, ForeignFile]] = []  # prepared, not placed (yet): relpath, file
        self.directories: list[tuple[str, ForeignFile]] = []

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove the staging tree (the placeholders and whatever was filled)."""
        shutil.rmtree(self.path, ignore_errors=True)

    # -- placing ---------------------------------------------------------------------

    def prepare(self, files: list[ForeignFile], windows: bool) -> None:
        """Check every path once (problems named here) and keep them, sorted, to be placed."""
        seen: set[str] = set()
        for foreign in sorted(files, key=lambda item: item.path.split("/")):  # siblings together
            relpath = self._relpath(foreign.path, windows)
            if relpath is None:
                continue
            if relpath in seen:
                self.problems.add(f"{foreign.path}: named twice in the container; the first is kept")
                continue
            seen.add(relpath)
            self.pending.append((relpath, foreign))

    def place(self, wanted: Callable[[str, ForeignFile], bool] | None = None) -> None:
        """Lay out the prepared paths ``wanted`` says (every one when None); the others stay pending."""
        rest = []
        with _Chain(self.path) as chain:
            for relpath, foreign in self.pending:
                if wanted is not None and not wanted(relpath, foreign):
                    rest.append((relpath, foreign))
                    continue
                try:
                    self._place_one(relpath, foreign, chain)
                except OSError as exc:
                    self.problems.add(f"{foreign.path}: not placed ({_why(exc)})")
                    continue
                if foreign.kind == "dir":
                    self.directories.append((relpath, foreign))
        self.pending = rest

    def finish(self) -> None:
        """The directories' recorded times, deepest first (a child made later moves its parent's mtime)."""
        for relpath, foreign in sorted(self.directories, key=lambda item: item[0].count("/"), reverse=True):
            with contextlib.suppress(OSError):
                self._set_times(relpath, foreign.recorded)

    def _relpath(self, path: str, windows: bool) -> str | None:
        if windows:
            drive, _, rest = path.partition("/")
            self.drives.add(drive)
            if drive != "C:":
                self.problems.add(f"{path}: on drive {drive}; the catalog's places are on the system drive (C:), "
                                  "so it is not matched")
                return None
            path = "/" + rest
        parts = [part for part in path.split("/") if part]
        if not parts or any(part in (".", "..") for part in parts):
            self.problems.add(f"{path!r}: not a path below the subject's root; left out")
            return None
        return "/".join(parts)

    def _place_one(self, relpath: str, foreign: ForeignFile, chain: _Chain) -> None:
        *parents, name = relpath.split("/")
        parent = chain.enter(parents)
        if foreign.kind == "dir":
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent)
            self.files[relpath] = Staged(relpath, foreign)
            return
        if foreign.kind == "symlink":
            if not foreign.link_target:
                raise OSError(errno_module.EINVAL, "a link whose target the container does not record")
            os.symlink(foreign.link_target, name, dir_fd=parent)
        elif foreign.kind == "file":
            fd = os.open(name, NEW_FILE_FLAGS, 0o600, dir_fd=parent)
            try:
                os.ftruncate(fd, foreign.size)  # sparse: the size the container records, no bytes
            finally:
                os.close(fd)
        else:
            os.mkfifo(name, 0o600, dir_fd=parent)  # a special file: recorded from lstat, never opened
        result = os.stat(name, dir_fd=parent, follow_symlinks=False)
        staged = Staged(relpath, foreign)
        self.files[relpath] = staged
        self.by_inode[(result.st_dev, result.st_ino)] = staged
        if foreign.member is not None and foreign.kind == "file":
            self.by_member.setdefault(foreign.member, []).append(staged)
        if foreign.kind != "symlink":
            _utime(parent, name, foreign.recorded)

    @contextlib.contextmanager
    def _directory(self, parts: list[str], create: bool) -> Iterator[int]:
        """A descriptor of the staging directory ``parts``, entered without following any link."""
        fd = os.open(self.path, DIR_FLAGS)
        try:
            for part in parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o700, dir_fd=fd)
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def _set_times(self, relpath: str, recorded: Recorded) -> None:
        """The placeholder's atime and mtime as recorded (what the walk's own lstat would see), 0 when not."""
        *parents, name = relpath.split("/")
        with self._directory(parents, create=False) as parent:
            _utime(parent, name, recorded)

    # -- filling ---------------------------------------------------------------------

    def context_members(self) -> set[str]:
        """The members holding the system files an image is described by (CONTEXT_FILES)."""
        return {staged.foreign.member for staged in self.files.values()
                if staged.relpath.lower() in CONTEXT_FILES and staged.foreign.member and staged.foreign.kind == "file"}

    def members_ending(self, suffixes: set[str]) -> set[str]:
        """The members of placed files whose path ends with one of ``suffixes`` (``/.agent/settings.json``)."""
        return {staged.foreign.member for staged in self.files.values()
                if staged.foreign.member and staged.foreign.kind == "file"
                and any(("/" + staged.relpath).endswith(suffix) for suffix in suffixes)}

    def fill(self, member: str, stream) -> None:
        """Write a member's bytes into each placeholder it stands for, hashing them as the container gives them."""
        targets = self.by_member.get(member, [])
        if not targets:
            return
        # only what the tool recorded is checked (run.py): the capture takes the SHA-256 of what it stores itself
        wanted = {name for staged in targets for name in staged.foreign.recorded.digests if name in _HASHES}
        hashers = {name: _HASHES[name]() for name in sorted(wanted)}
        first = targets[0]
        size = self._write(first.relpath, stream, hashers)
        digests = {name: hasher.hexdigest() for name, hasher in hashers.items()}
        for staged in targets:
            if staged is not first:
                self._copy(first.relpath, staged.relpath)
            staged.filled, staged.digests, staged.filled_size = True, digests, size
            self._set_times(staged.relpath, staged.foreign.recorded)

    def _write(self, relpath: str, stream, hashers: dict) -> int:
        *parents, name = relpath.split("/")
        size = 0
        with self._directory(parents, create=False) as parent:
            fd = os.open(name, FILL_FLAGS, dir_fd=parent)
            try:
                while chunk := stream.read(CHUNK):
                    for hasher in hashers.values():
                        hasher.update(chunk)
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                    size += len(chunk)
            finally:
                os.close(fd)
        return size

    def _copy(self, source: str, destination: str) -> None:
        with open(os.path.join(self.path, source), "rb") as handle:
            self._write(destination, handle, {})


def _utime(parent: int, name: str, recorded: Recorded) -> None:
    mtime = recorded.mtime_ns or 0
    atime = recorded.atime_ns if recorded.atime_ns is not None else mtime
    os.utime(name, ns=(atime, mtime), dir_fd=parent, follow_symlinks=False)


class _Chain:
    """The open directories of the path being placed: a sibling reuses them (one open per directory, not per file).

    Each component is made (0700) and entered with ``O_NOFOLLOW``: a link the
    container placed is never entered; the chain then stops at the last
    directory it could enter.
    """

    def __init__(self, root: str):
        self.root = root
        self.names: list[str] = []
        self.fds: list[int] = []

    def __enter__(self) -> _Chain:
        self.fds = [os.open(self.root, DIR_FLAGS)]
        return self

    def __exit__(self, *exc) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds, self.names = [], []

    def enter(self, parts: list[str]) -> int:
        """The descriptor of the directory ``parts`` below the root, made where missing."""
        common = 0
        while common < min(len(parts), len(self.names)) and parts[common] == self.names[common]:
            common += 1
        while len(self.names) > common:
            self.names.pop()
            os.close(self.fds.pop())
        for part in parts[common:]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=self.fds[-1])
            self.fds.append(os.open(part, DIR_FLAGS, dir_fd=self.fds[-1]))
            self.names.append(part)
        return self.fds[-1]


def _why(exc: OSError) -> str:
    if exc.errno == errno_module.ELOOP or exc.errno == errno_module.ENOTDIR:
        return "below a link or a file of the container, which is never followed"
    if exc.errno == errno_module.EFBIG:
        return "its recorded size is larger than this filesystem allows"
    return exc.strerror or str(exc)


class StagedBackend(Backend):
    """The run's backend over the staging tree: each placeholder's lstat and fstat carry the container's records.

    Times, mode bits and owner come from the foreign tool's record where it
    has them. Where it has none, the tar header still needs a number: the
    mtime the placeholder was given (0 when not recorded), owner 0, no mode
    bits; run.py replaces those with null in files.jsonl, and verify compares
    only what is recorded. Inode and device stay the placeholder's during
    the run (the capture checks that the file it opened is the one it
    lstat-ed); run.py records the container's inode, or null.
    """

    name = "import"
    atime_protection = "none"
    birth_time_source = "the container's records"
    dataless_check = "none (a container holds no cloud placeholders)"

    def __init__(self, inner: Backend, staging: Staging):
        super().__init__(f"aitrail import (over {inner.name})")
        self.inner, self.staging = inner, staging
        self.birth_time_precision = "as the container records it"

    def open_dir(self, name, parent_fd, follow=False):
        """As the inner backend."""
        return self.inner.open_dir(name, parent_fd, follow)

    def open_file(self, name, parent_fd):
        """As the inner backend (the placeholder is aitrail's own copy: its atime is nobody's evidence)."""
        return self.inner.open_file(name, parent_fd)

    def lstat_at(self, dir_fd, name) -> Meta:
        """The placeholder's lstat with the container's record of the file."""
        return self.recorded(self.inner.lstat_at(dir_fd, name))

    def quick_lstat_at(self, dir_fd, name) -> Meta:
        """The same."""
        return self.recorded(self.inner.quick_lstat_at(dir_fd, name))

    def fstat_meta(self, fd) -> Meta:
        """The same, of an open descriptor."""
        return self.recorded(self.inner.fstat_meta(fd))

    def readlink(self, name, dir_fd):
        """As the inner backend."""
        return self.inner.readlink(name, dir_fd)

    def scandir(self, fd):
        """As the inner backend."""
        return self.inner.scandir(fd)

    def recorded(self, meta: Meta) -> Meta:
        """``meta`` with the container's times, mode bits and owner (placeholders' own where none are recorded)."""
        staged = self.staging.by_inode.get((meta.dev, meta.ino))
        if staged is None:
            return meta  # a directory made for a path, or a file of aitrail's own (never collected)
        record = staged.foreign.recorded
        mode = stat_module.S_IFMT(meta.mode) | ((record.mode & 0o7777) if record.mode is not None else 0)
        return Meta.of((
            mode, meta.ino, meta.dev, meta.nlink,
            record.uid if record.uid is not None else 0, record.gid if record.gid is not None else 0,
            meta.size, record.atime_ns, record.mtime_ns if record.mtime_ns is not None else meta.mtime_ns,
            record.ctime_ns, record.btime_ns,
        ))

    def record(self) -> dict:
        """collection.json's ``platform``: an import reads no subject; the foreign tool did (foreign_custody)."""
        return {**super().record(), "reads": "none of the subject's files: the foreign tool read them "
                                             "(see foreign_custody); aitrail read its container"}
