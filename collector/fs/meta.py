"""File metadata as an examiner wants it: lstat fields in ns, plus birth time.

Linux exposes birth time only through statx(2), which Python 3.11 does not
wrap; it is called through ctypes (glibc >= 2.28): these are the Linux
backend's calls (fs/linux.py). When statx is missing,
``os.stat(..., follow_symlinks=False)`` is used instead. The POSIX backend
(fs/posix.py) builds its Meta from ``os.stat`` with ``st_birthtime``.
"""

from __future__ import annotations

import ctypes
import operator
import os
import stat as stat_module
import struct
import sys
import threading
from dataclasses import dataclass, fields
from typing import ClassVar

AT_SYMLINK_NOFOLLOW = 0x100
AT_EMPTY_PATH = 0x1000
STATX_BASIC_STATS = 0x07FF
STATX_BTIME = 0x0800


class _StatxTimestamp(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_int64), ("tv_nsec", ctypes.c_uint32), ("_reserved", ctypes.c_int32)]


class _Statx(ctypes.Structure):
    # struct statx from <linux/stat.h>; layout fixed by the kernel ABI.
    _fields_ = [
        ("stx_mask", ctypes.c_uint32),
        ("stx_blksize", ctypes.c_uint32),
        ("stx_attributes", ctypes.c_uint64),
        ("stx_nlink", ctypes.c_uint32),
        ("stx_uid", ctypes.c_uint32),
        ("stx_gid", ctypes.c_uint32),
        ("stx_mode", ctypes.c_uint16),
        ("_spare0", ctypes.c_uint16),
        ("stx_ino", ctypes.c_uint64),
        ("stx_size", ctypes.c_uint64),
        ("stx_blocks", ctypes.c_uint64),
        ("stx_attributes_mask", ctypes.c_uint64),
        ("stx_atime", _StatxTimestamp),
        ("stx_btime", _StatxTimestamp),
        ("stx_ctime", _StatxTimestamp),
        ("stx_mtime", _StatxTimestamp),
        ("stx_rdev_major", ctypes.c_uint32),
        ("stx_rdev_minor", ctypes.c_uint32),
        ("stx_dev_major", ctypes.c_uint32),
        ("stx_dev_minor", ctypes.c_uint32),
        ("_spare", ctypes.c_uint64 * 14),
    ]


def _load_libc() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        from ctypes.util import find_library  # only here: it imports subprocess and tempfile, a few ms of every start

        return ctypes.CDLL(find_library("c") or "libc.so.6", use_errno=True)


def _load_statx():
    if not hasattr(os, "O_NOATIME"):  # not Linux
        return None
    try:
        # glibc's soname first: find_library runs ldconfig in a subprocess (about 10 ms at every start)
        libc = _load_libc()
        function = libc.statx
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_Statx)]
    function.restype = ctypes.c_int
    return function


_STATX = _load_statx()
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def fsencode(name: str | bytes) -> bytes:
    """``os.fsencode`` for the names the walk yields, as one C call for a str (fsencode is Python code)."""
    if name.__class__ is str:
        return name.encode(_FS_ENCODING, _FS_ERRORS)
    return os.fsencode(name)

# The fields of struct statx that Meta needs, read in one unpack instead of a
# ctypes attribute access each (same offsets as _Statx; a test compares them):
# mask, nlink, uid, gid, mode, ino, size, the four times (sec, nsec) in the order
# atime, btime, ctime, mtime, then dev major/minor.
_STATX_LAYOUT = struct.Struct("=I4x8xIIIH2xQQ16xqI4xqI4xqI4xqI4x8xII")
assert _STATX_LAYOUT.size <= ctypes.sizeof(_Statx)


class _StatxBuffers(threading.local):
    """One statx buffer per thread: ctypes releases the GIL during the call."""

    def __init__(self):
        self.buffer = _Statx()
        self.pointer = ctypes.byref(self.buffer)


_BUFFERS = _StatxBuffers()


