"""Sorted runs of rendered rows on disk, and their merge into the timeline.

A run is a file of records ``(u32 key length, u32 line length, key, UTF-8
line)`` sorted by key (the byte-encoded row order of rows.sort_key). Every
SAMPLE_EVERY-th record's key and offset is kept beside the path, so that a
merge can start reading any run near a given key.

A batch whose rendered rows stay within its share of MEMORY_BYTES is not
written as a run: it comes back as a ``Held`` run (its sorted items in
memory; from a pool worker ``Parked``, one file the coordinator reads back
while the workers go on, not megabytes through a pipe). When
everything fits in MEMORY_BYTES, the timeline is ordered in memory and
written once (``write_in_memory``): no byte is copied more often than the
final order needs. Otherwise the held runs are written out too and the final
merge is split by key range: with boundaries chosen from the samples, each
worker merges one range of every run into a part file, and the parts, in
range order, are copied into the output. Either way the result is the same
bytes as one serial merge.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import os
import shutil
import struct
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

SAMPLE_EVERY = 2048
RECORD = struct.Struct(">II")
MEMORY_BYTES = 192 * 1024 * 1024  # rendered rows ordered in memory; past this, merged from run files


@dataclass
class Run:
    """A sorted run file on disk, with every SAMPLE_EVERY-th key and its record's offset for seeking."""

    path: str
    samples: list[tuple[bytes, int]] = field(default_factory=list)  # (key, offset of its record)


@dataclass
class Held:
    """A sorted run kept in memory: (key, line) items, and the bytes of their lines."""

    items: list[tuple[bytes, bytes]]
    size: int


@dataclass
class Parked:
    """A held run on its way from a pool worker: its lines, then its keys, in one file; their lengths here.

    A result crosses the pipe to the coordinator 64 KiB a read: a batch's
    megabytes of lines kept the worker waiting tens of milliseconds before
    its next batch. Parked, they are one write to the page cache, and the
    coordinator reads them back (``unpark``) while the workers go on.
    """

    path: str
    size: int  # bytes of the lines; the keys follow them in the file
    line_lengths: array
    key_lengths: array


def run_size(run: Run | Held | Parked) -> int:
    """Bytes of rendered lines a run holds (on disk, or in memory)."""
    return os.path.getsize(run.path) if isinstance(run, Run) else run.size


def hold(items: list[tuple[bytes, bytes]], size: int) -> Held:
    """Sort (key, UTF-8 line) items and keep them in memory as a run."""
    items.sort()
    return Held(items, size)


def park(run: Held, path: str) -> Parked:
    """Write a held run's lines and keys to ``path``; keep only their lengths."""
    with open(path, "xb") as handle:
        handle.write(b"".join([line for _, line in run.items]))
        handle.write(b"".join([key for key, _ in run.items]))
    return Parked(path, run.size, array("I", [len(line) for _, line in run.items]),
                  array("I", [len(key) for key, _ in run.items]))


def unpark(run: Parked) -> Held:
    """A parked run held in memory again, its items in their order; its file is removed."""
    with open(run.path, "rb") as handle:
        data = handle.read()
    os.unlink(run.path)
    if len(data) != run.size + sum(run.key_lengths) or len(run.line_lengths) != len(run.key_lengths):
        raise OSError(f"{run.path}: a parked run of {len(data)} bytes, not the ones written")
    lines = [data[start:end] for start, end in itertools.pairwise(itertools.accumulate(run.line_lengths, initial=0))]
    keys = [data[start:end] for start, end in itertools.pairwise(itertools.accumulate(run.key_lengths,
                                                                                      initial=run.size))]
    return Held(list(zip(keys, lines, strict=True)), run.size)


def written_out(runs: list[Run | Held], directory: str) -> list[Run]:
    """Every run as a run file: the held ones are written to ``directory``."""
    files = []
    for number, run in enumerate(runs):
        files.append(write_run(run.items, os.path.join(directory, f"run-held-{number}.bin"))
                     if isinstance(run, Held) else run)
    return files


