"""Files that change while they are read: no padding, exact bytes, flagged, verifiable."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.reading import capture
from aitrail.collector.verify import verify
from tests.collector.backends import protects_atime
from tests.conftest import bundle_records, toy_collect, write_tree

KIB = 1024


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(capture, "CHUNK", 64 * KIB)


@pytest.fixture
def streaming(monkeypatch, small_chunks):
    """Make a 1 MiB file 'large', so it is streamed into the bundle with the lstat length."""
    monkeypatch.setattr(capture, "IN_MEMORY_LIMIT", 128 * KIB)


def change_after_first_read(monkeypatch, path: Path, change) -> None:
    """Apply ``change(path)`` right after the collector's first read() of that file."""
    real_read = os.read
    state = {"done": False}

    def read(fd, size):
        data = real_read(fd, size)
        if not state["done"] and os.readlink(f"/proc/self/fd/{fd}") == str(path):
            state["done"] = True
            change(path)
        return data

    monkeypatch.setattr(capture.os, "read", read)


def truncate_to(size):
    def change(path):
        os.truncate(path, size)
    return change


def append(data: bytes):
    def change(path):
        with open(path, "ab") as handle:
            handle.write(data)
    return change


def rewrite_in_place(data: bytes):
    def change(path):
        with open(path, "r+b") as handle:
            handle.write(data)
    return change


def collect_changing(cli, tmp_path, monkeypatch, size: int, change) -> tuple[dict, bytes, bytes]:
    original = os.urandom(size)
    home = write_tree(tmp_path / "h", {".toy/notes/live.log": original})
    target = home / ".toy/notes/live.log"
    change_after_first_read(monkeypatch, target, change)
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, home, out)
    assert result.exit_code == 3, result.output + result.stderr  # partial: a file changed while read
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/notes/live.log")
    with BundleReader(out) as reader:
        stored = reader.read_data(record["member"])
    assert verify(str(out)).ok
    return record, stored, target.read_bytes()


@pytest.mark.usefixtures("small_chunks")
def test_shrink_while_read_in_memory(cli, tmp_path, monkeypatch):
    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, 300 * KIB, truncate_to(100 * KIB))
    assert stored == now  # exactly the bytes read: no zero padding up to the old length
    assert record["stored_size"] == len(stored) == 100 * KIB
    assert record["outcome"] == "changed_during_read"
    assert record["stat"]["size"] == 300 * KIB and record["stat_after"]["size"] == 100 * KIB


@pytest.mark.usefixtures("small_chunks")
def test_grow_while_read_in_memory(cli, tmp_path, monkeypatch):
    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, 300 * KIB, append(b"tail" * 1000))
    assert stored == now and record["stored_size"] == 300 * KIB + 4000
    assert record["outcome"] == "changed_during_read" and record["stat_after"]["size"] == len(now)


@pytest.mark.usefixtures("streaming")
def test_shrink_while_streamed(cli, tmp_path, monkeypatch):
    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, 1024 * KIB, truncate_to(200 * KIB))
    assert stored == now and record["stored_size"] == 200 * KIB
    assert record["read_attempts"] == 2
    assert any("shrank" in note for note in record["notes"])


@pytest.mark.usefixtures("streaming")
def test_grow_while_streamed(cli, tmp_path, monkeypatch):
    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, 1024 * KIB, append(b"x" * 5000))
    assert stored == now and record["stored_size"] == 1024 * KIB + 5000
    assert record["read_attempts"] == 2 and any("grew" in note for note in record["notes"])


@pytest.mark.usefixtures("small_chunks")
def test_same_size_rewrite_is_flagged_and_stores_the_bytes_read(cli, tmp_path, monkeypatch):
    def change(path):
        rewrite_in_place(b"Z" * 10)(path)
        os.utime(path, ns=(0, 1_700_000_000_000_000_000))

    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, 300 * KIB, change)
    assert len(stored) == 300 * KIB and record["outcome"] == "changed_during_read"
    assert stored[:10] != b"Z" * 10  # the first chunk was read before the rewrite: kept as read
    assert record["stat_after"]["mtime_ns"] != record["stat"]["mtime_ns"]


def test_unchanged_file_is_not_flagged(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/notes/quiet.log": os.urandom(200 * KIB)})
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/notes/quiet.log")
    assert record["outcome"] == "collected"
    if protects_atime():
        assert "stat_after" not in record
    else:  # no O_NOATIME: the read may move the access time, recorded as the one field that differs
        after = record.get("stat_after", record["stat"])
        assert {key for key in record["stat"] if record["stat"][key] != after[key]} <= {"atime_ns"}


@pytest.fixture
def writer_hashes(monkeypatch):
    """Every file read into memory is hashed by the bundle writer's compressing thread."""
    monkeypatch.setattr(capture, "HASHED_BY_WRITER", 1)


@pytest.mark.parametrize("hashed_by", ["writer", "reader"])
def test_rewrite_after_the_read_keeps_the_digest_of_the_bytes_stored(cli, tmp_path, monkeypatch, hashed_by):
    """The digest is taken from the bytes read, never from the file again (wherever it is computed)."""
    if hashed_by == "writer":
        monkeypatch.setattr(capture, "HASHED_BY_WRITER", 1)

    def change(path):  # after the read that returned the whole file: same size, new bytes
        rewrite_in_place(b"Z" * 4096)(path)
        os.utime(path, ns=(0, 1_700_000_000_000_000_000))

    original_size = 300 * KIB
    record, stored, now = collect_changing(cli, tmp_path, monkeypatch, original_size, change)
    assert record["outcome"] == "changed_during_read" and len(stored) == original_size
    assert not stored.startswith(b"Z" * 4096) and now.startswith(b"Z" * 4096)
    assert record["sha256"] == hashlib.sha256(stored).hexdigest() != hashlib.sha256(now).hexdigest()


@pytest.mark.usefixtures("writer_hashes")
def test_digests_computed_by_the_writer_are_of_each_stored_member(cli, tmp_path):
    files = {f".toy/notes/n{index}.log": os.urandom(size) for index, size in
             enumerate([0, 1, 511, 512, 2047, 2049, 64 * KIB, 700 * KIB, 1100 * KIB, 3 * KIB])}
    home = write_tree(tmp_path / "h", files)
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    records = {r["path"]: r for r in bundle_records(out) if r["path"] in files}
    assert len(records) == len(files)
    with BundleReader(out) as reader:
        manifest = reader.read_data("manifest-sha256.txt").decode()
        for path, data in files.items():
            record = records[path]
            assert record["outcome"] == "collected"
            assert record["sha256"] == hashlib.sha256(data).hexdigest() == reader.member(record["member"]).sha256
            assert reader.read_data(record["member"]) == data
            assert f"{record['sha256']}  {record['member']}\n" in manifest
    assert verify(str(out)).ok
