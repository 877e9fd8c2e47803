"""aitrail analyze: refuses damaged bundles, says so when forced, writes nothing outside its temp dir."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from aitrail.analyzer.view.rows import COLUMNS
from tests.collector.bundle_tools import flip_byte
from tests.conftest import FIXTURES, REPO, collect_fixture_home

REPO_CATALOG = REPO / "catalog"


@pytest.fixture(scope="module")
def demo_bundle(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "pearai" / "agent-task" / "home", "demo")


def test_csv_has_the_17_columns_in_order_then_the_bundle_columns(cli, demo_bundle, tmp_path):
    out = tmp_path / "t.csv"
    assert cli("analyze", demo_bundle, "-o", out, "--quiet").exit_code == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == (*COLUMNS, "host", "case_id", "bundle_sha256") and len(COLUMNS) == 17
    assert all(len(row) == 20 for row in rows)
    assert all(row[0] == "" or row[0].endswith("Z") for row in rows[1:])
    digest = hashlib.sha256(demo_bundle.read_bytes()).hexdigest()
    assert {tuple(row[17:]) for row in rows[1:]} == {(socket.gethostname(), "", digest)}


def test_jsonl_keeps_column_order_and_matches_csv(cli, demo_bundle, tmp_path):
    assert cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--quiet").exit_code == 0
    assert cli("analyze", demo_bundle, "-o", tmp_path / "t.jsonl", "--format", "jsonl", "--quiet").exit_code == 0
    objects = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    assert [tuple(obj) for obj in objects[:1]] == [(*COLUMNS, "host", "case_id", "bundle_sha256")]
    assert [list(obj.values()) for obj in objects] == rows


def test_every_row_is_traceable(cli, demo_bundle, tmp_path):
    from aitrail.collector.bundle.reader import BundleReader

    out = tmp_path / "t.csv"
    cli("analyze", demo_bundle, "-o", out, "--quiet")
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with BundleReader(demo_bundle) as reader:
        for row in rows:
            member = reader.member(row["source"])
            assert member.sha256 == row["source_sha256"]
            assert row["locator"] and row["event_id"]
    assert len({row["event_id"] for row in rows}) == len(rows)


def test_summary_json_counts_files_rows_and_recoveries(cli, demo_bundle, tmp_path):
    summary_path = tmp_path / "s.json"
    # not --quiet: the table goes to stderr (--quiet silences it, tests/analyzer/test_analyze_edges.py)
    result = cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--summary", summary_path)
    assert result.exit_code == 0
    summary = json.loads(summary_path.read_text())
    stores = {item["store"]: item for item in summary["stores"]}
    assert summary["verified"] is True
    # two parser: rows, as fixtures/pearai/agent-task/README.md states: the ui_messages.json call left without
    # output and the API history's last call; calls without results, not damage: unpaired, not bad
    assert stores["pearai.agent_tasks"]["files"] == 4 and stores["pearai.agent_tasks"]["bad_records"] == 0
    assert stores["pearai.agent_tasks"]["unpaired"] == 2

    assert stores["pearai.global_state_backup"]["secondary_kept"] == 3
    assert stores["pearai.global_state_backup"]["secondary_dropped"] == 4
    assert summary["rows"] == sum(item["rows"] for item in summary["stores"])
    assert "pearai.agent_tasks" in result.stderr  # the same table on stderr


def test_every_collected_file_no_parser_read_is_listed_with_its_digest(cli, tmp_path_factory, tmp_path):
    """A documentary file is in the summary (with size and SHA-256) and on stderr."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "demo-home", home)
    bundle = collect_fixture_home(tmp_path_factory, home, "documentary")
    summary_path = tmp_path / "s.json"
    result = cli("analyze", bundle, "-o", tmp_path / "t.csv", "--summary", summary_path)
    assert result.exit_code == 0
    listed = {item["store"]: item for item in json.loads(summary_path.read_text())["not_parsed"]}
    settings = listed["pearai.user_settings"]
    assert settings["reason"].startswith("documentary store") and settings["path"].endswith("settings.json")
    assert settings["size"] == (home / settings["path"]).stat().st_size
    assert settings["sha256"] == hashlib.sha256((home / settings["path"]).read_bytes()).hexdigest()
    assert settings["sha256"] in result.stderr and "collected, not parsed: " in result.stderr
    stores = {source["store"]: source for source in json.loads(summary_path.read_text())["stores"]}
    for store in set(listed) & set(stores):  # a store listed as not parsed gave no parsed rows: only one
        # `integrity: not parsed:` row per file (analyzer/integrity/sessions.py)
        files = sum(item["store"] == store for item in json.loads(summary_path.read_text())["not_parsed"])
        assert stores[store]["files"] == 0 and stores[store]["rows"] == stores[store]["integrity"] == files
    timeline = (tmp_path / "t.csv").read_text()
    assert f"integrity: not parsed: documentary store: collected, no parser of its own; {settings['size']} bytes, " \
           f"SHA-256 {settings['sha256']}" in timeline


