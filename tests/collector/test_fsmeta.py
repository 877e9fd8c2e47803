"""File metadata: statx decoded in one unpack gives what lstat and the ctypes fields give."""

from __future__ import annotations

import ctypes
import os

import pytest

from aitrail.collector.fs import meta as fsmeta
from aitrail.collector.fs.meta import Meta, lstat_at, meta_of_stat, quick_lstat_at

needs_statx = pytest.mark.skipif(fsmeta._STATX is None, reason="statx(2) is Linux only")


def _lstat_fields(meta: Meta) -> tuple:
    return (meta.mode, meta.ino, meta.dev, meta.nlink, meta.uid, meta.gid, meta.size, meta.atime_ns, meta.mtime_ns,
            meta.ctime_ns)


@pytest.fixture
def entries(tmp_path):
    (tmp_path / "file").write_bytes(b"x" * 12345)
    (tmp_path / "dir").mkdir()
    os.symlink("file", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    os.link(tmp_path / "file", tmp_path / "hard")
    os.utime(tmp_path / "file", ns=(1_600_000_000_123_456_789, 1_650_000_000_987_654_321))
    return tmp_path


@needs_statx
@pytest.mark.parametrize("name", ["file", "dir", "link", "fifo", "hard"])
def test_statx_equals_lstat_field_for_field(entries, name):
    fd = os.open(entries, os.O_RDONLY)
    try:
        meta = lstat_at(fd, name)
        assert _lstat_fields(meta) == _lstat_fields(meta_of_stat(os.stat(name, dir_fd=fd, follow_symlinks=False)))
        assert _lstat_fields(meta) == _lstat_fields(quick_lstat_at(fd, name))
    finally:
        os.close(fd)


@needs_statx
def test_statx_unpack_reads_the_ctypes_fields(entries):
    buffer = fsmeta._Statx()
    flags = fsmeta.STATX_BASIC_STATS | fsmeta.STATX_BTIME
    assert fsmeta._STATX(-100, os.fsencode(entries / "file"), fsmeta.AT_SYMLINK_NOFOLLOW, flags,
                         ctypes.byref(buffer)) == 0
    meta = fsmeta._from_statx(buffer)

    def ns(stamp):
        return stamp.tv_sec * 1_000_000_000 + stamp.tv_nsec

    assert meta.mode == buffer.stx_mode and meta.ino == buffer.stx_ino and meta.size == buffer.stx_size == 12345
    assert meta.dev == os.makedev(buffer.stx_dev_major, buffer.stx_dev_minor) and meta.nlink == 2
    assert (meta.uid, meta.gid) == (buffer.stx_uid, buffer.stx_gid)
    assert (meta.atime_ns, meta.mtime_ns) == (1_600_000_000_123_456_789, 1_650_000_000_987_654_321)
    assert (meta.atime_ns, meta.mtime_ns, meta.ctime_ns) == (ns(buffer.stx_atime), ns(buffer.stx_mtime),
                                                             ns(buffer.stx_ctime))
    expected_birth = ns(buffer.stx_btime) if buffer.stx_mask & fsmeta.STATX_BTIME else None
    assert meta.btime_ns == expected_birth


def test_meta_of_equals_the_dataclass_constructor():
    values = (0o100644, 1, 2, 3, 4, 5, 6, 7, 8, 9, None)
    fast, slow = Meta.of(values), Meta(*values)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    with pytest.raises(AttributeError):  # still frozen
        fast.size = 1
    with pytest.raises(ValueError):
        Meta.of(values[:-1])


def test_differs_from_ignores_birth_time_only():
    base = Meta.of((0o100644, 1, 2, 3, 4, 5, 6, 7, 8, 9, None))
    assert not base.differs_from(Meta.of((0o100644, 1, 2, 3, 4, 5, 6, 7, 8, 9, 123)))
    for index in range(10):
        values = list((0o100644, 1, 2, 3, 4, 5, 6, 7, 8, 9, None))
        values[index] += 1
        assert base.differs_from(Meta.of(tuple(values))), index
