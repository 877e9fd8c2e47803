"""Expand catalog globs segment by segment, from their literal prefixes.

The walk opens a directory only when a glob needs its contents: a literal
segment is looked up with one ``lstat`` in its parent, a wildcard segment lists
the directory once (listings are cached for the run), and ``**`` descends only
below the literal prefix. Directories are opened by name relative to their
parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY`` through the run's
platform backend (fs/platform.py): on Linux with ``O_NOATIME`` where the
kernel allows it, so listing a directory does not touch its access time;
everywhere so that a directory swapped for a symlink mid-walk is not
followed. Excluded directories are recorded and never opened.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field

from aitrail.collector.finding.descriptors import SHARED, DescriptorPool
from aitrail.collector.finding.plan import Location, Target
from aitrail.collector.fs import platform
from aitrail.collector.fs.backend import Backend
from aitrail.collector.fs.meta import Meta, fsencode

MAX_LINK_HOPS = 40
_TREE_KEYS = itertools.count()  # a tree's key in the descriptor pool: never reused, unlike id()


@dataclass
class Match:
    """One path a glob matched (or a directory an exclude pruned, or an error)."""

    target: Target
    parts: tuple[str, ...]
    kind: str  # file, symlink, fifo, socket, chardev, blockdev, dir, unknown, missing
    meta: Meta | None = None
    excluded_by: str | None = None
    error: OSError | None = None
    note: str = ""

    @property
    def relpath(self) -> str:
        """The matched path below its location, '/'-joined."""
        return "/".join(self.parts)


@dataclass
class WalkStats:
    """What the walk cost: directories opened and listed, lstat calls."""
    directories_opened: int = 0
    directories_listed: int = 0
    directories_without_noatime: int = 0  # every directory opened on a backend without O_NOATIME
    lstat_calls: int = 0
    opened: list[str] = field(default_factory=list)  # kept only when tracing (tests)


class Tree:
    """Read-only view of one location, addressed by relative path tuples."""

    def __init__(self, location: Location, trace: bool = False, backend: Backend | None = None,
                 descriptors: DescriptorPool | None = None):
        self.location = location
        self.backend = backend if backend is not None else platform.current()
        self.stats = WalkStats()
        self._trace = trace
        self._descriptors = descriptors if descriptors is not None else SHARED  # bounded across every tree
        self._key = next(_TREE_KEYS)
        self._listings: dict[tuple[str, ...], list[tuple[str, str]] | OSError] = {}

    # -- descriptors ----------------------------------------------------------

    def _open_dir(self, name: str, parent_fd: int | None, follow: bool = False) -> int:
        fd, noatime = self.backend.open_dir(name, parent_fd, follow)
        if not noatime:  # refused by the kernel (another owner's directory) or absent: the run metadata says so
            self.stats.directories_without_noatime += 1
        self.stats.directories_opened += 1
        return fd

    def _base(self) -> int:
        fd = self._descriptors.get(self._key, ())
        if fd is None:
            anchor = self.location.anchor
            if anchor is None or self.location.base == anchor:
                # The base is chosen by the examiner (a home, an image root): it may be a link.
                fd = self._open_dir(self.location.base, None, follow=True)
            else:
                # A directory elsewhere in an image, named by the subject: opened from the
                # image root one component at a time, never through a link.
                fd = self._open_dir(anchor, None, follow=True)
                for name in os.path.relpath(self.location.base, anchor).split("/"):
                    try:
                        child = self._open_dir(name, fd)
                    finally:
                        os.close(fd)
                    fd = child
            self._descriptors.put(self._key, (), fd)
        return fd

    def dir_fd(self, parts: tuple[str, ...]) -> int:
        """A descriptor for a directory, opened component by component without following links.

        Iterative, from the deepest cached ancestor: no depth of tree can
        exhaust the stack.
        """
        if not parts:
            return self._base()
        cached = self._descriptors.get(self._key, parts)
        if cached is not None:
            return cached
        known = len(parts) - 1
        while known and not self._descriptors.holds(self._key, parts[:known]):
            known -= 1
        fd = self._descriptors.get(self._key, parts[:known]) if known else self._base()
        for depth in range(known + 1, len(parts) + 1):
            # the parent was used last: the pool closes others first (it keeps at least four)
            fd = self._open_dir(parts[depth - 1], fd)
            if self._trace:
                self.stats.opened.append("/".join(parts[:depth]))
            self._descriptors.put(self._key, parts[:depth], fd)
        return fd

    def close(self) -> None:
        """Close every descriptor this tree holds (a later query opens what it needs again)."""
        self._descriptors.close_tree(self._key)

    # -- queries --------------------------------------------------------------

    def lstat(self, parts: tuple[str, ...], birth: bool = False) -> Meta:
        """Lstat relative to the parent's descriptor; ``birth`` adds birth time (slower on Linux: statx)."""
        self.stats.lstat_calls += 1
        if not parts:
            return self.backend.lstat_at(None, self.location.base)
        if birth:
            return self.backend.lstat_at(self.dir_fd(parts[:-1]), parts[-1])
        return self.backend.quick_lstat_at(self.dir_fd(parts[:-1]), parts[-1])

    def real_parts(self, parts: tuple[str, ...]) -> tuple[str, ...] | None:
        """The real path of ``parts`` below this location, every link resolved; None when it leaves.

        Only lstat and readlink, relative to link-free parent descriptors. A
        relative target is taken from the link's directory; an absolute one
        from the location's path on the subject (unknown for a --home
        directory, so such a link is not given a meaning). ``..`` may not
        climb above the location; more than MAX_LINK_HOPS links is a loop.
        """
        done: list[str] = []
        pending, hops = list(parts), 0
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not done:
                    return None
                done.pop()
                continue
            here = (*done, name)
            try:
                kind = self.lstat(here).kind
            except OSError:
                return None
            if kind != "symlink":
                done.append(name)
                continue
            hops += 1
            if hops > MAX_LINK_HOPS:
                return None
            try:
                target = self.backend.readlink(name, self.dir_fd(tuple(done)))
            except OSError:
                return None
            if os.path.isabs(target):
                below = self._below_subject_base(target)
                if below is None:
                    return None
                done, pending = [], below + pending
            else:
                pending = [part for part in target.split("/") if part] + pending
        return tuple(done)

    def _below_subject_base(self, absolute: str) -> list[str] | None:
        base = self.location.subject_base
        if base is None:
            return None
        prefix = [part for part in base.split("/") if part]
        parts = [part for part in absolute.split("/") if part and part != "."]
        return parts[len(prefix):] if parts[: len(prefix)] == prefix else None

    def listdir(self, parts: tuple[str, ...]) -> list[tuple[str, str]]:
        """Sorted (name, kind) pairs; kind from d_type, 'unknown' when the fs does not say."""
        cached = self._listings.get(parts)
        if cached is None:
            try:
                fd = self.dir_fd(parts)
                entries = []
                with self.backend.scandir(fd) as iterator:
                    for entry in iterator:
                        entries.append((entry.name, _entry_kind(entry)))
                entries.sort(key=lambda item: fsencode(item[0]))
                cached = entries
                self.stats.directories_listed += 1
            except OSError as exc:
                cached = exc
            self._listings[parts] = cached
        if isinstance(cached, OSError):
            raise cached
        return cached


def _entry_kind(entry: os.DirEntry) -> str:
    try:
        if entry.is_symlink():
            return "symlink"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        return "unknown"
    return "other"
