"""--format timesketch / timesketch-csv: every row is accepted by Timesketch's own import code, none dropped."""

from __future__ import annotations

import json

import pandas
import pytest
from timesketch_import_client import importer

from aitrail.analyzer.outputs.timesketch import describe
from tests.conftest import FIXTURES
from tests.test_golden import timeline

# Timesketch's server refuses a file without these columns and drops a row whose datetime is empty or
# unparseable (timesketch/lib/utils.py TIMESKETCH_FIELDS, read_and_validate_csv / _jsonl).
TIMESKETCH_FIELDS = {"message", "datetime", "timestamp_desc"}
CASE = FIXTURES / "pi" / "damaged"  # rows with and without a time


def events(cli, tmp_path, format_name: str = "timesketch") -> list[dict]:
    return [json.loads(line) for line in timeline(cli, CASE, tmp_path, "--format", format_name,
                                                  name="t.jsonl").decode().splitlines()]


def test_the_import_client_accepts_every_jsonl_event_and_keeps_its_time(cli, tmp_path):
    rows = events(cli, tmp_path)
    golden = (CASE / "expected.csv").read_text().splitlines()
    assert len(rows) == len(golden) - 1, "one event per timeline row"
    streamer = importer.ImportStreamer()
    for row in rows:
        fixed = dict(row)
        streamer._fix_dict(fixed)  # what ImportStreamer.add_dict does to each event before upload
        assert TIMESKETCH_FIELDS <= fixed.keys()
        assert fixed["datetime"] and pandas.notna(pandas.to_datetime(fixed["datetime"], utc=True))
        assert fixed["message"].startswith("pi ")
        assert fixed["data_type"] == "aitrail:pi:" + (row["turn_type"] if row["turn_type"] != "system" else
                                                      fixed["data_type"].rsplit(":", 1)[1])
    kinds = {row["data_type"] for row in rows}
    assert "aitrail:pi:parser" in kinds and any(kind.startswith("aitrail:pi:") and kind != "aitrail:pi:parser"
                                                for kind in kinds)


def test_rows_without_a_time_are_kept_flagged_at_the_collection_time(cli, tmp_path):
    rows = events(cli, tmp_path)
    untimed = [row for row in rows if row["timestamp_utc"] == ""]
    assert untimed, "the damaged case has parser: rows without a time"
    for row in untimed:
        assert row["aitrail_no_timestamp"] is True and row["tag"] == ["aitrail-no-timestamp"]
        assert row["timestamp_desc"] == "No time recorded (collection time)" and row["datetime"]
    timed = [row for row in rows if row["timestamp_utc"]]
    assert all(row["datetime"] == row["timestamp_utc"] and not row["aitrail_no_timestamp"] for row in timed)


def test_the_csv_form_passes_the_data_frame_check_with_no_row_dropped(cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(timeline(cli, CASE, tmp_path / "run", "--format", "timesketch-csv", name="t.csv"))
    frame = pandas.read_csv(path, keep_default_na=False, dtype=str)
    assert TIMESKETCH_FIELDS <= set(frame.columns)
    fixed = importer.ImportStreamer()._fix_data_frame(frame)
    parsed = pandas.to_datetime(fixed["datetime"], utc=True, format="mixed", errors="coerce")
    assert not parsed.isna().any() and len(fixed) == len((CASE / "expected.csv").read_text().splitlines()) - 1


@pytest.mark.parametrize("agent, turn, text, expected", [
    ("claude-code", "tool_use", "{}", "aitrail:claude_code:tool_use"),
    ("codex", "system", "permission decision: denied", "aitrail:codex:permission_decision"),
    ("pi", "system", "parser: unparseable line", "aitrail:pi:parser"),
    ("gemini-cli", "system", "thinking level: high", "aitrail:gemini_cli:event"),
])
def test_data_type_names_the_agent_and_the_kind_of_row(agent, turn, text, expected):
    from aitrail.analyzer.outputs.timesketch import data_type

    assert data_type(agent, turn, text) == expected


@pytest.mark.parametrize("turn, text, source, expected", [
    ("user", "fix it", "record", "Prompt submitted"),
    ("tool_use", "{}", "index", "Tool call (session time)"),
    ("system", "permission decision: denied", "record", "Permission decision"),
    ("system", "permission setting: a=1 (from x)", "file-mtime", "File modified (Permission setting)"),
    ("system", "parser: unparseable line", "none", "Parser problem"),
    ("system", "thinking level: high", "record", "Agent event"),
])
def test_timestamp_desc_says_what_happened_and_what_kind_of_time_it_is(turn, text, source, expected):
    assert describe(turn, text, source) == expected


@pytest.mark.parametrize("collected", ["2026-12-03T08:00:00.000000Z", "", "9999-01-01T00:00:00Z", "garbage"])
def test_a_time_pandas_cannot_hold_is_kept_at_the_collection_time_and_tagged(collected):
    """Years past 2262 or before 1700 (and a forged collection time) never make Timesketch drop a row."""
    from aitrail.analyzer.outputs.timesketch import OUT_OF_RANGE_TAG, event
    from aitrail.analyzer.view.rows import COLUMNS

    context = {"collected_utc": collected, "hostname": "h", "case_id": "", "bundle_sha256": "0" * 64}
    for when in ("0001-01-01T00:00:00.000Z", "2300-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
                 "1677-09-21T00:00:00.000Z", "1699-12-31T23:59:59.999Z", "2262-04-12T00:00:00.000Z", ""):
        row = tuple(when if name == "timestamp_utc" else ("user" if name == "turn_type" else "x")
                    for name in COLUMNS)
        fixed = event(row, context)
        written = dict(fixed)
        importer.ImportStreamer()._fix_dict(written)  # what the import client sends
        assert pandas.notna(pandas.to_datetime(written["datetime"], utc=True)), (when, collected)
        assert fixed["timestamp_utc"] == when  # the row's own time is never lost
        if when:
            assert fixed["tag"] == [OUT_OF_RANGE_TAG] and when in fixed["timestamp_desc"]
        if collected.startswith("2026"):
            assert fixed["datetime"] == collected
        else:
            assert fixed["datetime"] == "1970-01-01T00:00:00.000Z" and "unreadable" in fixed["timestamp_desc"]
