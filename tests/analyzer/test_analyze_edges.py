"""Issue 8, part B: analyze's CLI edges, the structural check before any parser, workers that decode nothing twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.analyzer.cli import summary_table
from aitrail.analyzer.engine import coordinator as run_module
from aitrail.analyzer.engine import worker as worker_module
from aitrail.analyzer.view.bundle import Bundle, Source
from aitrail.collector.bundle import layout
from aitrail.collector.cli import main
from aitrail.collector.verify import RateLimiter
from tests.collector.bundle_tools import flip_byte, rewrite
from tests.conftest import FIXTURES, bundle_json, collect_fixture_home


@pytest.fixture(scope="module")
def demo_bundle(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "pearai" / "agent-task" / "home", "demo")


def cli(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args], catch_exceptions=False)


def test_dash_writes_the_timeline_to_stdout(demo_bundle, tmp_path):
    to_file = cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--quiet")
    to_stdout = cli("analyze", demo_bundle, "-o", "-", "--quiet")
    assert to_file.exit_code == to_stdout.exit_code == 0
    assert to_stdout.stdout_bytes == (tmp_path / "t.csv").read_bytes()
    assert not Path("-").exists()


def test_summary_dash_writes_the_summary_to_stdout(demo_bundle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--summary", "-", "--quiet")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["rows"] > 0 and not (tmp_path / "-").exists()
    both = CliRunner().invoke(main, ["analyze", str(demo_bundle), "-o", "-", "--summary", "-"])
    assert both.exit_code == 2 and "both write to stdout" in both.stderr


@pytest.mark.parametrize("option", ["-o", "--summary"])
def test_missing_output_directory_is_a_usage_error_before_any_work(demo_bundle, tmp_path, monkeypatch, option):
    monkeypatch.setattr("aitrail.analyzer.cli.run_analysis", lambda options: pytest.fail("analysis started"))
    args = ["-o", tmp_path / "t.csv", "--summary", tmp_path / "s.json"]
    args[args.index(option) + 1] = tmp_path / "nowhere" / "x"
    result = CliRunner().invoke(main, ["analyze", str(demo_bundle), *map(str, args)])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_unknown_agent_is_a_usage_error(demo_bundle, tmp_path):
    result = cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--agent", "nosuch")
    assert result.exit_code == 2 and "unknown agent 'nosuch'" in result.stderr
    assert not (tmp_path / "t.csv").exists()
    assert cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--agent", "pearai", "--quiet").exit_code == 0


def test_quiet_silences_progress_and_summary(demo_bundle, tmp_path):
    quiet = cli("analyze", demo_bundle, "-o", tmp_path / "q.csv", "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    loud = cli("analyze", demo_bundle, "-o", tmp_path / "l.csv")
    assert "rows written to" in loud.stderr and "aitrail: " in loud.stderr
    assert cli("verify", demo_bundle, "--quiet").stderr == ""


def test_summary_columns_never_run_together():
    summary = {"stores": [{"agent": "claude-code", "store": "claude-code.transcripts", "files": 3005,
                           "rows": 543030180000, "bad_records": 0, "unpaired": 0, "secondary_kept": 0,
                           "secondary_dropped": 0, "integrity": 0},
                          {"agent": "a", "store": "a" * 60, "files": 1, "rows": 2, "bad_records": 1234567,
                           "unpaired": 0, "secondary_kept": 0, "secondary_dropped": 0, "integrity": 7}]}
    header, first, second = summary_table(summary)
    assert "3005  543030180000" in first
    assert first.split() == ["claude-code", "claude-code.transcripts", "3005", "543030180000", "0", "0", "0", "0", "0"]
    assert second.split()[1] == "a" * 60 and "1234567" in second.split() and second.split()[-1] == "7"
    assert header.index("files") + len("files") == first.index("3005") + len("3005")  # numbers right-aligned


def test_progress_lines_reach_stderr_through_the_limiter_and_never_with_quiet(demo_bundle, tmp_path, monkeypatch):
    from aitrail.collector import verify as verify_module

    monkeypatch.setattr(verify_module.RateLimiter, "ready", lambda self: True)  # as if every step took a second
    loud = cli("analyze", demo_bundle, "-o", tmp_path / "a.csv", "--jobs", "1")
    assert "aitrail: parsed 1/1 batches of primary files" in loud.stderr
    assert "aitrail: verified 1/" in loud.stderr  # verify's own progress, through the analyzer
    quiet = cli("analyze", demo_bundle, "-o", tmp_path / "b.csv", "--jobs", "1", "--quiet")
    assert quiet.stderr == ""


def test_rate_limiter_is_at_most_once_per_interval():
    now = [100.0]
    limiter = RateLimiter(1.0, clock=lambda: now[0])
    ticks = []
    for _ in range(50):  # 0.25 s apart: 12.25 s
        now[0] += 0.25
        ticks.append(limiter.ready())
    assert sum(ticks) == 12 and ticks[:4] == [False, False, False, True]
    assert all(not (a and b) for a, b in zip(ticks, ticks[1:], strict=False))  # consecutive pairs


# -- the structural check comes before any parser --------------------------------------------


@pytest.fixture
def parse_calls(monkeypatch) -> list:
    calls: list = []
    real = worker_module.parse_source

    def recording(bundle, source, *args):
        calls.append(source.member)
        return real(bundle, source, *args)

    monkeypatch.setattr(worker_module, "parse_source", recording)
    return calls


def test_structural_failure_is_refused_before_any_parser(demo_bundle, tmp_path, parse_calls):
    changed = tmp_path / "changed.tar.zst"
    value = bundle_json(demo_bundle, layout.COLLECTION_JSON)
    value["host"] = {"hostname": "elsewhere"}
    rewrite(demo_bundle, changed, {layout.COLLECTION_JSON: json.dumps(value).encode()}, recompute_manifests=False)
    options = run_module.AnalyzeOptions(bundle=str(changed), output=str(tmp_path / "t.csv"), jobs=1, progress=False)
    with pytest.raises(run_module.NotVerified) as raised:
        run_module.analyze(options)
    assert any("does not match tagmanifest-sha256.txt" in problem for problem in raised.value.problems)
    assert parse_calls == []  # secondary stores used to be parsed before verification
    assert not (tmp_path / "t.csv").exists()


def test_payload_damage_is_still_refused_and_nothing_is_written(demo_bundle, tmp_path, parse_calls):
    from aitrail.collector.bundle.reader import BundleReader

    damaged = tmp_path / "damaged.tar.zst"
    damaged.write_bytes(demo_bundle.read_bytes())
    with BundleReader(damaged) as reader:
        member = next(m for m in reader.members if m.name.startswith("data/"))
    flip_byte(damaged, member.frame_offset + member.frame_length // 2)
    options = run_module.AnalyzeOptions(bundle=str(damaged), output=str(tmp_path / "t.csv"), jobs=1, progress=False)
    with pytest.raises(run_module.NotVerified):
        run_module.analyze(options)
    assert not (tmp_path / "t.csv").exists()


# -- memory: nothing decoded twice, nothing kept per record ---------------------------------------


def test_a_forked_worker_reuses_the_coordinators_bundle(demo_bundle, tmp_path, monkeypatch):
    coordinator = worker_module.Worker.open(str(demo_bundle), str(tmp_path))
    reopened = []
    monkeypatch.setattr(coordinator.bundle, "reopen", lambda: reopened.append(True))
    coordinator.pid = os.getpid() + 1  # as after a fork
    monkeypatch.setattr(worker_module, "_CURRENT", coordinator)
    monkeypatch.setattr(worker_module, "Bundle", lambda *args, **kwargs: pytest.fail("bundle decoded again"))
    try:
        worker_module.init_process(str(demo_bundle), str(tmp_path), None)
        assert reopened == [True] and worker_module.current() is coordinator
    finally:
        coordinator.close()


def test_a_spawned_worker_decodes_the_bundle_once(demo_bundle, tmp_path, monkeypatch):
    monkeypatch.setattr(worker_module, "_CURRENT", None)
    worker_module.init_process(str(demo_bundle), str(tmp_path), None)
    try:
        assert isinstance(worker_module.current().bundle, Bundle)
    finally:
        worker_module.current().close()


def test_sources_keep_no_record_dict(demo_bundle):
    with Bundle(str(demo_bundle)) as bundle:
        assert bundle.sources and not bundle.problems
        source = bundle.sources[0]
        assert not hasattr(source, "__dict__") and not hasattr(source, "record")
        assert not hasattr(bundle, "records")
        assert bundle.source_for(source.member, source.store) is source
    assert isinstance(source, Source)


def test_memory_does_not_grow_with_the_number_of_files(tmp_path):
    """10,000 one-line transcripts in one store: analyze's peak is within 60 MB of a one-file bundle's.

    Before issue 8 every Source kept its whole files.jsonl record and the
    index was held as dicts: 10,000 files cost 110 MB more than one.
    """
    from tests.collector.test_robustness import run_measured

    peaks = {}
    for count in (1, 10_000):
        directory = tmp_path / f"h{count}" / ".claude" / "projects" / "p"
        directory.mkdir(parents=True)
        for number in range(count):
            (directory / f"s{number:05d}.jsonl").write_text(json.dumps(
                {"type": "user", "sessionId": f"s{number}", "timestamp": "2025-01-01T00:00:00Z", "uuid": f"u{number}",
                 "message": {"role": "user", "content": f"hello {number}"}}) + "\n")
        bundle = tmp_path / f"b{count}.tar.zst"
        assert cli("collect", "--home", tmp_path / f"h{count}", "-o", bundle, "--quiet").exit_code == 0
        code, peaks[count], output = run_measured("analyze", bundle, "-o", tmp_path / f"t{count}.csv", "--quiet",
                                                  "--jobs", "1")
        assert code == 0, output
    assert peaks[10_000] - peaks[1] < 60 * 1024, f"{(peaks[10_000] - peaks[1]) / 1024:.0f} MiB more for 10,000 files"


def test_sources_of_a_store_within_one_home_are_that_homes_own(tmp_path):
    """by_store_at: the per-home join lookup (a bundle of many homes reads each home's own, not all of them)."""
    homes = [FIXTURES / "claude-code" / "current-session" / "home", FIXTURES / "gemini-cli" / "project-map" / "home"]
    out = tmp_path / "two.tar.zst"
    arguments = ["collect", "-o", str(out), "--quiet"]
    for home in [*homes, FIXTURES / "demo-home"]:
        arguments += ["--home", str(home)]
    assert CliRunner().invoke(main, arguments).exit_code in (0, 3)
    with Bundle(str(out)) as bundle:
        locations = {source.location for source in bundle.sources}
        stores = {source.store for source in bundle.sources}
        assert len(locations) >= 2
        for store in stores:
            for location in locations:
                assert bundle.by_store_at(store, location) == [
                    source for source in bundle.by_store(store) if source.location == location]


def test_a_worker_lost_mid_parse_stops_the_run_with_a_message_not_a_traceback(tmp_path_factory, tmp_path, monkeypatch):
    """A worker killed (out of memory, by hand) ends the run: exit 1, the worker named, no timeline."""
    bundle = collect_fixture_home(tmp_path_factory, FIXTURES / "demo-home", "all-agents")
    parse = worker_module.run_batch

    def dies_on_its_second_batch(members, batch, *rest):
        if batch == 1:
            os._exit(9)
        return parse(members, batch, *rest)

    monkeypatch.setattr(worker_module, "run_batch", dies_on_its_second_batch)  # the forked workers inherit it
    result = CliRunner().invoke(main, ["analyze", str(bundle), "-o", str(tmp_path / "t.csv"), "--quiet",
                                       "--jobs", "2"])
    assert result.exit_code == 1, result.output
    assert "aitrail: analysis stopped: worker process" in result.stderr and "exit status 9" in result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not (tmp_path / "t.csv").exists()
