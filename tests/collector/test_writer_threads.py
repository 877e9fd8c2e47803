"""The bundle writer's threads (compressing, hashing the file) change when work is done, never what is written."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.bundle import writer as writer_module
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.bundle.writer import BundleWriter, TarMeta

META = TarMeta(mode=0o100644, uid=1000, gid=1000, mtime_ns=1_780_000_000_123_456_789)
# sizes around the frame target (1 MiB) and the hashing threshold, and many small ones
SIZES = st.lists(st.one_of(st.integers(0, 40_000), st.integers(900_000, 2_500_000)), min_size=1, max_size=24)


def _write(path: Path, sizes: list[int], seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    written: dict[str, bytes] = {}
    writer = BundleWriter(str(path))
    try:
        for index, size in enumerate(sizes):
            data = rng.randbytes(size // 2) + bytes(size - size // 2)  # half noise, half zeros
            name = f"data/h/f{index:03d}"
            digest = hashlib.sha256(data).hexdigest() if index % 2 else None  # some hashed by the threads
            writer.add_bytes(name, data, META, digest)
            written[name] = data
        writer.finish()
    finally:
        writer.close()
    return written


@settings(max_examples=12, deadline=None)
@given(sizes=SIZES, seed=st.integers(0, 2**32))
def test_frames_do_not_depend_on_how_many_threads_compress_them(tmp_path_factory, sizes, seed):
    work = tmp_path_factory.mktemp("threads")
    written = _write(work / "two.tar.zst", sizes, seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer_module, "COMPRESSING_THREADS", 1)
        patch.setattr(writer_module, "COMPRESS_AHEAD_BYTES", 0)  # one frame at a time, in order
        _write(work / "one.tar.zst", sizes, seed)
    assert (work / "two.tar.zst").read_bytes() == (work / "one.tar.zst").read_bytes()
    with BundleReader(work / "two.tar.zst") as reader:
        for name, data in written.items():
            assert reader.read_data(name) == data
            assert reader.member(name).sha256 == hashlib.sha256(data).hexdigest()


def test_the_bundle_digest_hashed_in_two_parts_is_the_file_s(tmp_path: Path):
    path = tmp_path / "b.tar.zst"
    rng = random.Random(7)
    writer = BundleWriter(str(path))
    try:
        writer.add_bytes("data/h/small", rng.randbytes(5000), META)
        streamed = rng.randbytes(3 * 1024 * 1024)
        writer.begin_stream("data/h/streamed", len(streamed), META)
        writer.write_chunk(streamed)
        writer.end_stream(hashlib.sha256(streamed).hexdigest())
        writer.hash_and_sync_payload()  # the payload's digest and fsync start on their thread here
        writer.begin_stream("data/h/cut", 10, META)  # a member begun and cut after that point
        writer.write_chunk(b"12345")
        writer.abort_stream()
        writer.add_bytes("aitrail/meta", b"{}" * 40_000, META)
        _, digest = writer.finish_and_hash()
    finally:
        writer.close()
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    with BundleReader(path) as reader:
        assert reader.read_data("data/h/streamed") == streamed and "data/h/cut" not in reader.names()


def test_the_bundle_digest_without_a_payload_digest_started(tmp_path: Path):
    path = tmp_path / "b.tar.zst"
    writer = BundleWriter(str(path))
    try:
        writer.add_bytes("data/h/only", b"x" * 70_000, META)
        _, digest = writer.finish_and_hash()
    finally:
        writer.close()
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