def test_damaged_bundle_is_refused(cli, demo_bundle, tmp_path):
    damaged = tmp_path / "d.tar.zst"
    shutil.copyfile(demo_bundle, damaged)
    flip_byte(damaged, 200)
    out = tmp_path / "t.csv"
    result = cli("analyze", damaged, "-o", out, "--quiet")
    assert result.exit_code == 1 and "failed verification" in result.stderr
    assert not out.exists()


def test_forced_analysis_says_so_in_every_output(cli, demo_bundle, tmp_path):
    damaged = tmp_path / "d.tar.zst"
    shutil.copyfile(demo_bundle, damaged)
    flip_byte(damaged, 200)  # inside the first frame: its members become unreadable
    out, summary = tmp_path / "t.csv", tmp_path / "s.json"
    result = cli("analyze", damaged, "-o", out, "--force", "--summary", summary, "--quiet")
    assert result.exit_code == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["text"].startswith("verify: this bundle FAILED verification")
    assert json.loads(summary.read_text())["verified"] is False
    assert "FAILED verification" in result.stderr
    assert any(row["text"].startswith("parser: member unreadable") for row in rows)


def test_usage_errors(cli, demo_bundle, tmp_path):
    existing = tmp_path / "exists.csv"
    existing.write_text("keep")
    assert cli("analyze", demo_bundle, "-o", existing).exit_code == 2
    assert existing.read_text() == "keep"
    assert cli("analyze", demo_bundle, "-o", tmp_path / "x", "--format", "xml").exit_code == 2
    assert cli("analyze", demo_bundle).exit_code == 2


