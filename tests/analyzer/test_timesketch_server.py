"""Timesketch's own server-side upload validators accept aitrail's Timesketch exports: every row, none changed.

The Timesketch server indexes an uploaded timeline in ``run_csv_jsonl``
(timesketch/lib/tasks.py): it opens the file as text (``encoding="utf-8",
errors="replace"``, so universal newlines) and indexes each event that
``read_and_validate_jsonl`` (a ``.jsonl`` or ``.json`` upload) or
``read_and_validate_csv`` (a ``.csv`` upload) of timesketch/lib/utils.py
yields. Read in google/timesketch at commit
45b339bb87c7334effc1e0327c285b4ec19d96d9 (timesketch/lib/utils.py and
timesketch/lib/tasks.py); the PyPI release .ci/timesketch_venv.sh installs,
timesketch 20261014, has the same two functions. What they do:

* JSONL: each line is ``json.loads``-ed; ``message``, ``datetime`` and
  ``timestamp_desc`` must be there, else ``RuntimeError: Missing field(s) at
  line N``, which fails the whole upload; a missing ``datetime`` is rebuilt
  from ``timestamp`` and a missing ``timestamp`` from ``datetime`` (a line
  whose ``datetime`` then cannot be parsed is skipped, logged as an error); a
  line that is not JSON fails the upload (``DataIngestionError``); ``tag`` is
  read as a list; every other field, ``data_type`` too, is kept as it is.
* CSV: the header must name the three fields (``timestamp`` may stand for
  ``datetime``); pandas parses ``datetime``, and a row it cannot read, or whose
  year is before 1700 or after 9999, is dropped with a logged warning;
  ``timestamp`` is recomputed from the parsed ``datetime``; empty fields are
  left out of the event.

The server pins dependencies of its own, so .ci/timesketch_venv.sh installs it
into a venv of its own and names that venv's python in
AITRAIL_TIMESKETCH_PYTHON; the validators run there, in a subprocess, over the
files ``aitrail analyze --format timesketch`` / ``timesketch-csv`` wrote.
Elsewhere the test runs where that variable names such a python
(``. .ci/timesketch_venv.sh`` makes one), and says so when it skips.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, collect_fixture_home

TIMESKETCH = os.environ.get("AITRAIL_TIMESKETCH_PYTHON")
pytestmark = pytest.mark.skipif(
    not TIMESKETCH, reason="AITRAIL_TIMESKETCH_PYTHON names no Timesketch server install (.ci/timesketch_venv.sh)")

# Runs in Timesketch's venv: the server's validator over one upload, opened as run_csv_jsonl opens it, with every
# warning and error the validator logs (a dropped CSV row, a skipped JSONL line) kept with the events it yields.
VALIDATE = r'''
import importlib.metadata, json, logging, sys
from timesketch.lib import utils

kind, upload, result = sys.argv[1:4]


class Kept(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


kept = Kept()
logging.getLogger("timesketch").addHandler(kept)
validate = {"jsonl": utils.read_and_validate_jsonl, "csv": utils.read_and_validate_csv}[kind]
events, error = [], None
with open(upload, "r", encoding="utf-8", errors="replace") as handle:
    try:
        for event in validate(file_handle=handle, headers_mapping=None, delimiter=","):
            events.append(event)
    except Exception as caught:  # what the server records as the upload's failure
        error = f"{type(caught).__name__}: {caught}"
with open(result, "w", encoding="utf-8") as out:
    json.dump({"version": importlib.metadata.version("timesketch"), "events": events, "logged": kept.messages,
               "error": error}, out, default=str)
'''

DATA_TYPE = re.compile(r"aitrail:[a-z0-9_]+:[a-z_]+")
FORMATS = {"jsonl": "timesketch", "csv": "timesketch-csv"}
# Timesketch computes a JSONL timestamp as int(seconds as a float * 1000000): within pandas' range that is the
# exact microsecond or one below it (a float's rounding, then truncation)
FLOAT_US = 1
# Record times a forged or damaged session may hold: outside pandas' range (the export moves those to the
# collection time and tags them), at its edges, before the epoch; and prompts that look like something else.
FORGED_TIMES = ("0001-01-01T00:00:00.000Z", "1700-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z",
                "2262-04-11T23:47:16.854Z", "2262-04-12T00:00:00.000Z", "2300-01-01T00:00:00.000Z",
                "9999-12-31T23:59:59.999Z")
# Inside pandas' range (from 1677-09-21T00:12:43.145225Z) but before 1700, where Timesketch's CSV reader drops a row.
BEFORE_1700 = ("1677-09-21T00:12:44.000Z", "1690-06-01T00:00:00.000Z", "1699-12-31T23:59:59.999Z")
FORGED_TEXTS = ("NA", "null", "a\u2028b\x85c", "x\ry\r\nz", '{"message": 1}', "=1+1")
DROPPED_BEFORE_1700 = ("finding: Timesketch's CSV reader drops a row dated 1677-09-21..1699 (year < 1700: utils.py "
                       "read_and_validate_csv), which the export keeps as the row's own time because pandas can hold "
                       "it; the JSONL form keeps it")


def every_fixture_home(target: Path) -> Path:
    """Every agent's every fixture home copied into one (a later case's file replaces an earlier one's)."""
    target.mkdir(parents=True)
    for home in sorted(FIXTURES.glob("*/*/home")):
        shutil.copytree(home, target, symlinks=True, dirs_exist_ok=True)
    return target


