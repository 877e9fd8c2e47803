"""Analyze's memory on many short rows, and on many bundles at once (issue 27's reproductions).

    python bench/memory_bench.py [--work DIR] [--rows 4000000] [--bundles 20] [--before-python OLD/.venv/bin/python]

Builds (cached in --work) one home of Claude Code transcripts holding --rows
one-word prompts (the worst case for memory per row: the row's key and its
Python objects outweigh its text), and --bundles homes sharing as many rows
between them; collects each; then runs ``aitrail analyze`` on the big bundle
and on all the others at once, and reports wall time and the peak PSS of the whole process tree
(bench/analyze_bench.py ``measure``), with an older aitrail too when given.
Timings are for reading, never for pass/fail tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze_bench import measure  # noqa: E402 (the bench's own sampler)

LINES_PER_FILE = 50_000


def build_short_rows(home: Path, rows: int) -> None:
    """Transcripts of one-word prompts: ``rows`` rows in files of LINES_PER_FILE lines."""
    directory = home / ".claude" / "projects" / "-home-dev-src-app"
    directory.mkdir(parents=True)
    written = 0
    number = 0
    while written < rows:
        session = f"4f9d2c1e-7b3a-4e55-9a0c-{number:012d}"
        count = min(LINES_PER_FILE, rows - written)
        with open(directory / f"{session}.jsonl", "w", encoding="utf-8") as handle:
            for line in range(count):
                second = (written + line) % 86400
                handle.write(json.dumps({
                    "type": "user", "uuid": f"u{line}", "sessionId": session, "cwd": "/home/dev/src/app",
                    "timestamp": f"2026-07-02T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z",
                    "message": {"role": "user", "content": "ok"}}, separators=(",", ":")) + "\n")
        written += count
        number += 1


def collect(python: str, home: Path, bundle: Path) -> None:
    if not bundle.exists():
        subprocess.run([python, "-m", "aitrail.collector.cli", "collect", "--home", str(home), "-o", str(bundle),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/aitrail-memory-bench")
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--bundles", type=int, default=20)
    parser.add_argument("--before-python", help="The python of an older aitrail install, measured too.")
    options = parser.parse_args()
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    big_home, big = work / f"short-{options.rows}", work / f"short-{options.rows}.tar.zst"
    if not big_home.exists():
        build_short_rows(big_home, options.rows)
    collect(sys.executable, big_home, big)
    small = []
    for number in range(options.bundles):
        home, bundle = work / f"part-{number}-{options.rows // options.bundles}", work / f"part-{number}.tar.zst"
        if not home.exists():
            build_short_rows(home, options.rows // options.bundles)
        collect(sys.executable, home, bundle)
        small.append(bundle)
    pythons = [("now", sys.executable)] + ([("before", options.before_python)] if options.before_python else [])
    print(f"{options.rows} short rows in one bundle ({big.stat().st_size / 1e6:.1f} MB), and in {options.bundles} "
          "bundles analyzed at once")
    print("| aitrail | case | wall (s) | peak tree PSS (MB) |\n|---|---|---|---|")
    for name, python in pythons:
        for case, bundles in ((f"{options.rows} rows", [big]), (f"{options.bundles} bundles", small)):
            out = work / "out.csv"
            if out.exists():
                out.unlink()
            result = measure([python, "-m", "aitrail.collector.cli", "analyze", *map(str, bundles), "-o", str(out),
                              "--quiet"])
            print(f"| {name} | {case} | {result['wall']:.1f} | {result['peak'] / 1e6:.0f} |", flush=True)
    if os.path.exists(work / "out.csv"):
        os.unlink(work / "out.csv")


if __name__ == "__main__":
    main()
