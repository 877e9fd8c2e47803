"""Which backend a run uses: chosen once, from AITRAIL_PLATFORM or else sys.platform.

* ``AITRAIL_PLATFORM=linux``: the Linux backend (fs/linux.py); only on Linux.
* ``AITRAIL_PLATFORM=posix``: the POSIX backend (fs/posix.py), also on Linux,
  where CI runs the whole collector suite under it.
* unset (or empty): Linux takes the Linux backend; macOS (darwin) and the BSDs
  the POSIX one; Windows is refused with WINDOWS_MESSAGE; any other system is
  refused with a message that says AITRAIL_PLATFORM=posix forces the POSIX backend.

The choice depends only on the variable and sys.platform, so ``current()``
keeps the backend it made while neither changes: every tree of a run gets
the same object.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Mapping

from aitrail.collector.fs.backend import Backend
from aitrail.collector.fs.linux import LinuxBackend
from aitrail.collector.fs.posix import PosixBackend

ENV_VAR = "AITRAIL_PLATFORM"
CHOICES = ("linux", "posix")
_POSIX_SYSTEMS = ("darwin", "freebsd", "openbsd", "netbsd", "dragonfly")
_WINDOWS_SYSTEMS = ("win32", "cygwin", "msys")

WINDOWS_MESSAGE = (
    "live collection on Windows is not supported: Windows has no directory-relative opens (Python's dir_fd), "
    "no O_NOFOLLOW and no O_NOATIME, so the guarantees of a live aitrail collection (never through a link, "
    "access times untouched) cannot be kept there. Collect Windows machines with KAPE or Velociraptor, or image "
    "the disk, mount the image read-only on Linux and run `aitrail collect --root MOUNT_POINT` there."
)


class PlatformError(Exception):
    """The run cannot choose a backend (the message says why and what to do)."""


class UnsupportedPlatform(PlatformError):
    """This system has no backend (Windows: see WINDOWS_MESSAGE)."""


class UnknownPlatformChoice(PlatformError):
    """AITRAIL_PLATFORM names no backend, or one this system cannot run."""


def choose(environ: Mapping[str, str] | None = None, system: str | None = None) -> Backend:
    """The backend for ``environ`` (default os.environ) and ``system`` (default sys.platform)."""
    environ = os.environ if environ is None else environ
    system = sys.platform if system is None else system
    wanted = environ.get(ENV_VAR) or None
    if system.startswith(_WINDOWS_SYSTEMS):
        raise UnsupportedPlatform(WINDOWS_MESSAGE)
    if wanted is not None and wanted not in CHOICES:
        raise UnknownPlatformChoice(f"{ENV_VAR}={wanted!r} names no platform backend; accepted values: "
                                    f"{', '.join(CHOICES)} (or unset: chosen by the system)")
    if wanted is None:
        wanted = _by_system(system)
        chosen_by = f"sys.platform {system}"
    else:
        chosen_by = f"{ENV_VAR}={wanted}"
    if wanted == "linux":
        if not system.startswith("linux"):
            raise UnknownPlatformChoice(f"{ENV_VAR}=linux: the linux backend runs on Linux only (this is {system}); "
                                        "use posix")
        return LinuxBackend(chosen_by)
    return PosixBackend(chosen_by, privacy_refusals=system == "darwin")


def _by_system(system: str) -> str:
    if system.startswith("linux"):
        return "linux"
    if system.startswith(_POSIX_SYSTEMS):
        return "posix"
    raise UnsupportedPlatform(f"live collection on {system} is not tested (aitrail collects live on Linux, macOS "
                              f"and the BSDs); {ENV_VAR}=posix forces the POSIX backend, at the examiner's risk, "
                              "or collect a mounted image of the disk with --root from Linux")


_current: tuple[tuple[str | None, str], Backend] | None = None


def current() -> Backend:
    """The run's backend: made at the first call, the same object while the variable and the system stay the same."""
    global _current
    key = (os.environ.get(ENV_VAR), sys.platform)
    if _current is None or _current[0] != key:
        _current = (key, choose(system=key[1]))
    return _current[1]


@contextlib.contextmanager
def using(backend: Backend) -> Iterator[Backend]:
    """``current()`` gives ``backend`` inside the block (aitrail import's staged backend, collector/foreign/)."""
    global _current
    previous = _current
    _current = ((os.environ.get(ENV_VAR), sys.platform), backend)
    try:
        yield backend
    finally:
        _current = previous


def run_record(backends: Iterable[Backend]) -> dict:
    """collection.json's ``platform``: the backend the run's trees used (the current one if it had none)."""
    used = {id(backend): backend for backend in backends}
    if len(used) > 1:  # cannot happen within one run; never describe one backend for another's work
        names = sorted({backend.name for backend in used.values()})
        return {"backend": "mixed", "backends": [backend.record() for backend in used.values()], "names": names}
    backend = next(iter(used.values())) if used else current()
    return backend.record()
