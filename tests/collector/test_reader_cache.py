"""The reader's frame cache: the last frame read whole, and the one before it while it is small."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from aitrail.collector.bundle import reader as reader_module
from aitrail.collector.bundle.reader import BundleReader
from tests.conftest import FIXTURES, collect_fixture_home


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "demo-home", "demo")


def two_frames(reader: BundleReader) -> tuple[str, str]:
    """Two small members in different frames, both read through the cache."""
    by_frame = {}
    for member in reader.members:
        if member.type == "file" and member.size:
            by_frame.setdefault(member.frame_offset, member.name)
    assert len(by_frame) >= 2
    first, second = list(by_frame.values())[:2]
    return first, second


def counting(monkeypatch, reader: BundleReader) -> Counter:
    counts: Counter = Counter()
    original = BundleReader.iter_decompressed

    def counted(self, member):
        counts[member.frame_offset] += 1
        return original(self, member)

    monkeypatch.setattr(BundleReader, "iter_decompressed", counted)
    return counts


def test_reads_alternating_between_two_frames_decompress_each_once(bundle, monkeypatch):
    with BundleReader(bundle) as reader:
        first, second = two_frames(reader)
        counts = counting(monkeypatch, reader)
        expected = {name: reader.read_data(name) for name in (first, second)}
        for _ in range(3):
            for name in (first, second):
                assert reader.read_data(name) == expected[name]
        assert sorted(counts.values()) == [1, 1]
        assert reader.cached_frame(reader.member(first)) is not None
        assert reader.cached_frame(reader.member(second)) is not None


def test_a_large_frame_does_not_stay_in_the_second_slot(bundle, monkeypatch):
    monkeypatch.setattr(reader_module, "SECOND_SLOT_LIMIT", 0)  # every frame counts as large
    with BundleReader(bundle) as reader:
        first, second = two_frames(reader)
        counts = counting(monkeypatch, reader)
        for _ in range(2):
            for name in (first, second):
                reader.read_data(name)
        assert sorted(counts.values()) == [2, 2]  # one slot: each read of the other frame decompresses again
        assert reader.cached_frame(reader.member(first)) is None


def test_reopen_forgets_both_frames(bundle, monkeypatch):
    with BundleReader(bundle) as reader:
        first, second = two_frames(reader)
        reader.read_data(first), reader.read_data(second)
        reader.reopen()
        assert reader.cached_frame(reader.member(first)) is None
        assert reader.cached_frame(reader.member(second)) is None
