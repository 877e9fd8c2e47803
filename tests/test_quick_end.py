"""``aitrail`` (collector/cli.py ``run``): a finished analysis ends without the teardown, nothing else does."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector import cli
from tests.conftest import FIXTURES, collect_fixture_home, run_aitrail


class Ended(Exception):
    """os._exit, caught: the code it was given."""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return collect_fixture_home(tmp_path_factory, FIXTURES / "demo-home", "demo")


@pytest.fixture
def program(monkeypatch):
    """run() with the given arguments: ('ended', code) by os._exit, or ('exited', code) by SystemExit."""
    def ended(code):
        raise Ended(code)

    monkeypatch.setattr(cli, "_exit", ended)

    def invoke(*args: str) -> tuple[str, object]:
        monkeypatch.setattr(sys, "argv", ["aitrail", *map(str, args)])
        try:
            cli.run()
        except Ended as exc:
            return "ended", exc.args[0]
        except SystemExit as exc:
            return "exited", exc.code
        return "returned", None

    return invoke


def test_a_finished_analysis_ends_at_once_with_its_outputs_complete(bundle, tmp_path, program):
    expected = tmp_path / "expected.csv"
    assert CliRunner().invoke(cli.main, ["analyze", str(bundle), "-o", str(expected), "--quiet"]).exit_code == 0
    out, summary = tmp_path / "t.csv", tmp_path / "s.json"
    assert program("analyze", bundle, "-o", out, "--summary", summary, "--quiet") == ("ended", 0)
    assert out.read_bytes() == expected.read_bytes()
    assert summary.read_text().endswith("}\n")


def test_an_analysis_that_fails_ends_the_ordinary_way(bundle, tmp_path, program):
    out = tmp_path / "t.csv"
    out.write_text("already here")
    assert program("analyze", bundle, "-o", out) == ("exited", 2)  # usage error: the output exists
    assert program("analyze", tmp_path / "missing.tar.zst", "-o", tmp_path / "u.csv") == ("exited", 2)


def test_a_command_that_does_not_ask_ends_the_ordinary_way(program):
    assert program("catalog", "list") == ("exited", 0)


def test_what_ends_at_once_is_decided_by_this_call_alone(bundle, tmp_path, program):
    assert program("analyze", bundle, "-o", tmp_path / "t.csv", "--quiet") == ("ended", 0)
    assert program("--help") == ("exited", 0)  # no command resolved: not the analysis before it


def test_a_stream_that_cannot_be_flushed_leaves_the_ending_to_python(bundle, tmp_path, program, monkeypatch):
    class Broken(io.StringIO):
        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    assert program("analyze", bundle, "-o", tmp_path / "t.csv", "--quiet") == ("exited", 0)


def test_the_installed_command_writes_everything_before_it_ends(bundle, tmp_path):
    out, summary = tmp_path / "t.csv", tmp_path / "s.json"
    done = run_aitrail("analyze", str(bundle), "-o", "-", "--summary", str(summary))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"timestamp_utc,") and done.stdout.endswith(b"\n")
    assert b"rows written" in done.stderr
    assert summary.read_text().endswith("}\n")
    assert run_aitrail("analyze", str(bundle), "-o", str(out), "--quiet").returncode == 0
    assert out.read_bytes() == done.stdout


def test_the_youngest_generation_is_collected_less_often_while_a_command_runs(monkeypatch):
    import gc

    seen = []

    class Command:
        ran = "verify"

        def __call__(self):
            seen.append(gc.get_threshold()[0])
            raise SystemExit(1)

    before = gc.get_threshold()
    monkeypatch.setattr(cli, "main", Command())
    with pytest.raises(SystemExit):
        cli.run()
    assert seen == [max(before[0], cli.YOUNG_GC_THRESHOLD)]
    assert gc.get_threshold() == before, "restored when the command ends"
