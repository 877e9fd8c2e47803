"""How the coordinator cuts the primary sources into batches for the workers.

Batches are contiguous in bundle order, so a worker reads the bundle
forwards and the members the collector packed into one zstd frame are
decompressed once, by one worker; they shrink towards the end, so the
workers run out of work together.
"""

from __future__ import annotations

from collections.abc import Callable

from aitrail.analyzer.view.bundle import Source
from aitrail.collector.bundle.reader import BundleReader

SMALLEST_BATCH = 8  # per worker: no batch is smaller than 1/(8 * jobs) of the input (but the last)


def batches(sources: list[Source], jobs: int, frame_of: Callable[[Source], int | None] = lambda source: None,
            ) -> list[tuple[list[tuple[str, str]], int]]:
    """Contiguous runs of sources in bundle order, with their sizes; the members of one frame stay together.

    Guided: each batch takes half of what is left per worker, down to
    1/SMALLEST_BATCH of the input per worker, so the batches shrink towards
    the end and the workers, taking them in order, run out of work together.
    ``frame_of``: the offset of the zstd frame a source is in; a batch ends
    where the frame changes, so no frame (the collector packs small files
    together) is decompressed by two workers, unless waiting for the frame's
    end would grow it by more than the smallest batch: a small bundle packed
    into one frame is still parsed by every worker.
    """
    ordered = sorted(sources, key=lambda item: item.order)
    total = sum(max(1, source.size) for source in ordered)
    smallest = total / (SMALLEST_BATCH * jobs)
    cut: list[tuple[list[tuple[str, str]], int]] = []
    batch: list[tuple[str, str]] = []
    size, left, frame = 0, total, None
    for source in ordered:
        here, target = frame_of(source), max(smallest, left / (2 * jobs))
        if batch and size >= target and (here is None or here != frame or size >= target + smallest):
            cut.append((batch, size))
            left -= size
            batch, size = [], 0
        batch.append((source.member, source.store))
        size += max(1, source.size)
        frame = here
    if batch:
        cut.append((batch, size))
    return cut


def frame_finder(reader: BundleReader) -> Callable[[Source], int | None]:
    """A source's frame offset in this bundle (None for a member the index lacks: a forced run)."""

    def frame_of(source: Source) -> int | None:
        member = reader.get(source.member)
        return None if member is None else member.frame_offset
    return frame_of
