"""Huge files, killed runs and permission errors, in real subprocesses."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aitrail.collector.verify import verify
from tests.conftest import TOY_CATALOG, bundle_records, collector_with_partial, write_tree

GIB = 1024**3

MEASURE = """
import resource, sys
from aitrail.collector.cli import main
try:
    main(sys.argv[1:], standalone_mode=True)
except SystemExit as exc:
    code = exc.code or 0
# VmHWM is this process's own peak RSS. ru_maxrss is not: Linux carries into it, at exec, the
# peak of the forking parent (here pytest, hundreds of MB after the property tests).
try:
    peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("MAXRSS_KIB", peak, "EXIT", code, file=sys.stderr)
"""


def run_measured(*args) -> tuple[int, int, str]:
    proc = subprocess.run([sys.executable, "-c", MEASURE, *map(str, args)], capture_output=True, text=True, timeout=900)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("MAXRSS_KIB"))
    _, rss, _, code = line.split()
    return int(code), int(rss), proc.stdout + proc.stderr


@pytest.mark.slow
def test_sparse_3gib_file_is_collected_with_bounded_memory(tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    big = home / ".toy/notes/huge.bin"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as handle:
        handle.seek(3 * GIB - 5)
        handle.write(b"tail!")
    out = tmp_path / "big.tar.zst"
    code, rss_kib, output = run_measured("collect", "--catalog", TOY_CATALOG, "--home", home, "-o", out, "--quiet")
    assert code == 0, output
    assert rss_kib < 200 * 1024, f"collector peak RSS {rss_kib / 1024:.0f} MiB"
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/notes/huge.bin")
    assert record["outcome"] == "collected" and record["stored_size"] == 3 * GIB
    code, rss_kib, output = run_measured("verify", out)
    assert code == 0, output
    assert rss_kib < 200 * 1024, f"verify peak RSS {rss_kib / 1024:.0f} MiB"


def test_sparse_file_over_max_size_is_skipped_with_an_outcome(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    big = home / ".toy/notes/huge.bin"
    big.parent.mkdir(parents=True)
    _sparse(big, 3 * GIB)
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--home", home, "-o", out, "--quiet",
               "--max-file-size", "1G").exit_code == 0
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/notes/huge.bin")
    assert record["outcome"] == "too_large" and record["member"] is None and record["stat"]["size"] == 3 * GIB


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.3, 0.8])
def test_killed_collector_leaves_a_file_that_never_verifies(tmp_path, delay):
    home = write_tree(tmp_path / "h", {f".toy/sessions/p/s{i}.jsonl": "{}\n" * 100 for i in range(200)})
    _sparse(home / ".toy/sessions/p/zz-big.jsonl", 24 * GIB)  # long enough to be killed mid-read
    out = tmp_path / "k.tar.zst"
    proc, partial = collector_with_partial(home, out, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    assert proc.poll() is None, "collector ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists(), "a killed run must never leave a file under the final name"
    report = verify(str(partial))
    assert not report.ok
    assert "incomplete" in report.problems[0]


def _without_root_powers() -> list[str] | None:
    """A command prefix that runs as root without the capabilities that bypass file permissions."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.mark.skipif(_without_root_powers() is None, reason="needs root and setpriv to drop DAC capabilities")
def test_permission_denied_is_recorded_and_the_run_goes_on(tmp_path):
    other = 12345  # files belong to another user; the collector runs without the powers to override that
    home = write_tree(tmp_path / "home", {
        ".toy/notes/readable.txt": "readable by all",
        ".toy/notes/private.txt": "owner only",
        ".toy/sessions/locked/s.jsonl": "{}\n",
        ".toy/sessions/open/s.jsonl": "{}\n",
    })
    for path in [home, *home.rglob("*")]:
        os.chown(path, other, other)
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(home / ".toy/notes/private.txt", 0o600)
    os.chmod(home / ".toy/sessions/locked", 0o700)
    out = tmp_path / "b.tar.zst"
    proc = subprocess.run([*_without_root_powers(), sys.executable, "-m", "aitrail.collector.cli", "collect",
                           "--catalog", str(TOY_CATALOG), "--home", str(home), "-o", str(out), "--quiet"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 3, proc.stdout.decode() + proc.stderr.decode()
    records = {r["path"]: r for r in bundle_records(out)}
    private = records[".toy/notes/private.txt"]
    assert private["outcome"] == "permission_denied" and private["errno"] == 13
    readable = records[".toy/notes/readable.txt"]
    # not our file: the kernel refuses O_NOATIME (EPERM), the read goes on without it and says so
    assert readable["outcome"] == "collected" and readable["o_noatime"] is False
    assert records[".toy/sessions/locked"]["outcome"] == "permission_denied"
    assert records[".toy/sessions/open/s.jsonl"]["outcome"] == "collected"
    from tests.conftest import bundle_json

    walk = bundle_json(out, "aitrail/collection.json")["walk"]
    assert walk["directories_opened_without_o_noatime"] > 0 and walk["files_read_without_o_noatime"] == 2
    assert verify(str(out)).ok
