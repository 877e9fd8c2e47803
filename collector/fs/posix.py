"""The POSIX backend: macOS and the BSDs (and Linux, when AITRAIL_PLATFORM=posix forces it for tests).

The same fd-relative calls as on Linux (``openat`` with ``O_NOFOLLOW`` through
``os.open(dir_fd=)``, ``fstatat`` without following, ``readlinkat``,
``fdopendir``), with what these systems lack and have:

* no ``O_NOATIME``: every read is recorded ``atime_protection: none``. APFS
  moves a file's access time on a read only when it is older than its
  modification time (unless the volume is mounted strictatime), so the first
  read after a write may move it; the recorded lstat is taken before the read.
* birth time from ``st_birthtime_ns`` where Python has it, else from
  ``st_birthtime``, a float of seconds (nanoseconds are lost: at today's dates a
  double holds about a quarter of a microsecond); the run records which.
* ``st_flags``: a file or directory flagged ``SF_DATALESS`` (an iCloud Drive or
  File Provider placeholder) is never opened: reading or listing it would make
  the provider download it. Files get the outcome ``not_read_would_download``;
  a directory is refused before it is listed (DatalessRefused).
* on macOS, EPERM from an open, a listing, a lstat or a readlink is raised as
  PrivacyRefused, whose note names privacy protection (TCC) and Full Disk Access.
"""

from __future__ import annotations

import contextlib
import errno as errno_module
import math
import os

from aitrail.collector.fs.backend import (
    ATIME_NONE,
    SF_DATALESS,
    Backend,
    DatalessRefused,
    PrivacyRefused,
)
from aitrail.collector.fs.linux import DIR_FLAGS, FILE_FLAGS
from aitrail.collector.fs.meta import Meta

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# O_NOFOLLOW on a link fails with ELOOP (POSIX, macOS, Linux), EMLINK (FreeBSD, DragonFly) or EFTYPE
# (NetBSD): the last two are given as ELOOP, the errno the walk and the capture know as "a link, not followed".
_LINK_ERRNOS = frozenset(filter(None, (errno_module.EMLINK, getattr(errno_module, "EFTYPE", None))))
_UNKNOWN_BIRTH = -1  # FreeBSD's st_birthtime (seconds) where the filesystem records none


class PosixBackend(Backend):
    """macOS and the BSDs: no O_NOATIME, birth time from st_birthtime, SF_DATALESS never read, TCC named."""

    name = "posix"
    atime_protection = ATIME_NONE

    def __init__(self, chosen_by: str, privacy_refusals: bool):
        super().__init__(chosen_by)
        self.privacy_refusals = privacy_refusals
        if hasattr(os.stat_result, "st_birthtime_ns"):
            self.birth_time_source, self.birth_time_precision = "st_birthtime_ns", "ns"
        elif hasattr(os.stat_result, "st_birthtime"):
            self.birth_time_source = "st_birthtime"
            self.birth_time_precision = "float seconds (nanoseconds lost; about 0.25 us at today's dates)"
        # st_flags exists on macOS and the BSDs; Linux has no such field (tests turn the check on by hand)
        self.flags_checked = hasattr(os.stat_result, "st_flags")
        self.dataless_check = ("st_flags SF_DATALESS, before any open or listing" if self.flags_checked
                               else "none (this system's stat has no st_flags)")

    # -- test seam ---------------------------------------------------------------------

    def st_flags(self, result: os.stat_result) -> int:
        """The BSD file flags of a stat result (0 where there are none); tests replace it to fake a placeholder."""
        return getattr(result, "st_flags", 0)

    # -- the operations ----------------------------------------------------------------

    def open_dir(self, name: str | bytes, parent_fd: int | None, follow: bool = False) -> tuple[int, bool]:
        """Open a directory without O_NOATIME; a cloud placeholder directory is closed again, never listed."""
        flags = DIR_FLAGS if not follow else DIR_FLAGS & ~_NOFOLLOW
        try:
            fd = os.open(name, flags, dir_fd=parent_fd)
        except OSError as exc:
            raise self._explained(exc) from None
        if self.flags_checked:
            try:
                dataless = self.st_flags(os.fstat(fd)) & SF_DATALESS
            except BaseException:
                os.close(fd)
                raise
            if dataless:
                os.close(fd)
                raise DatalessRefused(name)
        return fd, False

    def open_file(self, name: str | bytes, parent_fd: int) -> tuple[int, str]:
        """Open to read, never through a link, never blocking; no atime protection exists here."""
        try:
            return os.open(name, FILE_FLAGS, dir_fd=parent_fd), ATIME_NONE
        except OSError as exc:
            raise self._explained(exc) from None

    def lstat_at(self, dir_fd: int | None, name: str | bytes) -> Meta:
        """``fstatat`` without following, birth time and the placeholder flag from the same result."""
        try:
            return self._meta(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
        except OSError as exc:
            raise self._explained(exc) from None

    def quick_lstat_at(self, dir_fd: int, name: str | bytes) -> Meta:
        """The same lstat: birth time comes with it at no extra cost here."""
        return self.lstat_at(dir_fd, name)

    def fstat_meta(self, fd: int) -> Meta:
        """The metadata of an open descriptor."""
        return self._meta(os.fstat(fd))

    def readlink(self, name: str | bytes, dir_fd: int) -> str | bytes:
        """``readlinkat``."""
        try:
            return os.readlink(name, dir_fd=dir_fd)
        except OSError as exc:
            raise self._explained(exc) from None

    @contextlib.contextmanager
    def scandir(self, fd: int):
        """``os.scandir(fd)``; an EPERM while listing (TCC) comes out named."""
        try:
            with os.scandir(fd) as iterator:
                yield iterator
        except PermissionError as exc:
            raise self._explained(exc) from None

    # -- helpers -----------------------------------------------------------------------

    def _explained(self, exc: OSError) -> OSError:
        """The error as the collector should record it: TCC named on macOS, a BSD's link errno as ELOOP."""
        if self.privacy_refusals and exc.errno == errno_module.EPERM and not isinstance(exc, PrivacyRefused):
            return PrivacyRefused(exc.errno, exc.strerror, exc.filename)
        if exc.errno in _LINK_ERRNOS:
            return OSError(errno_module.ELOOP, f"{os.strerror(errno_module.ELOOP)} (the system said: "
                                                f"{exc.strerror}; O_NOFOLLOW met a link)", exc.filename)
        return exc

    def _meta(self, result: os.stat_result) -> Meta:
        meta = Meta.of((
            result.st_mode, result.st_ino, result.st_dev, result.st_nlink, result.st_uid, result.st_gid,
            result.st_size, result.st_atime_ns, result.st_mtime_ns, result.st_ctime_ns, self._birth_ns(result),
        ))
        if self.flags_checked and self.st_flags(result) & SF_DATALESS:
            meta.__dict__["dataless"] = True  # not a recorded field: read by the capture before any open
        return meta

    def _birth_ns(self, result: os.stat_result) -> int | None:
        if self.birth_time_source == "st_birthtime_ns":
            birth = getattr(result, "st_birthtime_ns", None)
            return None if birth == _UNKNOWN_BIRTH * 1_000_000_000 else birth
        if self.birth_time_source == "st_birthtime":
            seconds = getattr(result, "st_birthtime", None)
            if seconds is None or seconds == _UNKNOWN_BIRTH:
                return None
            # whole seconds exactly, then the fraction: seconds * 1e9 as one float would lose up to 256 ns more
            whole = math.floor(seconds)
            return whole * 1_000_000_000 + round((seconds - whole) * 1_000_000_000)
        return None
