"""Golden timelines: every fixtures/<agent>/<case>/home gives exactly its expected.csv.

The home is copied and every file and directory time set to one fixed
instant first, so file-mtime rows do not depend on the checkout. To rewrite
the golden files after a reviewed change:

    AITRAIL_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

then read the diff of every expected.csv before committing it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

FIXED_NS = 1_759_449_600_000_000_000  # 2025-10-03T00:00:00Z
UPDATE = os.environ.get("AITRAIL_UPDATE_GOLDEN") == "1"


def cases() -> list[Path]:
    return sorted(path.parent for path in FIXTURES.glob("*/*/home") if path.is_dir())


def frozen_copy(home: Path, target: Path) -> Path:
    shutil.copytree(home, target, symlinks=True)
    return frozen(target)


def frozen(target: Path) -> Path:
    """Every time of every file and directory under ``target`` (and its own) set to FIXED_NS."""
    for directory, dirs, files in os.walk(target, topdown=False):
        for name in files + dirs:
            os.utime(os.path.join(directory, name), ns=(FIXED_NS, FIXED_NS), follow_symlinks=False)
    os.utime(target, ns=(FIXED_NS, FIXED_NS))
    return target


def timeline(cli, case: Path, tmp_path: Path, *extra: str, name: str = "timeline.csv") -> bytes:
    home = frozen_copy(case / "home", tmp_path / "home")
    bundle = tmp_path / "case.tar.zst"
    if not bundle.exists():
        result = cli("collect", "--home", home, "-o", bundle, "--quiet")
        assert result.exit_code == 0, result.output + result.stderr
    out = tmp_path / name
    result = cli("analyze", bundle, "-o", out, "--quiet", *extra)
    assert result.exit_code == 0, result.output + result.stderr
    return out.read_bytes()


def without_bundle_columns(produced: bytes, bundle: Path) -> bytes:
    """The timeline's 17 columns; each row's trailing host, case_id, bundle_sha256 checked against the bundle.

    The golden files hold the 17 columns only: the trailing three depend on the
    machine the test collects on (host) and on the collection time (the bundle's digest).
    """
    import csv
    import hashlib
    import io
    import json

    from aitrail.analyzer.outputs.export import OUTPUT_COLUMNS, csv_line
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        host = json.loads(reader.read_data("aitrail/collection.json"))["host"]["hostname"]
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    records = list(csv.reader(io.StringIO(produced.decode(), newline="")))
    assert tuple(records[0]) == OUTPUT_COLUMNS
    for record in records[1:]:
        assert record[17:] == [host, "", digest], record
    return "".join(csv_line(tuple(record[:17])) for record in records).encode()


@pytest.mark.parametrize("case", cases(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_golden_timeline(cli, case: Path, tmp_path: Path):
    produced = without_bundle_columns(timeline(cli, case, tmp_path, "--jobs", "1"), tmp_path / "case.tar.zst")
    expected_path = case / "expected.csv"
    if UPDATE:
        expected_path.write_bytes(produced)
    assert expected_path.exists(), "no golden file; create it with AITRAIL_UPDATE_GOLDEN=1 and review it"
    assert produced.decode() == expected_path.read_text()


def test_worker_processes_do_not_change_the_timeline(cli, tmp_path: Path):
    case = FIXTURES / "pearai" / "agent-task"
    one = timeline(cli, case, tmp_path, "--jobs", "1", name="one.csv")
    (tmp_path / "home").rename(tmp_path / "home-1")
    two = timeline(cli, case, tmp_path, "--jobs", "2", name="two.csv")
    assert one == two


def test_every_way_of_writing_the_timeline_gives_the_same_bytes(cli, tmp_path: Path, monkeypatch):
    """One process; workers whose parked runs are copied from their files; and the merge of run files."""
    from aitrail.analyzer.engine import sorted_runs as runs

    home = frozen_copy(FIXTURES / "demo-home", tmp_path / "home")
    bundle = tmp_path / "demo.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    written = {}
    for name, jobs, memory in (("one", "1", None), ("pool", "2", None), ("merged", "2", 4096)):
        if memory is not None:
            monkeypatch.setattr(runs, "MEMORY_BYTES", memory)  # past it: run files, merged by key range
        out = tmp_path / f"{name}.csv"
        result = cli("analyze", bundle, "-o", out, "--quiet", "--jobs", jobs)
        assert result.exit_code == 0, result.output + result.stderr
        written[name] = out.read_bytes()
    assert written["one"].count(b"\n") > 40  # every agent of the demo home
    assert written["one"] == written["pool"] == written["merged"]


@pytest.mark.parametrize("case", cases(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_readme_states_the_parser_rows_the_golden_file_holds(case: Path):
    """Each case's README says how many parser: rows it must give, including zero."""
    import csv
    import re

    readme = (case / "README.md").read_text()
    match = re.search(r"Expected `parser:` rows: (\d+)", readme)
    assert match, f"{case}/README.md must state 'Expected `parser:` rows: N'"
    with open(case / "expected.csv", newline="", encoding="utf-8") as handle:
        found = sum(row["text"].startswith("parser:") for row in csv.DictReader(handle))
    assert found == int(match.group(1))


@pytest.mark.parametrize("case", cases(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_tool_call_has_its_result_or_says_why_not(case: Path):
    """Across every agent, each tool_use row with an id is answered, or a parser row says why not.

    The answer is a tool_result row with the same id (same agent and session), or a
    `parser: no result recorded for tool call <id>` row; a store whose format never
    records results (catalog ``tool_results: not_recorded``) owes neither.
    """
    import csv

    from aitrail.collector import catalog

    resultless = {f"{agent.agent}.{store.id}" for agent in catalog.load().agents for store in agent.stores
                  if store.tool_results == "not_recorded"}

    with open(case / "expected.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    results = {(row["agent"], row["session_id"], row["tool_use_id"])
               for row in rows if row["turn_type"] == "tool_result"}
    notes = " ".join(row["text"] for row in rows if row["text"].startswith("parser: no result recorded for tool call"))
    for row in rows:
        if row["turn_type"] == "tool_use" and row["tool_use_id"] and row["store"] not in resultless:
            key = (row["agent"], row["session_id"], row["tool_use_id"])
            assert key in results or f"tool call {row['tool_use_id']} " in notes, (case.name, row["locator"], key)


def test_several_bundles_written_out_past_the_memory_budget_give_the_same_bytes(cli, tmp_path: Path, monkeypatch):
    """Bundles analyzed together hold one MEMORY_BYTES between them: past it the earlier ones go to run files."""
    from aitrail.analyzer.engine import coordinator as run_module
    from aitrail.analyzer.engine import sorted_runs as runs

    bundles = []
    for name in ("demo-home", "claude-code/current-session/home", "codex/tagged-rollout/home"):
        home = frozen_copy(FIXTURES / name, tmp_path / name.replace("/", "-"))
        bundle = tmp_path / f"{name.replace('/', '-')}.tar.zst"
        assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
        bundles.append(bundle)
    spills = []
    real = run_module._within_memory
    monkeypatch.setattr(run_module, "_within_memory", lambda results, temp: (spills.append(
        sum(runs.memory_cost(run) for result in results for run in result.runs) > runs.MEMORY_BYTES),
        real(results, temp)))
    written = {}
    for name, memory in (("held", None), ("spilled", 2048)):
        if memory is not None:
            monkeypatch.setattr(runs, "MEMORY_BYTES", memory)
        out = tmp_path / f"{name}.csv"
        result = cli("analyze", *bundles, "-o", out, "--quiet", "--jobs", "1")
        assert result.exit_code == 0, result.output + result.stderr
        written[name] = out.read_bytes()
    assert any(spills) and written["held"] == written["spilled"] and written["held"].count(b"\n") > 60
