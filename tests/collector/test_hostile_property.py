"""Property (issue 8): mutated metadata members, every digest re-hashed, never give a traceback.

A random JSON value replaces a random part of collection.json, of one
files.jsonl record, or of one index member (then the trailer is re-sealed);
the manifests are re-hashed so that only schema checks stand between the
mutation and the code that uses it. verify and analyze (forced or not) run
in-process and through the CLI; each must end with exit 0 or 1, never an
exception.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.analyzer.engine import coordinator as run_module
from aitrail.collector.bundle import layout
from aitrail.collector.cli import main
from aitrail.collector.verify import verify
from tests.collector.bundle_tools import read_index, replace_index, rewrite
from tests.conftest import FIXTURES, bundle_json, bundle_records, collect_fixture_home

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "pearai" / "agent-task" / "home", "property")


def mutate(value, data, depth: int = 0):
    """``value`` with one randomly chosen part (maybe itself) replaced by a random JSON value."""
    containers = isinstance(value, (dict, list)) and value
    if not containers or depth > 4 or data.draw(st.booleans(), label="replace here"):
        return data.draw(JSON, label="new value")
    if isinstance(value, dict):
        key = data.draw(st.sampled_from(sorted(value)), label="key")
        return {**value, key: mutate(value[key], data, depth + 1)}
    position = data.draw(st.integers(0, len(value) - 1), label="position")
    return value[:position] + [mutate(value[position], data, depth + 1)] + value[position + 1:]


def assert_no_traceback(bundle: Path, work: Path) -> None:
    report = verify(str(bundle))  # in-process: must return a report, not raise
    assert isinstance(report.problems, list)
    for force in (False, True):
        options = run_module.AnalyzeOptions(bundle=str(bundle), output=str(work / f"in-{force}.csv"), jobs=1,
                                            progress=False, force=force)
        try:
            run_module.analyze(options)
        except (run_module.NotVerified, run_module.Unreadable):
            pass
    runner = CliRunner()
    for args in (["verify", str(bundle)], ["analyze", str(bundle), "-o", str(work / "cli.csv"), "--quiet"],
                 ["analyze", str(bundle), "-o", str(work / "forced.csv"), "--quiet", "--force", "--jobs", "1"]):
        result = runner.invoke(main, args)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{args[0]} raised {result.exception!r}") from result.exception
        assert result.exit_code in (0, 1), (args, result.output, result.stderr)
        assert "Traceback" not in result.output + result.stderr


@SETTINGS
@given(data=st.data())
def test_mutated_collection_json_never_gives_a_traceback(base, data):
    value = mutate(bundle_json(base, layout.COLLECTION_JSON), data)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "m.tar.zst"
        rewrite(base, out, {layout.COLLECTION_JSON: json.dumps(value).encode()})
        assert_no_traceback(out, Path(work))


@SETTINGS
@given(data=st.data())
def test_mutated_files_jsonl_record_never_gives_a_traceback(base, data):
    records = bundle_records(base)
    position = data.draw(st.integers(0, len(records) - 1), label="record")
    records[position] = mutate(records[position], data)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "m.tar.zst"
        rewrite(base, out, {layout.FILES_JSONL: "".join(json.dumps(r) + "\n" for r in records).encode()})
        assert_no_traceback(out, Path(work))


@SETTINGS
@given(data=st.data())
def test_mutated_index_never_gives_a_traceback(base, data):
    index = mutate(read_index(base), data)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "m.tar.zst"
        replace_index(base, out, json.dumps(index).encode())
        assert_no_traceback(out, Path(work))