@dataclass(frozen=True)
class Meta:
    """lstat of one path, taken without following a final symlink."""

    mode: int
    ino: int
    dev: int
    nlink: int
    uid: int
    gid: int
    size: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int
    btime_ns: int | None
    # Not a recorded field: True on an instance whose st_flags say SF_DATALESS (a cloud placeholder,
    # fs/posix.py); the capture reads it before any open. Equality and the records ignore it.
    dataless: ClassVar[bool] = False

    @classmethod
    def of(cls, values: tuple) -> Meta:
        """A Meta of the field values in declaration order, built without the frozen ``__init__``.

        The dataclass's frozen ``__init__`` sets each field through
        ``object.__setattr__``; filling ``__dict__`` in one call gives the
        same object at half the cost, and several are built per file read.
        """
        meta = object.__new__(cls)
        meta.__dict__.update(zip(_FIELDS, values, strict=True))
        return meta

    @property
    def kind(self) -> str:
        """file, dir, symlink, fifo, socket, chardev, blockdev or unknown."""
        return file_kind(self.mode)

    def as_record(self) -> dict:
        """The metadata as files.jsonl records it (mode in octal, times in ns)."""
        return {
            "mode": f"{self.mode:o}", "ino": self.ino, "dev": self.dev, "nlink": self.nlink, "uid": self.uid,
            "gid": self.gid, "size": self.size, "atime_ns": self.atime_ns, "mtime_ns": self.mtime_ns,
            "ctime_ns": self.ctime_ns, "btime_ns": self.btime_ns,
        }

    def differs_from(self, other: Meta) -> bool:
        """Any recorded field differs (birth time aside: one side may not have it)."""
        return _compared(self) != _compared(other)

    def same_content_state(self, other: Meta) -> bool:
        """True when nothing that signals a content change differs."""
        return (
            self.ino == other.ino
            and self.dev == other.dev
            and self.size == other.size
            and self.mtime_ns == other.mtime_ns
            and self.ctime_ns == other.ctime_ns
        )


_COMPARED = ("mode", "ino", "dev", "nlink", "uid", "gid", "size", "atime_ns", "mtime_ns", "ctime_ns")
_compared = operator.attrgetter(*_COMPARED)  # one C call for the tuple of compared fields
_FIELDS = tuple(item.name for item in fields(Meta))


_KIND_OF_FORMAT = {stat_module.S_IFREG: "file", stat_module.S_IFDIR: "dir", stat_module.S_IFLNK: "symlink",
                   stat_module.S_IFIFO: "fifo", stat_module.S_IFSOCK: "socket", stat_module.S_IFCHR: "chardev",
                   stat_module.S_IFBLK: "blockdev"}


def file_kind(mode: int) -> str:
    """file, dir, symlink, fifo, socket, chardev, blockdev or unknown."""
    return _KIND_OF_FORMAT.get(stat_module.S_IFMT(mode), "unknown")


def lstat_at(dir_fd: int | None, name: str) -> Meta:
    """Lstat ``name`` relative to ``dir_fd`` (or an absolute/relative path when None)."""
    if _STATX is not None:
        buffers = _BUFFERS
        fd = dir_fd if dir_fd is not None else -100  # AT_FDCWD
        result = _STATX(fd, fsencode(name), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, buffers.pointer)
        if result == 0:
            return _from_statx(buffers.buffer)
        errno = ctypes.get_errno()
        if errno != 38:  # ENOSYS: fall back to lstat below
            raise OSError(errno, os.strerror(errno), name)
    return meta_of_stat(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))


def fstat_meta(fd: int) -> Meta:
    """The same fields for an open descriptor, without birth time.

    Used only to compare states around a read (birth time never changes for
    an inode), so it takes the fast C path instead of statx through ctypes.
    """
    return meta_of_stat(os.fstat(fd))


def quick_lstat_at(dir_fd: int, name: str) -> Meta:
    """Lstat without birth time, for the same comparisons."""
    return meta_of_stat(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))


def _from_statx(buffer: _Statx) -> Meta:
    (mask, nlink, uid, gid, mode, ino, size, a_sec, a_nsec, b_sec, b_nsec, c_sec, c_nsec, m_sec, m_nsec,
     dev_major, dev_minor) = _STATX_LAYOUT.unpack_from(buffer)
    return Meta.of((
        mode, ino, os.makedev(dev_major, dev_minor), nlink, uid, gid, size,
        a_sec * 1_000_000_000 + a_nsec, m_sec * 1_000_000_000 + m_nsec, c_sec * 1_000_000_000 + c_nsec,
        b_sec * 1_000_000_000 + b_nsec if mask & STATX_BTIME else None,
    ))


def meta_of_stat(result: os.stat_result) -> Meta:
    """The Meta of an ``os.stat``/``os.fstat`` result (birth time where the platform gives it)."""
    birth = getattr(result, "st_birthtime", None)
    return Meta.of((
        result.st_mode, result.st_ino, result.st_dev, result.st_nlink, result.st_uid, result.st_gid, result.st_size,
        result.st_atime_ns, result.st_mtime_ns, result.st_ctime_ns,
        int(birth * 1_000_000_000) if birth is not None else None,
    ))
