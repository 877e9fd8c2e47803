"""A merge split by key range gives exactly the bytes of one serial merge."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer import runs


def make_runs(tmp_path, keys_per_run: list[list[bytes]]) -> list[runs.Run]:
    made = []
    for number, keys in enumerate(keys_per_run):
        items = [(key, b"line " + key + b"\n") for key in keys]
        made.append(runs.write_run(items, str(tmp_path / f"r{number}.bin")))
    return made


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(st.lists(st.binary(min_size=1, max_size=6), max_size=300), min_size=1, max_size=5),
       parts=st.integers(min_value=1, max_value=5))
def test_range_merge_equals_serial_merge(tmp_path_factory, keys, parts):
    tmp_path = tmp_path_factory.mktemp("runs")
    unique = iter(range(10**9))
    keys = [[key + next(unique).to_bytes(4, "big") for key in run] for run in keys]  # keys are unique, as row keys are
    made = make_runs(tmp_path, keys)
    serial = tmp_path / "serial.bin"
    runs.merge_range(made, None, None, str(serial))
    pieces = []
    for number, (low, high) in enumerate(runs.ranges(runs.boundaries(made, parts))):
        part = tmp_path / f"part{number}.bin"
        runs.merge_range(made, low, high, str(part))
        pieces.append(str(part))
    out = tmp_path / "out.bin"
    runs.concatenate(str(out), b"header\n", pieces)
    assert out.read_bytes() == b"header\n" + serial.read_bytes()
    expected = b"".join(b"line " + key + b"\n" for key in sorted(key for run in keys for key in run))
    assert serial.read_bytes() == expected


def test_reading_from_the_middle_starts_near_the_key(tmp_path):
    rng = random.Random(3)
    keys = sorted(rng.randbytes(8) for _ in range(10_000))
    run = make_runs(tmp_path, [keys])[0]
    low, high = keys[5000], keys[5010]
    assert [key for key, _ in runs.read_run(run, low, high)] == keys[5000:5010]
    assert len(run.samples) == len(keys) // runs.SAMPLE_EVERY + 1


def test_equal_keys_across_a_sample_boundary_are_all_read(tmp_path):
    keys = [b"a"] * 10 + [b"b"] * (runs.SAMPLE_EVERY * 2) + [b"c"] * 10
    run = make_runs(tmp_path, [keys])[0]
    assert [key for key, _ in runs.read_run(run, b"b", b"c")] == [b"b"] * (runs.SAMPLE_EVERY * 2)


@settings(max_examples=40, deadline=None)
@given(items=st.lists(st.tuples(st.binary(max_size=12), st.binary(max_size=40)), max_size=200))
def test_a_parked_run_comes_back_as_it_was_held(tmp_path_factory, items):
    held = runs.hold(list(items), sum(len(line) for _, line in items))
    path = tmp_path_factory.mktemp("parked") / "p.bin"
    parked = runs.park(held, str(path))
    back = runs.unpark(parked)
    assert back.items == sorted(items) and back.size == held.size
    assert not path.exists()


def test_a_parked_file_of_another_length_is_refused(tmp_path):
    parked = runs.park(runs.hold([(b"k", b"line\n")], 5), str(tmp_path / "p.bin"))
    (tmp_path / "p.bin").write_bytes(b"line\nk+")
    with pytest.raises(OSError, match="not the ones written"):
        runs.unpark(parked)
