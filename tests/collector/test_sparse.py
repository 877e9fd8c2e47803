"""Holes are never read as data (issue 27): a sparse file is stored whole, its holes as zeros, unread.

A subject can leave a 4 GiB ``state_5.sqlite`` that is all holes: reading
every hole cost 3.3 s a GiB. The capture finds the holes (SEEK_DATA /
SEEK_HOLE), streams them as the zeros they read as without a read, and
records where they are in files.jsonl; the member is byte for byte the file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from aitrail.collector.reading import capture as capture_module
from tests.conftest import bundle_records

MIB = 1024 * 1024


def sparse_home(tmp_path: Path) -> Path:
    database = tmp_path / "home" / ".codex" / "state_5.sqlite"
    database.parent.mkdir(parents=True)
    with open(database, "wb") as handle:
        handle.write(b"SQLite format 3\x00" + b"\x07" * (MIB - 16))  # 1 MiB of data
        handle.truncate(64 * MIB)
        handle.seek(40 * MIB)
        handle.write(b"\x09" * MIB)  # data in the middle
    return tmp_path / "home"


@pytest.mark.skipif(capture_module.SEEK_HOLE is None, reason="no SEEK_HOLE on this system")
def test_a_sparse_file_is_stored_whole_with_its_holes_unread_and_recorded(cli, tmp_path, monkeypatch):
    home = sparse_home(tmp_path)
    database = home / ".codex" / "state_5.sqlite"
    if os.stat(database).st_blocks * 512 >= 64 * MIB:
        pytest.skip("this filesystem stores no holes")
    read = []
    real_read = os.read

    def counting_read(fd, length):
        data = real_read(fd, length)
        read.append(len(data))
        return data

    monkeypatch.setattr(capture_module.os, "read", counting_read)
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    record = next(r for r in bundle_records(out) if r["path"] == ".codex/state_5.sqlite")
    assert record["outcome"] == "collected" and record["stored_size"] == 64 * MIB
    assert record["sha256"] == hashlib.sha256(database.read_bytes()).hexdigest()
    holes = record["holes"]
    assert sum(length for _, length in holes) >= 60 * MIB and all(offset % 4096 == 0 for offset, _ in holes)
    assert sum(read) < 8 * MIB  # the data (2 MiB and a filesystem block or two), never the 62 MiB of holes
    assert cli("verify", out, "--quiet").exit_code == 0
    extracted = tmp_path / "x"
    assert cli("extract", out, extracted).exit_code == 0
    copy = next(extracted.rglob("state_5.sqlite"))
    assert copy.read_bytes() == database.read_bytes()


def test_data_holes_maps_the_holes_and_gives_up_on_a_file_of_too_many(tmp_path, monkeypatch):
    path = tmp_path / "f"
    with open(path, "wb") as handle:
        for number in range(6):
            handle.seek(number * 2 * MIB)
            handle.write(b"x" * 4096)
        handle.truncate(12 * MIB)
    fd = os.open(path, os.O_RDONLY)
    try:
        holes = capture_module.data_holes(fd, 12 * MIB)
        if not holes:
            pytest.skip("this filesystem stores no holes")
        data = path.read_bytes()
        for offset, length in holes:
            assert data[offset:offset + length] == bytes(length)
        assert len(holes) == 6 and os.lseek(fd, 0, os.SEEK_CUR) == 0
        monkeypatch.setattr(capture_module, "MAX_HOLES", 3)
        assert capture_module.data_holes(fd, 12 * MIB) == []
    finally:
        os.close(fd)


def test_a_large_file_that_takes_too_long_is_a_named_read_error_and_the_rest_is_collected(cli, tmp_path, monkeypatch):
    """--max-file-seconds: a huge or slow file cannot stall the run; it is recorded, not half-stored."""
    home = sparse_home(tmp_path)
    (home / ".codex" / "config.toml").write_text('model = "gpt-5"\n')
    clock = iter(range(0, 10_000, 7))  # every reading of the clock is 7 s later
    monkeypatch.setattr(capture_module.time, "monotonic", lambda: next(clock))
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", out, "--quiet", "--max-file-seconds", "30")
    assert result.exit_code == 3, result.output + result.stderr  # partial: a file failed
    records = {r["path"]: r for r in bundle_records(out)}
    slow = records[".codex/state_5.sqlite"]
    assert slow["outcome"] == "read_error" and slow["member"] is None
    assert "reading stopped after 30 s (--max-file-seconds)" in slow["notes"][-1]
    assert records[".codex/config.toml"]["outcome"] == "collected"
    assert cli("verify", out, "--quiet").exit_code == 0