def forged_session_home(target: Path, times: tuple[str, ...]) -> Path:
    """A fixture session whose records carry ``times`` in turn, and whose typed prompts are FORGED_TEXTS."""
    shutil.copytree(FIXTURES / "claude-code" / "current-session" / "home", target, symlinks=True)
    (session,) = (target / ".claude" / "projects").glob("*/*.jsonl")
    records = [json.loads(line) for line in session.read_text().splitlines()]
    timed = [record for record in records if "timestamp" in record]
    for index, record in enumerate(timed):
        record["timestamp"] = times[index % len(times)]
    prompts = [record for record in records if record.get("type") == "user"
               and isinstance(record["message"].get("content"), str)]
    for index, record in enumerate(prompts):
        record["message"]["content"] = FORGED_TEXTS[index % len(FORGED_TEXTS)]
    assert len(timed) >= len(times) and prompts, "the fixture session has fewer records than this test rewrites"
    session.write_text("".join(json.dumps(record) + "\n" for record in records))
    return target


HOMES: dict[str, Callable[[Path], Path]] = {
    "demo-home": lambda target: FIXTURES / "demo-home",
    "every-fixture-home": every_fixture_home,
    "forged-times": lambda target: forged_session_home(target, FORGED_TIMES),
    "times-before-1700": lambda target: forged_session_home(target, BEFORE_1700),
}


@pytest.fixture(scope="module")
def bundle_of(tmp_path_factory) -> Callable[[str], Path]:
    """The bundle collected from one of HOMES, made once per module."""
    made: dict[str, Path] = {}

    def bundle(case: str) -> Path:
        if case not in made:
            home = HOMES[case](tmp_path_factory.mktemp(case) / "home")
            made[case] = collect_fixture_home(tmp_path_factory, home, case)
        return made[case]

    return bundle


def export(cli, bundle: Path, kind: str, out: Path) -> bytes:
    """``aitrail analyze BUNDLE --format timesketch[-csv]``: the file's bytes."""
    result = cli("analyze", bundle, "-o", out, "--quiet", "--format", FORMATS[kind])
    assert result.exit_code == 0, result.output + result.stderr
    return out.read_bytes()


def server_validates(kind: str, upload: Path) -> dict:
    """Timesketch's own validator over ``upload``: its version, the events it yields, what it logged, its error."""
    result = upload.with_name(upload.name + ".validated.json")
    done = subprocess.run([TIMESKETCH, "-c", VALIDATE, kind, str(upload), str(result)], capture_output=True,
                          text=True, timeout=300, cwd=upload.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(result.read_text(encoding="utf-8"))


def jsonl_lines(data: bytes) -> list[dict]:
    """The export's events, one a line, each ended by LF."""
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().split("\n")[:-1]]


def csv_records(data: bytes) -> list[dict]:
    """The export's CSV records (a quoted field may hold line breaks)."""
    return list(csv.DictReader(io.StringIO(data.decode(), newline="")))


def as_opened(text: str) -> str:
    r"""A field as the server reads it: it opens an upload in text mode, so CR and CRLF in a quoted CSV field are LF.

    JSONL escapes both (``\r``), so the JSONL form keeps them; the CSV form cannot.
    """
    return re.sub("\r\n?", "\n", text)


def without(event: dict, *fields: str) -> dict:
    """``event`` less ``fields``."""
    return {key: value for key, value in event.items() if key not in fields}


