"""The coordinator's batches: every source once, in bundle order, large first and small last."""

from __future__ import annotations

import random

import pytest

from aitrail.analyzer.bundle import Source
from aitrail.analyzer.run import SMALLEST_BATCH, _batches


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
    batched = _batches(sources(sizes), jobs)
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
    assert _batches([], 2) == []
