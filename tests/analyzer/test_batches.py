"""The coordinator's batches: every source once, in bundle order, large first and small last, frames whole."""

from __future__ import annotations

import itertools
import random

import pytest

from aitrail.analyzer.engine.batches import SMALLEST_BATCH, batches
from aitrail.analyzer.view.bundle import Source


def sources(sizes: list[int]) -> list[Source]:
    made = [Source(f"data/f{number}", "", "a", "a.s", "p", "primary", "jsonl", "home", f"f{number}", size, None,
                   order=number) for number, size in enumerate(sizes)]
    random.Random(5).shuffle(made)  # given in any order: batched in bundle order
    return made


@pytest.mark.parametrize("jobs", [1, 2, 4])
@pytest.mark.parametrize("shape", ["even", "mixed", "one-big"])
def test_batches_cover_the_sources_in_order_and_shrink(jobs, shape):
    rng = random.Random(jobs)
    sizes = {"even": [1000] * 400, "mixed": [rng.randint(0, 100_000) for _ in range(400)],
             "one-big": [10] * 50 + [10_000_000] + [10] * 50}[shape]
    batched = batches(sources(sizes), jobs)
    members = [member for batch, _ in batched for member, _ in batch]
    assert members == [f"data/f{number}" for number in range(len(sizes))]  # each once, contiguous, in order
    assert [size for _, size in batched] == [sum(max(1, sizes[int(member[6:])]) for member, _ in batch)
                                             for batch, _ in batched]
    total = sum(max(1, size) for size in sizes)
    assert len(batched) <= 8 * SMALLEST_BATCH * jobs
    if shape == "even":
        firsts = [size for _, size in batched[:-1]]
        assert firsts == sorted(firsts, reverse=True), "the batches shrink towards the end"
        assert batched[0][1] >= total / (2 * jobs) and batched[-2][1] < total / (2 * jobs)
        assert all(size >= total / (SMALLEST_BATCH * jobs) for size in firsts)


def test_no_source_no_batch():
    assert batches([], 2) == []


@pytest.mark.parametrize("jobs", [2, 4])
def test_a_frame_is_never_cut_between_two_batches(jobs):
    rng = random.Random(jobs)
    sizes = [rng.randint(0, 100_000) for _ in range(400)]
    frames = {f"data/f{number}": number // 7 for number in range(len(sizes))}  # seven members to a frame
    batched = batches(sources(sizes), jobs, lambda source: frames[source.member])
    members = [member for batch, _ in batched for member, _ in batch]
    assert members == [f"data/f{number}" for number in range(len(sizes))]
    assert len(batched) > 2 * jobs, "still cut into many batches"
    for before, after in itertools.pairwise(batched):
        assert frames[before[0][-1][0]] != frames[after[0][0][0]], "a frame split between two batches"


def test_a_member_the_index_lacks_may_end_a_batch():
    sizes = [1000] * 100  # the first batch reaches its size (a quarter) at the 26th member

    def frame_of(source):  # one frame for all, but the index lacks the 25th and 26th members
        return None if source.member in ("data/f24", "data/f25") else 0

    assert len(batches(sources(sizes), 2, lambda source: 0)[0][0]) == 32  # one frame: it waits for a smallest batch
    assert len(batches(sources(sizes), 2, frame_of)[0][0]) == 25  # a member without a frame ends it at once


def test_a_bundle_in_one_frame_is_still_cut_for_every_worker():
    sizes = [1000] * 400
    batched = batches(sources(sizes), 2, lambda source: 0)  # everything packed into the frame at offset 0
    assert len(batched) > 2
    total = sum(sizes)
    assert all(size <= total / 4 + total / 16 + 1000 for _, size in batched), "waits at most the smallest batch"
