"""Damage stays local: one bad byte in a metadata member's frame costs that member only (issue 27).

The catalog copies, manifests, files.jsonl, collection.json and signature
were packed into one frame (75% of a small bundle): one flipped byte there
gave 60 problems and ``analyze --force`` recovered nothing although every
collected file was intact. Each metadata member now has a frame of its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aitrail.collector.bundle.reader import BundleReader
from tests.conftest import FIXTURES

HOME = FIXTURES / "pearai" / "agent-task" / "home"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    out = tmp_path_factory.mktemp("damage") / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(HOME), "-o", str(out), "--quiet"]).exit_code == 0
    return out


def flipped(bundle: Path, member: str, tmp_path: Path) -> Path:
    with BundleReader(bundle) as reader:
        entry = next(item for item in reader.members if item.name == member)
    damaged = tmp_path / "d.tar.zst"
    shutil.copyfile(bundle, damaged)
    with open(damaged, "r+b") as handle:
        handle.seek(entry.frame_offset + entry.frame_length // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    return damaged


def test_every_metadata_member_has_a_frame_of_its_own(bundle):
    with BundleReader(bundle) as reader:
        metadata = [item for item in reader.members if item.name.startswith("aitrail/") or "/" not in item.name]
        frames = [item.frame_offset for item in metadata]
    assert len(frames) == len(set(frames)), "two metadata members share a frame"


@pytest.mark.parametrize("member", ["aitrail/catalog/claude-code.yaml", "aitrail/catalog/pearai.yaml"])
def test_a_bad_byte_in_a_catalog_copy_costs_that_copy_and_analyze_force_reads_every_file(cli, bundle, member,
                                                                                        tmp_path):
    damaged = flipped(bundle, member, tmp_path)
    verify = cli("verify", damaged, "--quiet")
    problems = [line for line in verify.stderr.splitlines() if line.startswith("FAIL")]
    assert verify.exit_code == 1 and problems and all(member in line for line in problems), problems
    clean, forced = tmp_path / "clean.csv", tmp_path / "forced.csv"
    assert cli("analyze", bundle, "-o", clean, "--quiet").exit_code == 0
    assert cli("analyze", damaged, "-o", forced, "--quiet", "--force").exit_code == 0
    clean_rows = [line.split(",")[:10] for line in clean.read_text().splitlines()[1:]]
    forced_rows = [line.split(",")[:10] for line in forced.read_text().splitlines()[1:]]
    assert forced_rows[0][8].startswith("verify: this bundle FAILED") and forced_rows[1:] == clean_rows