def test_analysis_writes_only_its_output(cli, demo_bundle, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    before = sorted(os.listdir(demo_bundle.parent))
    assert cli("analyze", demo_bundle, "-o", work / "t.csv", "--quiet").exit_code == 0
    assert sorted(os.listdir(work)) == ["t.csv"]
    assert sorted(os.listdir(demo_bundle.parent)) == before
    assert os.listdir(temp) == []  # the temporary directory is gone


def test_agent_filter(cli, demo_bundle, tmp_path):
    out = tmp_path / "t.csv"
    assert cli("analyze", demo_bundle, "-o", out, "--agent", "codex", "--quiet").exit_code == 0
    assert out.read_text().count("\n") == 1  # header only: the bundle holds no codex files


def _bundle_with_member(tmp_path: Path, name: str, monkeypatch) -> Path:
    """A bundle whose index names a member the writer would normally refuse."""
    from aitrail.collector.bundle import layout
    from aitrail.collector.bundle import writer as writer_module
    from aitrail.collector.bundle.writer import BundleWriter, TarMeta

    monkeypatch.setattr(writer_module.layout, "is_safe_member_name", lambda _name: True)
    path = tmp_path / "evil.tar.zst"
    writer = BundleWriter(str(path))
    writer.add_bytes(name, b"payload", TarMeta(0o644, 0, 0, 0))
    writer.add_bytes(layout.FILES_JSONL, json.dumps({"agent": "pearai", "store": "pearai.chat_sessions",
                     "outcome": "collected", "member": name, "parser": "pearai.chat_session.v1"}).encode(),
                     TarMeta(0o644, 0, 0, 0))
    writer.finish()
    monkeypatch.undo()
    return path


@pytest.mark.parametrize("name", ["data/h/../../../tmp/evil.json", "/etc/evil.json", "data/h/a\nb.json"])
def test_path_traversal_bundle_is_refused_even_when_forced(cli, tmp_path, monkeypatch, name):
    bundle = _bundle_with_member(tmp_path, name, monkeypatch)
    for extra in ((), ("--force",)):
        out = tmp_path / f"t{len(extra)}.csv"
        result = cli("analyze", bundle, "-o", out, "--quiet", *extra)
        assert result.exit_code == 1
        assert "unsafe member name" in result.stderr
        assert not out.exists()
    assert not Path("/tmp/evil.json").exists() and not Path("/etc/evil.json").exists()


def test_forced_run_with_unreadable_files_jsonl_says_what_it_could_not_do(cli, demo_bundle, tmp_path):
    from aitrail.collector.bundle.reader import BundleReader

    damaged = tmp_path / "d.tar.zst"
    shutil.copyfile(demo_bundle, damaged)
    with BundleReader(damaged) as reader:
        member = reader.member("aitrail/files.jsonl")
    flip_byte(damaged, member.frame_offset + member.frame_length // 2)
    out = tmp_path / "t.csv"
    assert cli("analyze", damaged, "-o", out, "--force", "--quiet").exit_code == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and "files.jsonl unreadable" in rows[0]["text"]


def test_a_file_matched_by_two_stores_is_parsed_once_per_store(cli, tmp_path):
    """Each store's parser reads the file; neither replaces the other's rows."""
    import yaml

    from tests.conftest import write_tree

    catalog = tmp_path / "catalog"
    shutil.copytree(REPO_CATALOG, catalog)
    data = yaml.safe_load((catalog / "pearai.yaml").read_text())
    tokens = next(store for store in data["stores"] if store["id"] == "tokens_generated")
    twin = dict(tokens, id="tokens_twin", parser="pearai.dev_data_chat.v1", origin="primary")
    data["stores"].append(twin)
    (catalog / "pearai.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    home = write_tree(tmp_path / "h", {".pearai/dev_data/tokens_generated.jsonl":
                                       '{"model":"m","provider":"p","promptTokens":1,"generatedTokens":2}\n'})
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--catalog", catalog, "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", out, "--quiet", "--jobs", "1").exit_code == 0
    with open(out, newline="", encoding="utf-8") as handle:
        stores = sorted(row["store"] for row in csv.DictReader(handle))
    assert stores == ["pearai.tokens_generated", "pearai.tokens_twin"]


def test_two_bundles_give_one_timeline_whatever_their_order(cli, demo_bundle, tmp_path):
    from tests.conftest import FIXTURES as fixtures

    other = tmp_path / "other.tar.zst"
    assert cli("collect", "--home", fixtures / "pi" / "v3-branches" / "home", "-o", other, "--case", "C-7",
               "--quiet").exit_code == 0
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    assert cli("analyze", demo_bundle, other, "-o", first, "--quiet").exit_code == 0
    assert cli("analyze", other, demo_bundle, "-o", second, "--quiet").exit_code == 0
    assert first.read_bytes() == second.read_bytes()
    with open(first, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    by_bundle = {(row["agent"], row["case_id"], row["bundle_sha256"]) for row in rows}
    assert by_bundle == {("pearai", "", hashlib.sha256(demo_bundle.read_bytes()).hexdigest()),
                         ("pi", "C-7", hashlib.sha256(other.read_bytes()).hexdigest())}
    times = [row["timestamp_utc"] for row in rows if row["timestamp_utc"]]
    assert times == sorted(times)
    assert cli("analyze", demo_bundle, demo_bundle, "-o", tmp_path / "c.csv").exit_code == 2


def test_the_summary_names_host_case_time_range_and_rows_per_session(cli, demo_bundle, tmp_path):
    summary_path = tmp_path / "s.json"
    assert cli("analyze", demo_bundle, "-o", tmp_path / "t.csv", "--summary", summary_path, "--quiet").exit_code == 0
    summary = json.loads(summary_path.read_text())
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sum(item["rows"] for item in summary["sessions"]) == summary["rows"] == len(rows)
    per_session = {}
    for row in rows:
        per_session[(row["agent"], row["session_id"])] = per_session.get((row["agent"], row["session_id"]), 0) + 1
    assert {(item["agent"], item["session_id"]): item["rows"] for item in summary["sessions"]} == per_session
    times = sorted(row["timestamp_utc"] for row in rows if row["timestamp_utc"])
    assert summary["time_range"] == {"first": times[0], "last": times[-1]}
    assert summary["bundles"] == [{"bundle": str(demo_bundle), "sha256": hashlib.sha256(demo_bundle.read_bytes())
                                   .hexdigest(), "host": socket.gethostname(), "case_id": "", "verified": True,
                                   "signature": summary["signature"], "rows": summary["rows"]}]
