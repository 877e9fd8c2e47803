"""Shared helpers: build homes, run the collector, read bundles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
TOY_CATALOG = REPO / "tests" / "collector" / "data" / "catalog"


def write_tree(base: Path, files: dict[str, bytes | str]) -> Path:
    """Create files (parents included) under base; returns base."""
    for relative, content in files.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return base


@pytest.fixture
def cli():
    """Run ``aitrail ...`` in-process; returns click's Result (stdout/stderr separate)."""
    runner = CliRunner()

    def invoke(*args: str, env: dict | None = None):
        return runner.invoke(main, [str(arg) for arg in args], env=env, catch_exceptions=False)

    return invoke


def run_aitrail(*args: str, timeout: float = 300, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run the collector as a separate process (for kills, timeouts, other users)."""
    return subprocess.run([sys.executable, "-m", "aitrail.collector.cli", *map(str, args)],
                          capture_output=True, timeout=timeout, env=env, **kwargs)


def collector_with_partial(home: Path, out: Path, **popen) -> tuple[subprocess.Popen, Path]:
    """Start ``aitrail collect`` (toy catalog) in a process; return once its .partial file exists."""
    import time

    proc = subprocess.Popen([sys.executable, "-m", "aitrail.collector.cli", "collect", "--catalog", str(TOY_CATALOG),
                             "--home", str(home), "-o", str(out), "--quiet"], stdout=subprocess.DEVNULL, **popen)
    partial = Path(str(out) + ".partial")
    deadline = time.monotonic() + 60
    while not partial.exists():
        assert proc.poll() is None, "the collector ended before its .partial file was seen"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc, partial


def collect_fixture_home(tmp_path_factory, home: Path, name: str = "b") -> Path:
    """Collect a fixture home with the installed catalog, in-process; the bundle's path."""
    out = tmp_path_factory.mktemp(name) / f"{name}.tar.zst"
    result = CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


def bundle_records(bundle: Path) -> list[dict]:
    with BundleReader(bundle) as reader:
        return [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]


def bundle_json(bundle: Path, name: str) -> dict:
    with BundleReader(bundle) as reader:
        return json.loads(reader.read_data(name))


def all_decompressed(bundle: Path, skip: tuple[str, ...] = ()) -> bytes:
    """Every byte of every member frame but ``skip``'s, decompressed (to search for leaks)."""
    with BundleReader(bundle) as reader:
        return b"".join(b"".join(reader.iter_decompressed(member)) for member in reader.members
                        if member.name not in skip)


def toy_collect(cli, home: Path, out: Path, *extra: str):
    return cli("collect", "--catalog", TOY_CATALOG, "--home", home, "-o", out, "--quiet", *extra)


@pytest.fixture(scope="session")
def root_user() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def opened_paths(monkeypatch) -> list[str]:
    """Every path ``os.open`` is asked to open from here on (as text), for tests of what is never opened."""
    opened: list[str] = []
    real_open = os.open

    def watching_open(path, *args, **kwargs):
        opened.append(os.fsdecode(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", watching_open)
    return opened


def every_output(cli, bundle: Path, tmp_path: Path) -> list[bytes]:
    """The bytes of a bundle's CSV and JSONL timelines and of its report (to look for what must never be there)."""
    outputs = []
    for name, extra in (("t.csv", ()), ("t.jsonl", ("--format", "jsonl"))):
        result = cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *extra)
        assert result.exit_code == 0, result.stderr
        outputs.append((tmp_path / name).read_bytes())
    result = cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1")
    assert result.exit_code == 0, result.output
    outputs.append((tmp_path / "r.html").read_bytes())
    return outputs
