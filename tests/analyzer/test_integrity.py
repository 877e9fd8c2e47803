"""Integrity rules (analyzer/integrity/, docs/report.md): each has a home that triggers it and one that must not.

Every home is written here from the agents' documented formats
(docs/agents/claude-code.md, docs/agents/codex.md, docs/agents/pi.md), collected
with ``aitrail collect`` and analyzed with ``aitrail analyze``; the test reads
the ``integrity: <rule>:`` rows of the timeline.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from aitrail.analyzer.integrity import rules
from tests.conftest import FIXTURES, REPO

SESSION = "4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"
PROJECT = ".claude/projects/-home-dev-src-acme-api"
BASE_MS = 1_782_985_000_000  # 2026-07-02T09:36:40Z


def entry(number: int, ms: int | None, parent: int | None, text: str = "", kind: str = "user") -> dict:
    """One Claude Code chain entry (docs/agents/claude-code.md: uuid, parentUuid, timestamp, sessionId, cwd)."""
    uuid = f"a1000000-0000-4000-8000-{number:012d}"
    record = {"parentUuid": None if parent is None else f"a1000000-0000-4000-8000-{parent:012d}",
              "isSidechain": False, "userType": "external", "cwd": "/home/dev/src/acme-api", "sessionId": SESSION,
              "version": "2.1.120", "gitBranch": "main", "type": kind, "uuid": uuid}
    if kind == "user":
        record["message"] = {"role": "user", "content": text or f"prompt {number}"}
    else:
        record["message"] = {"id": f"msg_{number}", "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-5-20250929",
                             "content": [{"type": "text", "text": text or f"answer {number}"}],
                             "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}
    if ms is not None:
        record["timestamp"] = _iso(ms)
    return record


def _iso(ms: int) -> str:
    import datetime

    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def transcript(home: Path, entries: list[dict], mtime_ms: int | None = None, session: str = SESSION) -> Path:
    """Write a transcript; its modification time is ``mtime_ms`` (default: its last timed entry's time)."""
    path = home / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in entries))
    if mtime_ms is None:
        mtime_ms = max(BASE_MS, *(_ms(item) for item in entries if "timestamp" in item))
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return path


def _ms(item: dict) -> int:
    import datetime

    return int(datetime.datetime.fromisoformat(item["timestamp"].replace("Z", "+00:00")).timestamp() * 1000)


def conversation(count: int = 4, step_ms: int = 5_000) -> list[dict]:
    """``count`` chained entries, user and assistant in turn, ``step_ms`` apart."""
    return [entry(n, BASE_MS + n * step_ms, n - 1 if n > 1 else None, kind="user" if n % 2 else "assistant")
            for n in range(1, count + 1)]


def history(home: Path, sessions: list[str]) -> None:
    """~/.claude/history.jsonl naming each session once (display, timestamp ms, project, sessionId)."""
    lines = [json.dumps({"display": f"prompt in {session}", "pastedContents": {}, "timestamp": BASE_MS + number,
                         "project": "/home/dev/src/acme-api", "sessionId": session})
             for number, session in enumerate(sessions)]
    path = home / ".claude" / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, ns=((BASE_MS + len(sessions)) * 1_000_000,) * 2)


