"""A merge split by key range gives exactly the bytes of one serial merge."""

from __future__ import annotations

import io
import os
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.engine import sorted_runs as runs


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
    stored = runs.unpark(parked)
    assert stored.keys == [key for key, _ in sorted(items)] and stored.size == held.size
    assert path.exists()  # the lines stay in the file until the timeline is written
    back = runs.load(stored)
    assert back.items == sorted(items) and back.size == held.size
    assert not path.exists()


def test_a_parked_file_of_another_length_is_refused(tmp_path):
    parked = runs.park(runs.hold([(b"k", b"line\n")], 5), str(tmp_path / "p.bin"))
    (tmp_path / "p.bin").write_bytes(b"line\nk+")
    with pytest.raises(OSError, match="not the ones written"):
        runs.unpark(parked)


def test_a_short_writev_is_finished_by_plain_writes(tmp_path, monkeypatch):
    lines = [bytes([65 + number % 26]) * (number + 1) for number in range(3000)]
    real = runs.os.writev
    # a short write, as a signal or a full disk makes one: half of the first line, and the count it wrote
    monkeypatch.setattr(runs.os, "writev", lambda fd, chunk: real(fd, [chunk[0][:len(chunk[0]) // 2]]))
    held = runs.hold([(number.to_bytes(4, "big"), line) for number, line in enumerate(lines)], sum(map(len, lines)))
    parked = runs.park(held, str(tmp_path / "p.bin"))
    assert (tmp_path / "p.bin").read_bytes()[:held.size] == b"".join(lines)
    assert runs.load(runs.unpark(parked)).items == held.items


# -- the final write: every run's rows in (key, line) order --------------------------------------------------


def _as_kind(kind: str, items: list[tuple[bytes, bytes]], path) -> runs.Run | runs.Held | runs.Stored:
    held = runs.hold(list(items), sum(len(line) for _, line in items))
    if kind == "held":
        return held
    if kind == "file":
        return runs.write_run(list(items), str(path))
    return runs.unpark(runs.park(held, str(path)))


class _NoDescriptor(io.BytesIO):
    def fileno(self):
        raise io.UnsupportedOperation("fileno")


_ITEM = st.tuples(st.sampled_from([b"a", b"b", b"c", b"d"]), st.binary(max_size=3))


@settings(max_examples=150, deadline=None)
@given(kinds_items=st.lists(st.tuples(st.sampled_from(["held", "stored", "file"]), st.lists(_ITEM, max_size=30)),
                            min_size=1, max_size=5),
       send_bytes=st.sampled_from([1, 10**9]), descriptor=st.booleans())
def test_the_timeline_is_every_item_in_key_then_line_order(tmp_path_factory, kinds_items, send_bytes, descriptor):
    """Few keys, so that runs tie on keys often: the lines must decide, as one sort of all the items does."""
    tmp_path = tmp_path_factory.mktemp("write")
    made = [_as_kind(kind, [(key, line + b"\n") for key, line in items], tmp_path / f"run-{number}.bin")
            for number, (kind, items) in enumerate(kinds_items)]
    expected = b"header\n" + b"".join(line for _, line in sorted(
        (key, line + b"\n") for _, items in kinds_items for key, line in items))
    runs.SEND_BYTES, saved = send_bytes, runs.SEND_BYTES
    try:
        if descriptor:
            with open(tmp_path / "out.csv", "xb") as target:
                count = runs.write_in_memory(target, b"header\n", made)
            written = (tmp_path / "out.csv").read_bytes()
        else:
            target = _NoDescriptor()
            count = runs.write_in_memory(target, b"header\n", made)
            written = target.getvalue()
    finally:
        runs.SEND_BYTES = saved
    assert written == expected
    assert count == sum(len(items) for _, items in kinds_items)


def test_long_stretches_of_stored_runs_are_copied_by_the_kernel(tmp_path, monkeypatch):
    rng = random.Random(7)
    # stretches of 500 consecutive keys in each run, of about 100 KB each: several go by sendfile
    items = [[(number.to_bytes(4, "big"), rng.randbytes(rng.randint(1, 400)) + b"\n")
              for number in range(6000) if number // 500 % 3 == run] for run in range(3)]
    made = [runs.unpark(runs.park(runs.hold(list(run), sum(len(line) for _, line in run)),
                                  str(tmp_path / f"p{number}.bin")))
            for number, run in enumerate(items)]
    sent = []
    real = runs.os.sendfile
    monkeypatch.setattr(runs.os, "sendfile", lambda *args: sent.append(args[3]) or real(*args))
    with open(tmp_path / "out.csv", "xb") as target:
        runs.write_in_memory(target, b"h\n", made)
    assert (tmp_path / "out.csv").read_bytes() == b"h\n" + b"".join(line for _, line in sorted(sum(items, [])))
    assert sent and sum(sent) >= runs.SEND_BYTES


def test_an_output_that_refuses_sendfile_is_written_plainly(tmp_path):
    """An output opened for appending refuses sendfile (EINVAL): the same bytes are read and written instead."""
    items = [(number.to_bytes(4, "big"), b"x" * 1000 + b"\n") for number in range(400)]
    stored = runs.unpark(runs.park(runs.hold(list(items), 400 * 1001), str(tmp_path / "p.bin")))
    (tmp_path / "out.csv").write_bytes(b"")
    with open(tmp_path / "out.csv", "ab") as target:
        assert runs.write_in_memory(target, b"h\n", [stored]) == 400
    assert (tmp_path / "out.csv").read_bytes() == b"h\n" + b"".join(line for _, line in items)


def test_a_stored_run_cut_short_is_an_error_not_a_short_timeline(tmp_path):
    items = [(number.to_bytes(4, "big"), b"y" * 1000 + b"\n") for number in range(200)]
    stored = runs.unpark(runs.park(runs.hold(list(items), 200 * 1001), str(tmp_path / "p.bin")))
    with open(tmp_path / "p.bin", "r+b") as handle:
        handle.truncate(100 * 1001)
    for send_bytes in (1, 10**9):  # by sendfile, and by reading
        runs.SEND_BYTES, saved = send_bytes, runs.SEND_BYTES
        try:
            with open(tmp_path / f"out-{send_bytes}.csv", "xb") as target, pytest.raises(OSError, match="shorter"):
                runs.write_in_memory(target, b"h\n", [stored])
        finally:
            runs.SEND_BYTES = saved


def test_stored_and_held_runs_written_out_merge_to_the_same_bytes(tmp_path):
    """Past MEMORY_BYTES every run becomes a run file (a stored one read back from its file) for the range merge."""
    rng = random.Random(11)
    items = [[(rng.randbytes(5), rng.randbytes(rng.randint(0, 30)) + b"\n") for _ in range(300)] for _ in range(3)]
    made = [_as_kind(kind, run, tmp_path / f"in-{kind}.bin") for kind, run in zip(("stored", "held", "file"), items,
                                                                                   strict=True)]
    files = runs.written_out(made, str(tmp_path))
    assert all(isinstance(run, runs.Run) for run in files)
    assert not (tmp_path / "in-stored.bin").exists()  # read back whole, then removed
    runs.merge_range(files, None, None, str(tmp_path / "merged.bin"))
    assert (tmp_path / "merged.bin").read_bytes() == b"".join(line for _, line in sorted(sum(items, [])))


@pytest.mark.parametrize("target_kind", ["file", "stream without descriptor", "pipe"])
def test_concatenated_parts_are_the_header_then_each_part_and_the_parts_go(tmp_path, target_kind):
    rng = random.Random(11)
    sizes = [0, 10, runs.SEND_BYTES + 17, 3 * runs.SEND_BYTES]  # under and over what goes by sendfile
    parts, expected = [], b"header\n"
    for number, size in enumerate(sizes):
        data = rng.randbytes(size)
        part = tmp_path / f"part{number}.bin"
        part.write_bytes(data)
        parts.append(str(part))
        expected += data
    if target_kind == "file":
        out = tmp_path / "out.bin"
        runs.concatenate(str(out), b"header\n", parts)
        written = out.read_bytes()
    elif target_kind == "stream without descriptor":
        stream = io.BytesIO()
        runs.concatenate_to(stream, b"header\n", parts)
        written = stream.getvalue()
    else:
        read_end, write_end = os.pipe()
        chunks = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(read_end, 1 << 16), b"")))
        reader.start()
        with os.fdopen(write_end, "wb") as target:
            runs.concatenate_to(target, b"header\n", parts)
        reader.join()
        os.close(read_end)
        written = b"".join(chunks)
    assert written == expected
    assert not any(os.path.exists(part) for part in parts)


def test_a_part_copied_without_sendfile_is_read_a_write_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(runs, "WRITE_BYTES", 1000)
    data = random.Random(12).randbytes(10_500)
    part = tmp_path / "part.bin"
    part.write_bytes(data)
    reads = []
    original = runs._Timeline.read

    def read(self, path, start, end):
        reads.append(end - start)
        return original(self, path, start, end)

    monkeypatch.setattr(runs._Timeline, "read", read)
    stream = io.BytesIO()  # no file descriptor: no sendfile
    runs.concatenate_to(stream, b"", [str(part)])
    assert stream.getvalue() == data
    assert max(reads) <= 1000 and len(reads) == 11
