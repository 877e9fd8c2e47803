"""The run's directory descriptors: one bounded pool for every tree, reopened on demand, never leaked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aitrail.collector.finding.descriptors import DescriptorPool
from aitrail.collector.finding.plan import Location
from aitrail.collector.finding.walk import Tree


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def deep_home(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    (home / "a" / "b" / "c" / "d").mkdir(parents=True)
    (home / "a" / "b" / "c" / "d" / "f.txt").write_text(name)
    (home / "x" / "y").mkdir(parents=True)
    (home / "x" / "y" / "g.txt").write_text(name)
    return home


def test_many_trees_share_one_bound_and_reopen_what_was_closed(tmp_path):
    pool = DescriptorPool(6)
    trees = [Tree(Location(label=f"h{n}", base=str(deep_home(tmp_path, f"h{n}")), kind="home"), descriptors=pool)
             for n in range(5)]
    before = open_descriptors()
    for _ in range(3):  # each round finds every tree's directories closed by the others' and reopens them
        for tree in trees:
            assert [name for name, _ in tree.listdir(("a", "b", "c", "d"))] == ["f.txt"]
            assert tree.lstat(("x", "y", "g.txt")).size == 2
            assert len(pool) <= 6 and open_descriptors() - before <= 6
    opened = sum(tree.stats.directories_opened for tree in trees)
    assert opened > 5 * 7  # more than one opening of each tree's seven directories: the bound held
    for tree in trees:
        tree.close()
    assert len(pool) == 0 and open_descriptors() == before


def test_a_closed_tree_opens_again_and_a_link_swapped_in_is_still_not_followed(tmp_path):
    pool = DescriptorPool(4)
    home = deep_home(tmp_path, "h")
    tree = Tree(Location(label="h", base=str(home), kind="home"), descriptors=pool)
    assert tree.lstat(("a", "b", "c", "d", "f.txt")).kind == "file"
    tree.close()
    outside = tmp_path / "outside"
    (outside / "c" / "d").mkdir(parents=True)
    (outside / "c" / "d" / "f.txt").write_text("outside")
    os.rename(home / "a" / "b", tmp_path / "moved")
    os.symlink(outside, home / "a" / "b")  # the subject swaps a directory for a link between two phases
    with pytest.raises(OSError):  # refused: the reopen goes component by component, never through a link
        tree.lstat(("a", "b", "c", "d", "f.txt"))
    tree.close()
    assert len(pool) == 0