def findings(cli, home: Path, tmp_path: Path) -> list[dict]:
    """The integrity rows of the home's timeline, as dicts."""
    bundle = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", bundle, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    out = tmp_path / "t.csv"
    result = cli("analyze", bundle, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    return [row for row in rows if row["text"].startswith(rules.PREFIX)]


def of_rule(rows: list[dict], rule: str) -> list[dict]:
    return [row for row in rows if row["text"].startswith(rules.text(rule, ""))]


# -- clock jump ------------------------------------------------------------------------------------------

def test_a_line_two_hours_before_the_line_written_before_it_is_a_clock_jump(cli, tmp_path):
    entries = conversation(4)
    entries[2]["timestamp"] = _iso(BASE_MS - 2 * 3600 * 1000)  # line 3
    transcript(tmp_path / "home", entries)
    found = of_rule(findings(cli, tmp_path / "home", tmp_path), "clock jump")
    assert len(found) == 1
    assert found[0]["locator"] == "line:3" and "line:2" in found[0]["text"] and "2 h" in found[0]["text"]
    assert found[0]["timestamp_utc"] == _iso(BASE_MS - 2 * 3600 * 1000)


def test_a_wobble_under_a_minute_is_no_clock_jump(cli, tmp_path):
    entries = conversation(4)
    entries[2]["timestamp"] = _iso(BASE_MS + 10_000 - 50_000)  # 50 s before line 2
    transcript(tmp_path / "home", entries)
    assert of_rule(findings(cli, tmp_path / "home", tmp_path), "clock jump") == []


# -- gap -------------------------------------------------------------------------------------------------

def test_two_days_without_a_record_in_a_transcript_is_a_gap(cli, tmp_path):
    entries = conversation(4)
    for item in entries[2:]:
        item["timestamp"] = _iso(_ms(item) + 2 * 86_400_000)
    transcript(tmp_path / "home", entries)
    found = of_rule(findings(cli, tmp_path / "home", tmp_path), "gap")
    assert [row["locator"] for row in found] == ["line:2"]
    assert "2 d 0 h" in found[0]["text"] and "line:3" in found[0]["text"]


def test_the_same_pause_in_a_prompt_history_is_no_gap(cli, tmp_path):
    home = tmp_path / "home"
    transcript(home, conversation(2))
    lines = [{"display": "first", "pastedContents": {}, "timestamp": BASE_MS, "project": "/p", "sessionId": SESSION},
             {"display": "later", "pastedContents": {}, "timestamp": BASE_MS + 3 * 86_400_000, "project": "/p",
              "sessionId": SESSION}]
    path = home / ".claude" / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, ns=((BASE_MS + 3 * 86_400_000) * 1_000_000,) * 2)
    assert of_rule(findings(cli, home, tmp_path), "gap") == []


# -- file times ------------------------------------------------------------------------------------------

def test_a_file_modified_two_hours_after_its_last_record_is_written_after_it(cli, tmp_path):
    entries = conversation(4)
    transcript(tmp_path / "home", entries, mtime_ms=_ms(entries[-1]) + 2 * 3600 * 1000)
    found = of_rule(findings(cli, tmp_path / "home", tmp_path), "written after last record")
    assert len(found) == 1
    assert found[0]["timestamp_source"] == "file-mtime" and "line:4" in found[0]["text"]
    assert "2 h 0 min" in found[0]["text"]


@pytest.mark.parametrize("case", ["seconds after", "last line untimed"])
def test_no_written_after_finding_when_the_file_time_fits_or_the_last_line_has_no_time(cli, tmp_path, case):
    entries = conversation(4)
    mtime = _ms(entries[-1]) + 2_000
    if case == "last line untimed":  # a title entry, written later without a time (docs/agents/claude-code.md)
        entries.append({"type": "custom-title", "customTitle": "login timeouts", "sessionId": SESSION})
        mtime += 3600 * 1000
    transcript(tmp_path / "home", entries, mtime_ms=mtime)
    assert of_rule(findings(cli, tmp_path / "home", tmp_path), "written after last record") == []


def test_a_record_an_hour_after_the_file_time_is_a_record_after_file_time(cli, tmp_path):
    entries = conversation(4)
    transcript(tmp_path / "home", entries, mtime_ms=_ms(entries[-1]) - 3600 * 1000)
    rows = findings(cli, tmp_path / "home", tmp_path)
    found = of_rule(rows, "record after file time")
    assert len(found) == 1 and found[0]["locator"] == "line:4" and "1 h 0 min" in found[0]["text"]
    assert of_rule(rows, "written after last record") == []


def test_a_record_within_the_tolerance_of_the_file_time_is_no_finding(cli, tmp_path):
    entries = conversation(4)
    transcript(tmp_path / "home", entries, mtime_ms=_ms(entries[-1]) - 1_000)
    assert of_rule(findings(cli, tmp_path / "home", tmp_path), "record after file time") == []


# -- chain break -----------------------------------------------------------------------------------------

def test_a_parent_missing_from_the_file_is_a_chain_break(cli, tmp_path):
    entries = conversation(5)
    del entries[1]  # line 2 (entry 2) removed: entry 3 names it
    transcript(tmp_path / "home", entries)
    found = of_rule(findings(cli, tmp_path / "home", tmp_path), "chain break")
    assert len(found) == 1 and found[0]["locator"] == "line:2"
    assert "a1000000-0000-4000-8000-000000000002" in found[0]["text"]


