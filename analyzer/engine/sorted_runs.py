"""Sorted runs of rendered rows on disk, and their merge into the timeline.

A run is a file of records ``(u32 key length, u32 line length, key, UTF-8
line)`` sorted by key (the byte-encoded row order of rows.sort_key). Every
SAMPLE_EVERY-th record's key and offset is kept beside the path, so that a
merge can start reading any run near a given key.

A batch whose rendered rows stay within its share of MEMORY_BYTES is not
written as a run: it comes back as a ``Held`` run (its sorted items in
memory); from a pool worker ``Parked``: its lines, then its keys, in one
file, not megabytes through a pipe. The coordinator reads back only a
parked run's keys (``unpark``: a ``Stored`` run, its lines left in the
file). When everything fits in MEMORY_BYTES, the timeline is written once
in key order (``write_in_memory``): stretch by stretch of consecutive rows
of one run, a stored stretch copied from its file into the output inside
the kernel where it can be. The coordinator never copies a stored line: no
byte is copied more often than the final order needs. Otherwise the runs
are written out as run files and the final merge is split by key range:
with boundaries chosen from the samples, each worker merges one range of
every run into a part file, and the parts, in range order, are copied into
the output. Either way the result is the same bytes as one serial merge of
the runs' (key, line) items.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import os
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

SAMPLE_EVERY = 2048
RECORD = struct.Struct(">II")
MEMORY_BYTES = 192 * 1024 * 1024  # rows ordered in memory (memory_cost); past this, merged from run files
# Python objects a row held in memory costs besides its line's and key's bytes: a (key, line) tuple, two
# bytes headers and a list slot (a stored row: a key's header, its slot and an offset). Counted, so that
# a bundle of many short rows is held within MEMORY_BYTES too (lines alone said 4M rows fit: 1.5 GB).
ROW_OVERHEAD = 128
WRITE_BYTES = 1024 * 1024  # lines gathered before each write of the timeline
SEND_BYTES = 64 * 1024  # a stored stretch at least this long is copied file to file by the kernel
_IOV_LINES = 1024  # lines a writev takes at once (IOV_MAX is 1024 on Linux)


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
    cost: int | None = None  # memory_cost, once computed (the items never change)


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


@dataclass
class Stored:
    """A parked run back with the coordinator: its keys in memory, its lines still in the file.

    ``offsets``: where each line starts in the file, then where the last ends.
    """

    path: str
    size: int
    keys: list[bytes]
    offsets: list[int]
    cost: int | None = None  # memory_cost, once computed


def run_size(run: Run | Held | Parked | Stored) -> int:
    """Bytes of rendered lines a run holds (on disk, or in memory)."""
    return os.path.getsize(run.path) if isinstance(run, Run) else run.size


def memory_cost(run: Run | Held | Parked | Stored) -> int:
    """Bytes a run takes once in memory (lines, keys and ROW_OVERHEAD a row): what MEMORY_BYTES bounds.

    A held or stored run's cost is computed once and kept: the coordinator asks
    again after every bundle of a run of several.
    """
    if isinstance(run, Run):  # read whole only by write_in_memory: its file and a row's objects (rows estimated)
        return os.path.getsize(run.path) + ROW_OVERHEAD * SAMPLE_EVERY * len(run.samples)
    if isinstance(run, Parked):
        return run.size + sum(run.key_lengths) + ROW_OVERHEAD * len(run.key_lengths)
    if run.cost is None:
        keys = (key for key, _ in run.items) if isinstance(run, Held) else run.keys
        run.cost = run.size + sum(len(key) + ROW_OVERHEAD for key in keys)
    return run.cost


def hold(items: list[tuple[bytes, bytes]], size: int) -> Held:
    """Sort (key, UTF-8 line) items and keep them in memory as a run."""
    items.sort()
    return Held(items, size)


def park(run: Held, path: str) -> Parked:
    """Write a held run's lines and keys to ``path``; keep only their lengths."""
    with open(path, "xb", buffering=0) as handle:
        _write_lines(handle, [line for _, line in run.items])
        _write_lines(handle, [b"".join([key for key, _ in run.items])])
    return Parked(path, run.size, array("I", [len(line) for _, line in run.items]),
                  array("I", [len(key) for key, _ in run.items]))


