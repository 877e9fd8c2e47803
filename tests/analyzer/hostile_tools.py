"""Hostile bundles end to end: build a home, collect it for real, analyze in a child, measure its peak RSS."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

MEASURE = """
import sys
from aitrail.collector.cli import main
try:
    main(sys.argv[1:], standalone_mode=True)
except SystemExit as exc:
    code = exc.code or 0
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("VMHWM_KIB", peak, "EXIT", code, file=sys.stderr)
"""


def analyze_measured(bundle: Path, out: Path, timeout: float = 120) -> tuple[int, list[str]]:
    """Peak RSS (KiB) of ``aitrail analyze --jobs 1`` (all parsing in one process) and the texts of its rows."""
    proc = subprocess.run([sys.executable, "-c", MEASURE, "analyze", str(bundle), "-o", str(out), "--quiet",
                           "--jobs", "1"], capture_output=True, text=True, timeout=timeout)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("VMHWM_KIB"))
    _, peak, _, code = line.split()
    assert code == "0", proc.stderr[-2000:]
    with open(out, newline="", encoding="utf-8") as handle:
        return int(peak), [row["text"] for row in csv.DictReader(handle)]


def collected(cli, tmp_path: Path, build) -> Path:
    home = tmp_path / "home"
    build(home)
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    return bundle