def test_a_whole_chain_and_a_compaction_root_are_no_chain_break(cli, tmp_path):
    entries = conversation(4)
    boundary = {"parentUuid": None, "logicalParentUuid": entries[-1]["uuid"], "isSidechain": False,
                "userType": "external", "cwd": "/home/dev/src/acme-api", "sessionId": SESSION, "version": "2.1.120",
                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 155000}, "level": "info",
                "uuid": "a1000000-0000-4000-8000-000000000099", "timestamp": _iso(BASE_MS + 60_000)}
    after = entry(100, BASE_MS + 61_000, 99)
    transcript(tmp_path / "home", [*entries, boundary, after])
    rows = findings(cli, tmp_path / "home", tmp_path)
    assert of_rule(rows, "chain break") == []
    compaction = of_rule(rows, "compaction")  # the boundary is a compaction finding: the marker rule
    assert [row["locator"] for row in compaction] == ["line:5"]


def test_a_conversation_without_a_boundary_has_no_compaction_finding(cli, tmp_path):
    transcript(tmp_path / "home", conversation(6))
    assert of_rule(findings(cli, tmp_path / "home", tmp_path), "compaction") == []


# -- session missing -------------------------------------------------------------------------------------

def test_a_session_the_history_names_without_its_transcript_is_missing(cli, tmp_path):
    home = tmp_path / "home"
    transcript(home, conversation(2))
    gone = "c0ffee00-1234-4abc-9def-0123456789ab"
    history(home, [SESSION, gone, gone])
    found = of_rule(findings(cli, home, tmp_path), "session missing")
    assert len(found) == 1
    assert found[0]["session_id"] == gone and found[0]["store"] == "claude-code.history"
    assert "2 entries" in found[0]["text"] and "claude-code.transcripts" in found[0]["text"]
    assert found[0]["locator"] == "line:2"


def test_every_session_the_history_names_present_is_no_finding(cli, tmp_path):
    home = tmp_path / "home"
    transcript(home, conversation(2))
    history(home, [SESSION, SESSION])
    assert of_rule(findings(cli, home, tmp_path), "session missing") == []


# -- deletion marker -------------------------------------------------------------------------------------

def test_a_trashed_session_is_a_deletion_marker(cli, tmp_path):
    home = shutil.copytree(FIXTURES / "pi/trash/home", tmp_path / "home")
    found = of_rule(findings(cli, home, tmp_path), "deletion marker")
    assert len(found) == 1 and "session deleted: " in found[0]["text"] and found[0]["store"] == "pi.trash_info"


def test_a_session_never_trashed_has_no_deletion_marker(cli, tmp_path):
    home = shutil.copytree(FIXTURES / "pi/v3-branches/home", tmp_path / "home")
    assert of_rule(findings(cli, home, tmp_path), "deletion marker") == []


# -- not parsed ------------------------------------------------------------------------------------------

def test_a_documentary_file_is_named_not_parsed_with_its_digest(cli, tmp_path):
    home = tmp_path / "home"
    transcript(home, conversation(2))
    hook = home / ".claude/hooks/guard.sh"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    found = of_rule(findings(cli, home, tmp_path), "not parsed")
    assert [row["source"].rsplit("/", 1)[-1] for row in found] == ["guard.sh"]
    assert found[0]["timestamp_source"] == "file-mtime" and found[0]["source_sha256"] in found[0]["text"]


def test_a_home_of_parsed_files_only_has_no_not_parsed_finding(cli, tmp_path):
    transcript(tmp_path / "home", conversation(2))
    assert of_rule(findings(cli, tmp_path / "home", tmp_path), "not parsed") == []


# -- documentation ---------------------------------------------------------------------------------------

def test_docs_report_explains_every_rule():
    text = (REPO / "docs/report.md").read_text()
    for rule, meaning in rules.RULES.items():
        assert f"`{rule}`" in text, f"docs/report.md does not name the rule {rule!r}"
        assert meaning.proves and meaning.does_not_prove