def _write_lines(handle, lines: list[bytes]) -> None:
    """Write the lines one after another to an unbuffered binary file, without joining them first."""
    if not hasattr(os, "writev"):
        lines = [b"".join(lines)]
    for start in range(0, len(lines), _IOV_LINES):
        chunk = lines[start:start + _IOV_LINES]
        written = os.writev(handle.fileno(), chunk) if len(chunk) > 1 else 0
        rest = memoryview(b"".join(chunk))[written:] if written < sum(map(len, chunk)) else b""
        while rest:  # one line, or a short writev (a signal, a full disk): the rest plainly, to the end or an error
            rest = rest[handle.write(rest):]


def unpark(run: Parked) -> Stored:
    """A parked run's keys, read back; its lines stay in the file, which must hold exactly what was written."""
    key_bytes = sum(run.key_lengths)
    with open(run.path, "rb") as handle:
        length = os.fstat(handle.fileno()).st_size
        if length != run.size + key_bytes or len(run.line_lengths) != len(run.key_lengths):
            raise OSError(f"{run.path}: a parked run of {length} bytes, not the ones written")
        handle.seek(run.size)
        data = handle.read(key_bytes)
    if len(data) != key_bytes:
        raise OSError(f"{run.path}: a parked run of {run.size + len(data)} bytes, not the ones written")
    keys = [data[start:end] for start, end in itertools.pairwise(itertools.accumulate(run.key_lengths, initial=0))]
    return Stored(run.path, run.size, keys, list(itertools.accumulate(run.line_lengths, initial=0)))


def load(run: Stored) -> Held:
    """A stored run held in memory whole (its lines read from the file), in its order; the file is removed."""
    with open(run.path, "rb") as handle:
        data = handle.read(run.size)
    if len(data) != run.size:
        raise OSError(f"{run.path}: a stored run of {len(data)} bytes of lines, not {run.size}")
    os.unlink(run.path)
    lines = [data[start:end] for start, end in itertools.pairwise(run.offsets)]
    return Held(list(zip(run.keys, lines, strict=True)), run.size)


def written_out(runs: list[Run | Held | Stored], directory: str) -> list[Run]:
    """Every run as a run file: the held and stored ones are written to ``directory``, one at a time."""
    files = []
    for number, run in enumerate(runs):
        if isinstance(run, Stored):
            run = load(run)
        files.append(write_run(run.items, os.path.join(directory, f"run-held-{number}.bin"))
                     if isinstance(run, Held) else run)
    return files


def write_in_memory(target, header: bytes, runs: list[Run | Held | Stored]) -> int:
    """Write ``header``, then every run's rows in (key, line) order, to a binary stream; the row count.

    The runs are each sorted already. The rows are taken stretch by stretch
    (``stretches``: the rows of one run before the next run's first key), so
    the order costs a step per stretch, not per row; a stored stretch is
    copied from its file (``_Timeline``). Run files, from the secondary parse,
    are read into memory first.
    """
    ordered = [Held(list(read_run(run)), 0) if isinstance(run, Run) else run for run in runs]
    keys = [run.keys if isinstance(run, Stored) else [key for key, _ in run.items] for run in ordered]
    timeline = _Timeline(target)
    try:
        timeline.write(header)

        def line(number: int, position: int) -> bytes:
            run = ordered[number]
            if isinstance(run, Held):
                return run.items[position][1]
            return timeline.read(run.path, run.offsets[position], run.offsets[position + 1])

        count = 0
        for number, start, end in stretches(keys, line):
            run = ordered[number]
            if isinstance(run, Held):
                for first in range(start, end, 4096):  # joined once, by the write they are gathered for
                    timeline.write_lines([line for _, line in run.items[first:min(end, first + 4096)]])
            else:
                timeline.copy(run.path, run.offsets[start], run.offsets[end])
            count += end - start
        timeline.flush()
    finally:
        timeline.close()
    return count