def write_in_memory(target, header: bytes, runs: list[Run | Held]) -> int:
    """Order every run's items in memory and write them after ``header`` to a binary stream; the row count.

    The runs are each sorted already: the sort merges them (Timsort finds the
    runs), in C, without a Python step per row.
    """
    items: list[tuple[bytes, bytes]] = []
    for run in runs:
        items.extend(run.items if isinstance(run, Held) else read_run(run))
    items.sort()
    target.write(header)
    for start in range(0, len(items), 4096):
        target.write(b"".join([line for _, line in items[start:start + 4096]]))
    return len(items)


def write_run(items: list[tuple[bytes, bytes]], path: str) -> Run:
    """Sort (key, UTF-8 line) items and write them; remember a sample of keys and offsets."""
    items.sort()
    run = Run(path)
    offset = 0
    with open(path, "xb") as handle:
        for start in range(0, len(items), SAMPLE_EVERY):
            chunk = items[start:start + SAMPLE_EVERY]
            run.samples.append((chunk[0][0], offset))
            parts = []
            for key, line in chunk:
                parts += (RECORD.pack(len(key), len(line)), key, line)
            data = b"".join(parts)
            handle.write(data)
            offset += len(data)
    return run


def read_run(run: Run, low: bytes | None = None, high: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
    """The run's records with low <= key < high (either bound may be None)."""
    start = 0
    if low is not None and run.samples:
        # the last sample strictly below low: records equal to low may begin in the chunk before
        position = bisect.bisect_left([key for key, _ in run.samples], low) - 1
        start = run.samples[position][1] if position >= 0 else 0
    with open(run.path, "rb", buffering=1024 * 1024) as handle:
        handle.seek(start)
        while True:
            head = handle.read(RECORD.size)
            if not head:
                return
            key_length, line_length = RECORD.unpack(head)
            key = handle.read(key_length)
            if high is not None and key >= high:
                return
            line = handle.read(line_length)
            if low is None or key >= low:
                yield key, line


def boundaries(runs: list[Run], parts: int) -> list[bytes]:
    """parts-1 keys that split the sampled keys into parts of about equal record counts."""
    keys = sorted(key for run in runs for key, _ in run.samples)
    if parts <= 1 or len(keys) < parts:
        return []
    return sorted({keys[len(keys) * number // parts] for number in range(1, parts)})


def merge_range(runs: list[Run], low: bytes | None, high: bytes | None, path: str) -> int:
    """Merge one key range of every run into a part file; return the number of lines."""
    count = 0
    with open(path, "xb") as handle:
        batch: list[bytes] = []
        for _, line in heapq.merge(*(read_run(run, low, high) for run in runs)):
            batch.append(line)
            if len(batch) == 4096:
                handle.write(b"".join(batch))
                count += len(batch)
                batch = []
        handle.write(b"".join(batch))
        count += len(batch)
    return count


def ranges(cuts: list[bytes]) -> list[tuple[bytes | None, bytes | None]]:
    """The (low, high) key ranges between consecutive cuts; the first and last are open (None)."""
    edges: list[bytes | None] = [None, *cuts, None]
    return list(zip(edges[:-1], edges[1:], strict=True))


def concatenate(output: str, header: bytes, parts: Iterable[str]) -> None:
    """Write the header, then each part file in order (copied inside the kernel where it can be)."""
    with open(output, "xb") as target:
        target.write(header)
        target.flush()
        for part in parts:
            with open(part, "rb") as source:
                _copy(source, target)
            os.unlink(part)


def _copy(source, target) -> None:
    size = os.fstat(source.fileno()).st_size
    copied = 0
    if hasattr(os, "copy_file_range"):
        try:
            while copied < size:
                sent = os.copy_file_range(source.fileno(), target.fileno(), size - copied)
                if sent == 0:
                    break
                copied += sent
        except OSError:
            pass  # a filesystem that does not support it: the ordinary copy below finishes the job
    if copied < size:
        source.seek(copied)
        target.seek(0, os.SEEK_END)
        shutil.copyfileobj(source, target, 1024 * 1024)


def concatenate_to(target, header: bytes, parts: Iterable[str]) -> None:
    """concatenate(), to an open binary stream (``-o -``: standard output)."""
    target.write(header)
    for part in parts:
        with open(part, "rb") as source:
            shutil.copyfileobj(source, target, 1024 * 1024)
        os.unlink(part)
    target.flush()
