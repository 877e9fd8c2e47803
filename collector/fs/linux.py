"""The Linux backend: O_NOATIME where the kernel allows it, statx birth time in ns, openat with O_NOFOLLOW.

This is the collector's benchmarked path: the metadata calls are meta.py's
module functions, set on the instance so that a call costs what a call of
the function costs (no bound method is made), and the opens are the ones the
walk and the capture made before the seam existed.
"""

from __future__ import annotations

import errno as errno_module
import os

from aitrail.collector.fs import meta
from aitrail.collector.fs.backend import ATIME_NONE, ATIME_O_NOATIME, Backend

O_NOATIME = getattr(os, "O_NOATIME", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO swapped in between the lstat and the open never blocks the run
FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class LinuxBackend(Backend):
    """Linux: each open asks for O_NOATIME first; statx gives birth time in ns."""

    name = "linux"
    atime_protection = ATIME_O_NOATIME

    def __init__(self, chosen_by: str):
        if not O_NOATIME:  # never claim a protection the system does not have
            raise ValueError("the linux backend needs O_NOATIME, which this system does not have")
        super().__init__(chosen_by)
        has_statx = meta._STATX is not None
        self.birth_time_source = "statx" if has_statx else "none"
        self.birth_time_precision = "ns" if has_statx else None
        # plain functions as instance attributes: called as fast as the module's own functions
        self.lstat_at = meta.lstat_at
        self.quick_lstat_at = meta.quick_lstat_at
        self.fstat_meta = meta.fstat_meta

    def open_dir(self, name: str | bytes, parent_fd: int | None, follow: bool = False) -> tuple[int, bool]:
        """Open a directory with O_NOATIME; without it where the kernel refuses it (a directory of another owner)."""
        flags = DIR_FLAGS if not follow else DIR_FLAGS & ~_NOFOLLOW
        try:
            return os.open(name, flags | O_NOATIME, dir_fd=parent_fd), True
        except PermissionError:
            # O_NOATIME is refused on directories we do not own (EPERM): open without it; the walk counts it
            return os.open(name, flags, dir_fd=parent_fd), False

    def open_file(self, name: str | bytes, parent_fd: int) -> tuple[int, str]:
        """Open with O_NOATIME; on EPERM (a file of another owner) without it, and say so."""
        try:
            return os.open(name, FILE_FLAGS | O_NOATIME, dir_fd=parent_fd), ATIME_O_NOATIME
        except PermissionError as exc:
            if exc.errno != errno_module.EPERM:  # EACCES is a real denial
                raise
        return os.open(name, FILE_FLAGS, dir_fd=parent_fd), ATIME_NONE

    def readlink(self, name: str | bytes, dir_fd: int) -> str | bytes:
        """``readlink`` relative to the directory descriptor."""
        return os.readlink(name, dir_fd=dir_fd)

    def scandir(self, fd: int):
        """``os.scandir`` of the descriptor."""
        return os.scandir(fd)
