"""Where a path the subject named really is, resolved without ever leaving the jail.

A *jail* is the directory nothing may leave: the home in live and ``--home``
collection, the image root under ``--root``. Roots named by the catalog, an
environment variable or a settings key are resolved here component by
component with ``lstat`` and ``readlink`` only (nothing is opened, nothing is
read): a relative link is followed from its directory, an absolute one from
the jail's own path on the subject (the image root under ``--root``, the home
itself when live; unknown, so refused, under ``--home``). ``..`` may not climb
out of a home; at the image root it stays there, as in a chroot. What would
leave the jail raises :class:`Escape` naming why.
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_module
from dataclasses import dataclass

MAX_LINK_HOPS = 40  # as the kernel's ELOOP limit

# Top-level directories of an image that hold the system, not any user's agent
# data: a relocated root there is refused (a settings key saying "/etc" is an
# attack, not a configuration).
SYSTEM_DIRECTORIES = frozenset({
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "sys", "usr", "var",
    "System", "Windows", "Program Files", "Program Files (x86)", "ProgramData",
})


class Escape(ValueError):
    """The path leaves the jail, loops, or cannot be given a meaning; ``str()`` says which."""


@dataclass(frozen=True)
class Jail:
    """The directory a resolution may not leave, on this machine and as the subject sees it."""

    real: str  # real path on the collecting machine (trusted: chosen by the examiner)
    subject: str | None  # the same directory on the subject ("/" for an image root); None under --home
    chroot: bool = False  # True for an image root: '..' at the top stays at the top

    def contains(self, path: str) -> bool:
        """True when ``path`` is the jail itself or below it."""
        return path == self.real or path.startswith(self.real.rstrip("/") + "/")

    def relative(self, path: str) -> str:
        """``path`` (inside the jail) relative to the jail, '' for the jail itself."""
        return "" if path == self.real else posixpath.relpath(path, self.real)

    def subject_components(self, absolute: str) -> list[str]:
        """The components of a subject's absolute path below the jail; Escape when it is not below it."""
        if self.subject is None:
            raise Escape(f"absolute path {absolute!r}: where this directory was on the subject is not known "
                         "(--home), so its meaning is not known")
        parts = _components(absolute)
        prefix = _components(self.subject)
        if parts[: len(prefix)] != prefix:
            raise Escape(f"{absolute!r} is outside {self.subject}")
        return parts[len(prefix):]


def _components(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def resolve(jail: Jail, start: str, relative: str) -> tuple[str, list[str]]:
    """The real path of ``relative`` below ``start`` (a link-free directory inside the jail).

    Returns the real path and the links met on the way (as paths on this
    machine, in order). A component that does not exist ends the resolution:
    the rest is joined lexically (nothing can be a link there yet). Raises
    Escape when the path leaves the jail, names an absolute target whose
    meaning is unknown, or passes more than MAX_LINK_HOPS links.
    """
    if not jail.contains(start):
        raise Escape(f"{start} is outside {jail.real}")
    path, pending, hops, links = start, _split(relative), 0, []
    if posixpath.isabs(relative):
        path, pending = jail.real, jail.subject_components(relative)
    while pending:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            path = _parent(jail, path)
            continue
        candidate = posixpath.join(path, name)
        try:
            info = os.lstat(candidate)
        except OSError:
            return _lexical_rest(jail, candidate, pending), links
        if stat_module.S_ISLNK(info.st_mode):
            hops += 1
            if hops > MAX_LINK_HOPS:
                raise Escape(f"more than {MAX_LINK_HOPS} symbolic links (a loop?) at {candidate}")
            links.append(candidate)
            target = os.readlink(candidate)
            if posixpath.isabs(target):
                path, pending = jail.real, jail.subject_components(target) + pending
            else:
                pending = _split(target) + pending
            continue
        path = candidate
    return path, links


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def _parent(jail: Jail, path: str) -> str:
    if path == jail.real:
        if jail.chroot:
            return path  # '/..' is '/' inside the image, as on the subject
        raise Escape(f"'..' climbs out of {jail.real}")
    return posixpath.dirname(path)


def _lexical_rest(jail: Jail, candidate: str, pending: list[str]) -> str:
    """Join what is left of a path whose first missing component is ``candidate``."""
    path = candidate
    for name in pending:
        path = _parent(jail, path) if name == ".." else posixpath.join(path, name)
    return path


def is_system_directory(jail: Jail, path: str) -> bool:
    """True for an image root itself or anything below one of its system directories."""
    if not jail.chroot:
        return False
    relative = jail.relative(path)
    return relative == "" or relative.split("/", 1)[0] in SYSTEM_DIRECTORIES


def home_or_above(path: str, home: str) -> bool:
    """True when ``path`` is the home itself or one of its ancestors."""
    return home == path or home.startswith(path.rstrip("/") + "/")
