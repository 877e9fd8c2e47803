"""Import benchmark: aitrail import uac against unpacking and hashing the same archive by hand, one run.

    python bench/import_bench.py [--work DIR] [--repeat 3]

Builds (once, cached in --work) a subject root whose home is collect_bench's
synthetic home (about 10,000 agent files, 150 MB of JSONL and SQLite) with
20,000 unrelated files beside it (node_modules, a pip cache: what a broad
UAC profile also takes), and a UAC-style archive of it
(``uac-bench-linux-<time>.tar.gz`` with ``uac.log`` and ``[root]/``). Then,
side by side with warm page caches:

* baseline: ``tar -xzf`` into a fresh directory, then ``sha256sum`` of every
  file taken out: what an examiner does today to look at a UAC collection
  with integrity;
* aitrail import: ``aitrail import uac ARCHIVE -o B.tar.zst`` (reads the
  archive three times at most: list, settings and context, collected files);
* aitrail collect --root: aitrail's own collection of the same root, already
  unpacked (the same bundle content, from a directory).

The imported bundle's payload manifest must equal the native collection's
(asserted every round). Prints a Markdown table (median wall time, CPU time,
peak RSS) for docs/performance.md. Timings are for reading, never for
pass/fail tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_bench import build_home, measure, payload_manifest  # noqa: E402 - the bench folder is not a package

UNRELATED = 20_000


def build(work: Path) -> dict:
    """The subject root and its UAC-style archive (cached)."""
    root, archive = work / "root", work / "uac-bench-linux-20261203120000.tar.gz"
    if archive.exists():
        return {"root": root, "archive": archive, **_count(root)}
    shutil.rmtree(work, ignore_errors=True)
    home = root / "home" / "bench"
    home.mkdir(parents=True)
    build_home(home)
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "bench"}}')
    for index in range(UNRELATED):
        path = home / (f"projects/p{index // 1000}/node_modules/pkg{index % 50}/f{index}.js" if index % 2 else
                       f".cache/pip/http/{index % 256:02x}/{index}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("module.exports = 1;\n")
    (root / "etc").mkdir()
    (root / "etc" / "hostname").write_text("bench-host\n")
    log = work / "uac.log"
    log.write_text("2026-12-03 12:00:00 +0000 INFO UAC (Unix-like Artifacts Collector) 3.3.0\n"
                   "2026-12-03 12:00:00 +0000 INFO Hostname: bench-host\n")
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.add(log, arcname="uac.log")
        tar.add(root, arcname="[root]")
    return {"root": root, "archive": archive, **_count(root)}


def _count(root: Path) -> dict:
    files = [path for path in root.rglob("*") if path.is_file()]
    return {"files": len(files), "bytes": sum(path.stat().st_size for path in files)}


BASELINE = ("set -e; d=$(mktemp -d -p \"$1\"); tar -xzf \"$2\" -C \"$d\"; "
            "find \"$d\" -type f -print0 | xargs -0 sha256sum > \"$d.sha256\"; rm -rf \"$d\" \"$d.sha256\"")


def run(work: Path, repeat: int) -> str:
    """Interleaved rounds (one warm-up discarded); the table."""
    data = build(work)
    aitrail = [sys.executable, "-m", "aitrail.collector.cli"]
    rows: dict[str, list[tuple[float, int, float]]] = {"baseline": [], "import": [], "native": []}
    scratch = Path(tempfile.mkdtemp(dir=work))
    for round_index in range(repeat + 1):
        round_dir = scratch / str(round_index)
        round_dir.mkdir()
        imported, native = round_dir / "imported.tar.zst", round_dir / "native.tar.zst"
        timings = {
            "baseline": measure(["bash", "-c", BASELINE, "bench", str(round_dir), str(data["archive"])]),
            "import": measure([*aitrail, "import", "uac", str(data["archive"]), "-o", str(imported), "--quiet"]),
            "native": measure([*aitrail, "collect", "--root", str(data["root"]), "-o", str(native), "--quiet"]),
        }
        if payload_manifest(imported) != payload_manifest(native):
            raise SystemExit("the imported bundle's payload differs from the native collection's")
        if round_index:  # the first round warms the caches
            for name, (wall, rss, _code, cpu) in timings.items():
                rows[name].append((wall, rss, cpu))
        shutil.rmtree(round_dir)
    shutil.rmtree(scratch)
    return report(data, rows, repeat)


def report(data: dict, rows: dict, repeat: int) -> str:
    """The Markdown table."""
    median = {name: statistics.median(wall for wall, _, _ in values) for name, values in rows.items()}
    cpu = {name: statistics.median(c for _, _, c in values) for name, values in rows.items()}
    peak = {name: max(rss for _, rss, _ in values) for name, values in rows.items()}
    names = {"baseline": "tar -xzf + sha256sum of every file (baseline)", "import": "aitrail import uac",
             "native": "aitrail collect --root (the same root, unpacked)"}
    lines = [
        f"Machine: {os.cpu_count()} CPUs; data: {data['files']} files, {data['bytes'] / 1e6:.0f} MB in the root, "
        f"{data['archive'].stat().st_size / 1e6:.0f} MB as tar.gz ({UNRELATED} of the files are not agents')",
        f"Median of {repeat} warm-cache runs (one warm-up round discarded); CPU time is user + system.",
        "",
        "| run | wall time (s) | CPU time (s) | peak RSS (MB) | vs baseline |",
        "|---|---|---|---|---|",
    ]
    for key in ("baseline", "import", "native"):
        lines.append(f"| {names[key]} | {median[key]:.2f} | {cpu[key]:.2f} | {peak[key] / 1024:.0f} | "
                     f"{median[key] / median['baseline']:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    """Build, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "import")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    started = time.time()
    print(run(args.work, args.repeat))
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
