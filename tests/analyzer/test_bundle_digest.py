"""The bundle's SHA-256 is hashed from the moment the command line is checked (analyzer/engine/bundle_digest.py)."""

from __future__ import annotations

import ast
import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from aitrail.analyzer.engine import coordinator as run_module
from aitrail.analyzer.engine.bundle_digest import FileDigest
from tests.conftest import FIXTURES, collect_fixture_home

# Records, for each thread started, whether the analyzer's run module was imported by then; then runs the
# command line as the console script does.
PROBE = r"""
import sys, threading
started = []
original = threading.Thread.start
def start(self):
    started.append((self.name, "aitrail.analyzer.engine.coordinator" in sys.modules))
    original(self)
threading.Thread.start = start
from aitrail.collector import cli
sys.argv = ["aitrail", "analyze", sys.argv[1], "-o", sys.argv[2], "--quiet", "--jobs", "1"]
try:
    cli.main(standalone_mode=False)
finally:
    print(started, file=sys.stderr)
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "demo-home", "demo")


def test_the_digest_starts_before_the_analyzer_is_imported(bundle, tmp_path):
    out = tmp_path / "t.csv"
    done = subprocess.run([sys.executable, "-c", PROBE, str(bundle), str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    started = ast.literal_eval(done.stderr.strip().splitlines()[-1])
    assert ("aitrail-bundle-digest", False) in started
    assert [name for name, _ in started].count("aitrail-bundle-digest") == 1  # the run took it, none of its own
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {row["bundle_sha256"] for row in rows} == {digest}


def test_a_digest_of_another_file_is_not_taken_for_the_bundle(bundle, tmp_path):
    other = tmp_path / "other.bin"
    other.write_bytes(b"not the bundle")
    out = tmp_path / "t.jsonl"
    options = run_module.AnalyzeOptions(bundle=str(bundle), output=str(out), format="jsonl", jobs=1,
                                        progress=False, digesting=FileDigest(str(other)))
    run_module.analyze(options)
    assert f'"bundle_sha256": "{hashlib.sha256(bundle.read_bytes()).hexdigest()}"' in out.read_text()


def test_a_bundle_gone_before_its_digest_is_named_unreadable(tmp_path):
    missing = tmp_path / "gone.tar.zst"
    options = run_module.AnalyzeOptions(bundle=str(missing), output=str(tmp_path / "t.csv"), jobs=1,
                                        progress=False, digesting=FileDigest(str(missing)))
    with pytest.raises(run_module.Unreadable, match="gone.tar.zst"):
        run_module.analyze(options)
