"""Small files of a mounted image read as the image's own system would find them, never outside it.

A path is resolved inside the image (``contain.resolve`` with the image as a
chroot jail: an absolute link means the image's own ``/``), then opened with
``O_NOFOLLOW | O_NONBLOCK`` (a link or FIFO put there after the resolution is
neither followed nor waited on) and, where the kernel allows, ``O_NOATIME``
(through the run's platform backend, as the collection's own reads);
only a regular file is read, and never more than the caller's limit. Nothing
here raises for what the image holds: a missing, odd or oversized file is
``None`` with the reason.
"""

from __future__ import annotations

import os
import stat as stat_module
from dataclasses import dataclass

from aitrail.collector.finding import contain
from aitrail.collector.fs import platform

MAX_NAMES_LISTED = 10_000  # a directory searched for a name case-insensitively: at most this many entries


@dataclass(frozen=True)
class ImageFile:
    """What reading one file of the image gave: its bytes, or why not."""

    path: str  # the path inside the image, as asked ('/etc/hostname')
    data: bytes | None
    problem: str = ""


def image_jail(root: str) -> contain.Jail:
    """The image as a jail: its real path here, '/' on the subject, '..' at the top stays there."""
    return contain.Jail(os.path.realpath(root), "/", chroot=True)


def real_path(jail: contain.Jail, path: str) -> str | None:
    """The real path here of ``path`` inside the image, every link resolved inside it; None when it escapes."""
    try:
        real, _ = contain.resolve(jail, jail.real, path.lstrip("/"))
    except (contain.Escape, OSError):
        return None
    return real if jail.contains(real) else None


def read_file(jail: contain.Jail, path: str, limit: int) -> ImageFile:
    """The bytes of a regular file of the image (at most ``limit``), or None and the reason."""
    real = real_path(jail, path)
    if real is None:
        return ImageFile(path, None, "leaves the image or loops")
    fd, problem = open_regular(real)
    if fd is None:
        return ImageFile(path, None, problem)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return ImageFile(path, None, f"{size} bytes, more than the {limit} read for this purpose")
        data = os.read(fd, limit + 1)
    except OSError as exc:
        return ImageFile(path, None, os.strerror(exc.errno) if exc.errno else str(exc))
    finally:
        os.close(fd)
    if len(data) > limit:
        return ImageFile(path, None, f"grew past {limit} bytes while read")
    return ImageFile(path, data)


def open_regular(real: str) -> tuple[int | None, str]:
    """A descriptor of the regular file at ``real`` (never through a final link, never a FIFO), or the reason.

    Opened through the run's platform backend (fs/platform.py): with
    ``O_NOATIME`` where the system has it, so reading the image's identity
    files leaves their access times as they were on a writable mount.
    """
    backend = platform.current()
    try:
        parent, _ = backend.open_dir(os.path.dirname(real) or "/", None, follow=True)
    except OSError as exc:
        return None, "not present" if isinstance(exc, FileNotFoundError) else _reason(exc)
    try:
        fd, _ = backend.open_file(os.path.basename(real), parent)
    except FileNotFoundError:
        return None, "not present"
    except OSError as exc:
        return None, _reason(exc)
    finally:
        os.close(parent)
    try:
        kind = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        return None, os.strerror(exc.errno) if exc.errno else str(exc)
    if not stat_module.S_ISREG(kind):
        os.close(fd)
        return None, "not a regular file"
    return fd, ""


def _reason(exc: OSError) -> str:
    return os.strerror(exc.errno) if exc.errno else str(exc)


def list_names(real: str) -> list[str]:
    """The names in the directory at ``real`` (never through a final link), listed without touching its atime."""
    backend = platform.current()
    fd, _ = backend.open_dir(real, None)
    try:
        with backend.scandir(fd) as entries:
            return [entry.name for _, entry in zip(range(MAX_NAMES_LISTED), entries, strict=False)]
    finally:
        os.close(fd)


def read_link(jail: contain.Jail, path: str) -> str | None:
    """The target of a symbolic link of the image (its parent resolved inside the image); None if not a link."""
    parent = real_path(jail, os.path.dirname(path.rstrip("/")) or "/")
    if parent is None:
        return None
    try:
        return os.readlink(os.path.join(parent, os.path.basename(path.rstrip("/"))))
    except OSError:
        return None


def find_case_insensitive(jail: contain.Jail, path: str) -> str | None:
    """The image path whose components equal ``path``'s ignoring case (NTFS names on a case-sensitive mount).

    Each component is looked up exactly first and by listing its directory
    only when that fails; a link is never taken as a component.
    """
    current, found = jail.real, ""
    for name in [part for part in path.split("/") if part]:
        match = _entry_named(current, name)
        if match is None:
            return None
        current, found = os.path.join(current, match), f"{found}/{match}"
    return found or "/"


def _entry_named(directory: str, name: str) -> str | None:
    try:
        if not stat_module.S_ISLNK(os.lstat(os.path.join(directory, name)).st_mode):
            return name
    except OSError:
        pass
    folded = name.casefold()
    try:
        names = list_names(directory)
    except OSError:
        return None
    for candidate in names:
        if candidate.casefold() == folded and not os.path.islink(os.path.join(directory, candidate)):
            return candidate
    return None
