"""Expand catalog globs segment by segment, from their literal prefixes.

The walk opens a directory only when a glob needs its contents: a literal
segment is looked up with one ``lstat`` in its parent, a wildcard segment lists
the directory once (listings are cached for the run), and ``**`` descends only
below the literal prefix. Directories are opened by name relative to their
parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY`` and, where the kernel
allows, ``O_NOATIME``, so listing a directory does not touch its access time
and a directory swapped for a symlink mid-walk is not followed. Excluded
directories are recorded and never opened.
"""

from __future__ import annotations

import errno as errno_module
import os
from collections import OrderedDict
from dataclasses import dataclass, field

import pathspec

from aitrail.collector.fsmeta import Meta, lstat_at, quick_lstat_at
from aitrail.collector.globs import is_literal, segment_regex
from aitrail.collector.plan import Location, Target

O_NOATIME = getattr(os, "O_NOATIME", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


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
        return "/".join(self.parts)


@dataclass
class WalkStats:
    directories_opened: int = 0
    directories_listed: int = 0
    directories_without_noatime: int = 0
    lstat_calls: int = 0
    opened: list[str] = field(default_factory=list)  # kept only when tracing (tests)


class Tree:
    """Read-only view of one location, addressed by relative path tuples."""

    def __init__(self, location: Location, trace: bool = False, max_open: int = 64):
        self.location = location
        self.stats = WalkStats()
        self._trace = trace
        self._fds: OrderedDict[tuple[str, ...], int] = OrderedDict()
        self._listings: dict[tuple[str, ...], list[tuple[str, str]] | OSError] = {}
        self._max_open = max_open
        self._base_fd: int | None = None

    # -- descriptors ----------------------------------------------------------

    def _open_dir(self, name: str, parent_fd: int | None, follow: bool = False) -> int:
        flags = _DIR_FLAGS if not follow else (_DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        try:
            fd = os.open(name, flags | O_NOATIME, dir_fd=parent_fd)
        except PermissionError:
            # O_NOATIME is refused on directories we do not own (EPERM); open
            # without it, and count it so the run metadata says so.
            fd = os.open(name, flags, dir_fd=parent_fd)
            self.stats.directories_without_noatime += 1
        self.stats.directories_opened += 1
        return fd

    def dir_fd(self, parts: tuple[str, ...]) -> int:
        """A descriptor for a directory, opened component by component without following links."""
        if parts in self._fds:
            self._fds.move_to_end(parts)
            return self._fds[parts]
        if not parts:
            if self._base_fd is None:
                # The base itself is chosen by the examiner (or an env var): it may be a link.
                self._base_fd = self._open_dir(self.location.base, None, follow=True)
            return self._base_fd
        parent = self.dir_fd(parts[:-1])
        fd = self._open_dir(parts[-1], parent)
        if self._trace:
            self.stats.opened.append("/".join(parts))
        self._fds[parts] = fd
        while len(self._fds) > self._max_open:
            _, old = self._fds.popitem(last=False)
            os.close(old)
        return fd

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._base_fd is not None:
            os.close(self._base_fd)
            self._base_fd = None

    # -- queries --------------------------------------------------------------

    def lstat(self, parts: tuple[str, ...], birth: bool = False) -> Meta:
        """lstat relative to the parent's descriptor; ``birth`` adds statx birth time (slower)."""
        self.stats.lstat_calls += 1
        if not parts:
            return lstat_at(None, self.location.base)
        if birth:
            return lstat_at(self.dir_fd(parts[:-1]), parts[-1])
        return quick_lstat_at(self.dir_fd(parts[:-1]), parts[-1])

    def resolve_link(self, parts: tuple[str, ...]) -> tuple[str, ...] | None:
        """Where a symlink points, as a path below this location, or None when it leaves it.

        Resolved lexically (no component is followed): a relative target against
        the link's directory, an absolute one against the location's path on the
        subject (unknown for a --home directory, so absolute targets are not
        followed there).
        """
        target = os.readlink(parts[-1], dir_fd=self.dir_fd(parts[:-1]))
        if os.path.isabs(target):
            if self.location.subject_base is None:
                return None
            relative = os.path.relpath(os.path.normpath(target), self.location.subject_base)
        else:
            relative = os.path.normpath(os.path.join(*parts[:-1], target) if parts[:-1] else target)
        if relative == ".":
            return ()
        if relative == ".." or relative.startswith("../") or relative.startswith("/"):
            return None
        return tuple(relative.split("/"))

    def listdir(self, parts: tuple[str, ...]) -> list[tuple[str, str]]:
        """Sorted (name, kind) pairs; kind from d_type, 'unknown' when the fs does not say."""
        cached = self._listings.get(parts)
        if cached is None:
            try:
                fd = self.dir_fd(parts)
                entries = []
                with os.scandir(fd) as iterator:
                    for entry in iterator:
                        entries.append((entry.name, _entry_kind(entry)))
                entries.sort(key=lambda item: os.fsencode(item[0]))
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


class Expander:
    """Expands the targets of one location into matches."""

    MAX_LINKS_FOLLOWED = 64  # per glob: a bound on link farms; loops are stopped by `_followed`

    def __init__(self, tree: Tree):
        self.tree = tree
        self._followed: set[tuple] = set()

    def expand(self, target: Target) -> list[Match]:
        matches: list[Match] = []
        self._followed = set()
        spec = _ExcludeSpec(target.excludes, target.refines)
        self._walk(target, spec, (), target.segments, matches)
        return matches

    def _walk(self, target, spec, here, segments, out) -> None:
        segment, rest = segments[0], segments[1:]
        if segment == "**":
            self._walk_globstar(target, spec, here, rest, out)
        elif is_literal(segment):
            self._visit(target, spec, here + (segment,), None, rest, out)
        else:
            pattern = segment_regex(segment)
            for name, kind in self._children(target, here, out):
                if pattern.match(name):
                    self._visit(target, spec, here + (name,), kind, rest, out)

    def _walk_globstar(self, target, spec, here, rest, out) -> None:
        if not rest:
            # a trailing ** is every file below here
            for name, kind in self._children(target, here, out):
                self._visit(target, spec, here + (name,), kind, ("**",) if kind in ("dir", "unknown") else (), out)
            return
        self._walk(target, spec, here, rest, out)
        for name, kind in self._children(target, here, out):
            if kind in ("dir", "unknown"):
                child = here + (name,)
                if self._pruned(target, spec, child, out):
                    continue
                if kind == "unknown" and not self._is_dir(child):
                    continue
                self._walk_globstar(target, spec, child, rest, out)
            elif kind == "symlink" and self._could_match_link(rest, name):
                self._visit(target, spec, here + (name,), kind, (), out)

    def _link_on_the_way(self, target, spec, parts, meta, rest, out) -> None:
        """Record a directory link met on the way to a store; walk its target if it stays in the location.

        The link is stored as a link. Its target is walked, under its own real
        path (so the files are named where they are), only when it resolves
        inside the same home or image; never outside. Each (target, remaining
        glob) is walked once, which ends loops.
        """
        link = Match(target, parts, "symlink", meta=meta)
        out.append(link)
        try:
            resolved = self.tree.resolve_link(parts)
        except OSError:
            resolved = None
        key = (resolved, rest)
        if resolved is None:
            link.note = "symlink on the way to a store: its target is outside this location, not followed"
            return
        if key in self._followed or len(self._followed) >= self.MAX_LINKS_FOLLOWED:
            link.note = "symlink on the way to a store: target already walked (loop or repeat), not followed again"
            return
        self._followed.add(key)
        link.note = f"symlink on the way to a store: target {'/'.join(resolved) or '.'} walked under its own path"
        first = len(out)
        if resolved and not self._is_dir(resolved):
            return
        if not resolved or not self._pruned(target, spec, resolved, out):
            self._walk(target, spec, resolved, rest, out)
        for match in out[first:]:
            via = f"reached through symlink {'/'.join(parts)}"
            match.note = f"{match.note}; {via}" if match.note else via

    @staticmethod
    def _could_match_link(rest: tuple[str, ...], name: str) -> bool:
        # A link met during ** descent is recorded when it could stand for the
        # file the glob names or for a directory on the way to it.
        return len(rest) > 1 or rest[0] == "**" or bool(segment_regex(rest[0]).match(name))

    def _children(self, target, here, out) -> list[tuple[str, str]]:
        try:
            return self.tree.listdir(here)
        except FileNotFoundError:
            return []
        except OSError as exc:
            if exc.errno in (errno_module.ENOTDIR, errno_module.ELOOP):
                return []
            out.append(Match(target, here, "dir", error=exc, note="directory could not be listed"))
            return []

    def _is_dir(self, parts) -> bool:
        try:
            return self.tree.lstat(parts).kind == "dir"
        except OSError:
            return False

    def _pruned(self, target, spec, parts, out) -> bool:
        path = "/".join(parts)
        if spec.refined_out(path, is_dir=True):
            return True
        rule = spec.rule_for(path, is_dir=True)
        if rule is None:
            return False
        meta = None
        try:
            meta = self.tree.lstat(parts)
        except OSError:
            pass
        out.append(Match(target, parts, "dir", meta=meta, excluded_by=rule, note="directory pruned, never opened"))
        return True

    def _visit(self, target, spec, parts, kind, rest, out) -> None:
        """Handle one candidate path: descend, record, or ignore."""
        if rest:
            if kind not in (None, "dir", "unknown", "symlink"):
                return
            if kind in (None, "unknown", "symlink"):
                try:
                    meta = self.tree.lstat(parts)
                except FileNotFoundError:
                    return
                except OSError as exc:
                    if exc.errno != errno_module.ENOTDIR:
                        out.append(Match(target, parts, "unknown", error=exc, note="could not be examined"))
                    return
                kind = meta.kind
                if kind == "symlink":
                    self._link_on_the_way(target, spec, parts, meta, rest, out)
                    return
                if kind != "dir":
                    return
            if not self._pruned(target, spec, parts, out):
                self._walk(target, spec, parts, rest, out)
            return
        if kind == "dir":
            return
        try:
            meta = self.tree.lstat(parts)
        except FileNotFoundError:
            if kind is not None:
                out.append(Match(target, parts, "missing", error=FileNotFoundError(errno_module.ENOENT, "vanished during the walk")))
            return
        except OSError as exc:
            if exc.errno != errno_module.ENOTDIR:
                out.append(Match(target, parts, "unknown", error=exc, note="could not be examined"))
            return
        if meta.kind == "dir":
            return
        path = "/".join(parts)
        if spec.refined_out(path, is_dir=False):
            return
        rule = spec.rule_for(path, is_dir=False)
        out.append(Match(target, parts, meta.kind, meta=meta, excluded_by=rule))


class _ExcludeSpec:
    """gitwildmatch excludes, one compiled spec per pattern so the rule can be named.

    Root excludes are recorded when they prune something; store excludes only
    narrow what the store's globs mean, so what they remove is not a match.
    """

    def __init__(self, patterns: tuple[str, ...], refines: tuple[str, ...] = ()):
        self._patterns = patterns
        self._any = _compile(patterns) if patterns else None  # one quick test; the rule is named only on a hit
        self._refine = _compile(refines) if refines else None

    def refined_out(self, path: str, is_dir: bool) -> bool:
        return self._refine is not None and self._refine.match_file(path + "/" if is_dir else path)

    def rule_for(self, path: str, is_dir: bool) -> str | None:
        candidate = path + "/" if is_dir else path
        if self._any is None or not self._any.match_file(candidate):
            return None
        for pattern in self._patterns:
            if _compile((pattern,)).match_file(candidate):
                return pattern.lstrip("/")
        return None


_COMPILED: dict[tuple[str, ...], pathspec.PathSpec] = {}


def _compile(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    spec = _COMPILED.get(patterns)
    if spec is None:
        spec = _COMPILED[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
    return spec
