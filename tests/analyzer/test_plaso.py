"""plaso (PyPI) reads ``aitrail export bodyfile``: four events a line, not one warning.

plaso pins dependencies of its own, so .ci/run installs it into a venv of its
own and names its scripts' folder in AITRAIL_PLASO_BIN; elsewhere the test
runs where that variable names one (``python3 -m venv V && V/bin/pip install
plaso``), and says so when it skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

PLASO = os.environ.get("AITRAIL_PLASO_BIN")
pytestmark = pytest.mark.skipif(not PLASO, reason="AITRAIL_PLASO_BIN names no plaso install (.ci/run makes one)")


def plaso(program: str, *args: str) -> subprocess.CompletedProcess:
    """Run one of plaso's scripts."""
    return subprocess.run([str(Path(PLASO) / program), *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The demo home, collected."""
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    out = tmp_path_factory.mktemp("plaso") / "demo.tar.zst"
    home = Path(__file__).resolve().parents[2] / "fixtures" / "demo-home"
    result = CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("hash_field, warnings", [("none", 0), ("sha256", None)])
def test_log2timeline_ingests_the_bodyfile(cli, bundle, tmp_path, hash_field, warnings):
    body, storage = tmp_path / "case.body", tmp_path / "case.plaso"
    assert cli("export", "bodyfile", bundle, "-o", body, "--hash", hash_field).exit_code == 0
    lines = body.read_text().splitlines()
    done = plaso("log2timeline", "--storage_file", str(storage), "--parsers", "bodyfile", "--status_view", "none",
                 "-q", str(body))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    info = plaso("pinfo", "--output_format", "json", str(storage))
    assert info.returncode == 0, info.stderr[-2000:]
    counters = json.loads(info.stdout, strict=False)["storage_counters"]  # plaso writes a path's newline raw
    counted = counters["warnings_by_parser"].get("bodyfile", 0)
    assert counters["parsers"]["bodyfile"] == 4 * len(lines)  # atime, mtime, ctime and crtime of each line
    if warnings is None:  # the SHA-256 in TSK's MD5 field: plaso's "invalid MD5 value", one a collected file
        assert counted == sum(1 for line in lines if line.split("|")[0] != "0") > 0
    else:
        assert counted == warnings
    out = tmp_path / "events.jsonl"
    done = plaso("psort", "-o", "json_line", "-w", str(out), "--status_view", "none", "-q", str(storage))
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(events) == 4 * len(lines) and {event["data_type"] for event in events} == {"fs:bodyfile:entry"}
    names = {event["filename"] for event in events}
    assert any(name.endswith("/.claude/history.jsonl") for name in names)