def stretches(keys: list[list[bytes]], line: Callable[[int, int], bytes]) -> Iterator[tuple[int, int, int]]:
    """(run, start, end): the rows of every run in (key, line) order, as stretches of consecutive rows of one run.

    ``keys``: each run's keys, sorted (its items sorted by key, then line).
    A stretch is every row of one run before the smallest key another run
    has left (bisect). Rows of equal keys in several runs are ordered by
    their lines (``line(run, position)``), one at a time: the order a sort
    of the (key, line) items of all runs gives.
    """
    heap = [(run_keys[0], number) for number, run_keys in enumerate(keys) if run_keys]
    heapq.heapify(heap)
    positions = [0] * len(keys)
    while heap:
        key, number = heapq.heappop(heap)
        if heap and heap[0][0] == key:  # another run's next row has this key too: the lines decide
            tied = [number]
            while heap and heap[0][0] == key:
                tied.append(heapq.heappop(heap)[1])
            number = min(tied, key=lambda other: line(other, positions[other]))
            for other in tied:
                if other != number:
                    heapq.heappush(heap, (key, other))
            start = positions[number]
            end = start + 1
        else:
            start = positions[number]
            end = bisect.bisect_left(keys[number], heap[0][0], start) if heap else len(keys[number])
        yield number, start, end
        positions[number] = end
        if end < len(keys[number]):
            heapq.heappush(heap, (keys[number][end], number))


class _Timeline:
    """The output stream: lines gathered and written WRITE_BYTES at a time; stored stretches copied file to file.

    A stretch of SEND_BYTES or more goes by ``os.sendfile`` (the kernel
    copies from the run's file to the output); where the output or the
    platform does not take it (a terminal, an append-only file, no
    sendfile), it and every later stretch are read and written.
    """

    def __init__(self, target):
        self.target = target
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.files: dict[str, object] = {}
        try:
            self.fd: int | None = target.fileno() if hasattr(os, "sendfile") else None
        except (AttributeError, OSError, ValueError):  # a stream without a file descriptor (io.UnsupportedOperation)
            self.fd = None

    def write(self, data: bytes) -> None:
        """Gather ``data`` for the next write."""
        self.write_lines([data])

    def write_lines(self, lines: list[bytes]) -> None:
        """Gather ``lines``, as they are, for the next write."""
        self.pending.extend(lines)
        self.pending_bytes += sum(map(len, lines))
        if self.pending_bytes >= WRITE_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write what is gathered, through to the file descriptor."""
        if self.pending:
            self.target.write(b"".join(self.pending))
            self.pending, self.pending_bytes = [], 0
        self.target.flush()

    def copy(self, path: str, start: int, end: int) -> None:
        """The file's bytes ``start`` to ``end`` (a stored run's, a merged part's), next in the output."""
        if self.fd is not None and end - start >= SEND_BYTES:
            self.flush()
            start = self._send(path, start, end)
        while start < end:  # read and written WRITE_BYTES at a time: a merged part can be hundreds of MB
            stop = min(end, start + WRITE_BYTES)
            self.write(self.read(path, start, stop))
            start = stop

    def _send(self, path: str, start: int, end: int) -> int:
        """Copy by sendfile as far as it goes; where it stopped (``end`` when it went through)."""
        source = self._file(path).fileno()
        try:
            while start < end:
                sent = os.sendfile(self.fd, source, start, end - start)
                if sent == 0:
                    raise OSError(f"{path}: shorter than the lines written to it")
                start += sent
        except OSError as exc:
            if exc.errno is None:
                raise
            self.fd = None  # the output does not take sendfile: read and write from here on
        return start

    def read(self, path: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` of a file."""
        handle = self._file(path)
        handle.seek(start)
        data = handle.read(end - start)
        if len(data) != end - start:
            raise OSError(f"{path}: shorter than the lines written to it")
        return data

    def _file(self, path: str):
        handle = self.files.get(path)
        if handle is None:
            if len(self.files) >= 64:  # bundles of many runs: a few files open at a time
                self.close()
            handle = self.files[path] = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        return handle

    def close(self) -> None:
        """Close the run files opened for reading."""
        for handle in self.files.values():
            handle.close()
        self.files = {}


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
    """Write the header, then each part file in order, to a new file (copied inside the kernel where it can be)."""
    with open(output, "xb") as target:
        concatenate_to(target, header, parts)


def concatenate_to(target, header: bytes, parts: Iterable[str]) -> None:
    """concatenate(), to an open binary stream (``-o -``: standard output); each part is removed once copied."""
    timeline = _Timeline(target)
    try:
        timeline.write(header)
        for part in parts:
            timeline.copy(part, 0, os.path.getsize(part))
            timeline.close()  # its handle, before the file goes
            os.unlink(part)
        timeline.flush()
    finally:
        timeline.close()