def write_csv(path: Path, records: list[dict], columns: list[str]) -> None:
    """``records`` as a CSV file of ``columns``."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)


def csv_case(case: str):
    """One case of the CSV test (the export moves a time before 1700 to the collection time: none is dropped)."""
    return case


@pytest.mark.parametrize("case", list(HOMES))
def test_the_server_accepts_every_jsonl_line_unchanged(cli, bundle_of, tmp_path, case):
    upload = tmp_path / "timeline.jsonl"
    lines = jsonl_lines(export(cli, bundle_of(case), "jsonl", upload))
    validated = server_validates("jsonl", upload)
    assert validated["error"] is None and validated["logged"] == [], (validated["error"], validated["logged"])
    events = validated["events"]
    assert len(events) == len(lines) > 0, "one event per line"
    assert [event["data_type"] for event in events] == [line["data_type"] for line in lines]
    assert all(DATA_TYPE.fullmatch(event["data_type"]) for event in events)
    assert events == lines  # every field as written: nothing scrubbed, renamed, rebuilt or dropped
    # The server passes datetime through when timestamp is there; without it, it parses datetime itself (dateutil):
    # each datetime must read back as the same instant.
    untimed = upload.with_name("without-timestamp.jsonl")
    untimed.write_text("".join(json.dumps(without(line, "timestamp")) + "\n" for line in lines))
    reread = server_validates("jsonl", untimed)
    assert reread["error"] is None and reread["logged"] == [], reread["logged"]
    for line, event in zip(lines, reread["events"], strict=True):
        assert abs(event["timestamp"] - line["timestamp"]) <= FLOAT_US, line
    if case == "every-fixture-home":
        agents = {home.parent.parent.name for home in FIXTURES.glob("*/*/home")}
        assert {event["agent"] for event in events} == agents


@pytest.mark.parametrize("case", [csv_case(case) for case in HOMES])
def test_the_server_keeps_every_csv_row_and_its_time(cli, bundle_of, tmp_path, case):
    upload = tmp_path / "timeline.csv"
    records = csv_records(export(cli, bundle_of(case), "csv", upload))
    validated = server_validates("csv", upload)
    assert validated["error"] is None and validated["logged"] == [], (validated["error"], validated["logged"])
    events = validated["events"]
    assert len(events) == len(records) > 0, "one event per record"
    for record, event in zip(records, events, strict=True):
        for field in ("message", "timestamp_desc", "data_type", "event_id"):
            assert event[field] == as_opened(record[field]), (field, record)
        # Timesketch recomputes timestamp from the datetime it parsed: equal means it read the same instant
        assert event["timestamp"] == int(record["timestamp"]), record
        assert event["tag"] == json.loads(record["tag"])
        assert DATA_TYPE.fullmatch(event["data_type"])


# Negative controls: the same validator call refuses a damaged copy of a real export (line 3 damaged).
JSONL_DAMAGE = {
    "no datetime nor timestamp": (lambda event: json.dumps(without(event, "datetime", "timestamp")),
                                  "RuntimeError: Missing field(s) at line 3: datetime"),
    "no message": (lambda event: json.dumps(without(event, "message")), "RuntimeError: Missing field(s) at line 3: "
                                                                          "message"),
    "no timestamp_desc": (lambda event: json.dumps(without(event, "timestamp_desc")),
                          "RuntimeError: Missing field(s) at line 3: timestamp_desc"),
    "not JSON": (lambda event: json.dumps(event)[:-1], "DataIngestionError: Error parsing JSON at line 3"),
}


@pytest.mark.parametrize("damage", list(JSONL_DAMAGE))
def test_the_same_validator_refuses_a_line_without_a_mandatory_field(cli, bundle_of, tmp_path, damage):
    lines = export(cli, bundle_of("demo-home"), "jsonl", tmp_path / "good.jsonl").decode().split("\n")
    damaged_line, expected = JSONL_DAMAGE[damage]
    lines[2] = damaged_line(json.loads(lines[2]))
    upload = tmp_path / "damaged.jsonl"
    upload.write_text("\n".join(lines))
    validated = server_validates("jsonl", upload)
    assert validated["error"] is not None and validated["error"].startswith(expected), validated["error"]


def test_the_same_validator_skips_a_line_whose_time_it_cannot_read(cli, bundle_of, tmp_path):
    """The count and log checks above can fail: a line it cannot time is left out and logged, not refused."""
    lines = export(cli, bundle_of("demo-home"), "jsonl", tmp_path / "good.jsonl").decode().split("\n")
    lines[2] = json.dumps(without(json.loads(lines[2]), "timestamp") | {"datetime": "not a time"})
    upload = tmp_path / "damaged.jsonl"
    upload.write_text("\n".join(lines))
    validated = server_validates("jsonl", upload)
    assert validated["error"] is None and len(validated["events"]) == len(lines) - 2  # the empty last piece too
    assert validated["logged"] == ["Unable to parse timestamp, skipping line 3"]


def test_the_same_csv_validator_drops_an_unreadable_time_and_refuses_a_missing_column(cli, bundle_of, tmp_path):
    records = csv_records(export(cli, bundle_of("demo-home"), "csv", tmp_path / "good.csv"))
    records[2]["datetime"] = "not a time"
    upload = tmp_path / "damaged.csv"
    write_csv(upload, records, list(records[0]))
    validated = server_validates("csv", upload)
    assert validated["error"] is None and len(validated["events"]) == len(records) - 1
    assert len(validated["logged"]) == 1 and validated["logged"][0].startswith("1 rows dropped")
    write_csv(upload, records, [name for name in records[0] if name != "timestamp_desc"])
    validated = server_validates("csv", upload)
    assert validated["error"] is not None and validated["error"].startswith("RuntimeError: Missing mandatory CSV")
    assert "Headers missing: timestamp_desc" in validated["error"] and validated["events"] == []
