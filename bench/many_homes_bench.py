"""Many homes in one image: aitrail collect --root beside tar --zstd + sha256sum, one run, a small file limit.

    python bench/many_homes_bench.py [--work DIR] [--homes 400] [--repeat 3] [--limit 256] [--python PYTHON]

Builds (once, cached in --work) an image whose ``home/`` holds --homes copies
of fixtures/demo-home (every agent of the demo, 28 files a home), the layout
of a shared server's /home. Then, side by side with warm page caches, each
under ``ulimit -n`` --limit (the descriptors a run may hold):

* aitrail:  aitrail collect --root IMAGE -o B.tar.zst (every home found by the image's home/*)
* baseline: tar --zstd -cf B.tar.zst -T <the files aitrail collected>, then sha256sum of the same files

and reports the median wall time and CPU time of each and, for aitrail, its peak
RSS and open descriptors (sampled from /proc every 20 ms; the baseline is a
shell pipeline, whose own figures would say nothing). Prints a Markdown
table for docs/performance.md. ``--python`` runs another install's collector (an
earlier commit's venv) on the same image. Timings are for reading, never for pass/fail tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "fixtures" / "demo-home"


def build(work: Path, homes: int) -> Path:
    image = work / f"image-{homes}"
    if not (image / ".built").exists():
        shutil.rmtree(image, ignore_errors=True)
        for number in range(homes):
            shutil.copytree(DEMO, image / "home" / f"user{number:05d}", symlinks=True)
        (image / ".built").write_text("")
    return image


def limited(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return apply


def sample(process: subprocess.Popen, peak: list[int]) -> None:
    """Sample /proc/PID until the process ends: the most open descriptors into peak[0], VmHWM (kB) into peak[1]."""
    while process.poll() is None:
        try:
            peak[0] = max(peak[0], len(os.listdir(f"/proc/{process.pid}/fd")))
            with open(f"/proc/{process.pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak[1] = max(peak[1], int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.02)


def measure(command: list[str], limit: int, env: dict | None = None) -> dict:
    """One run: wall, CPU of the process tree, and the process's own peak RSS (MB) and open descriptors."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limited(limit),
                               env=env)
    peak = [0, 0]
    sampler = threading.Thread(target=sample, args=(process, peak))
    sampler.start()
    _, stderr = process.communicate()
    sampler.join()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if process.returncode:
        raise SystemExit(f"{command[0]} failed ({process.returncode}): {stderr.decode()[-500:]}")
    return {"wall": wall, "cpu": cpu, "rss": peak[1] / 1024, "fds": peak[0]}


def collected_files(bundle: Path, image: Path) -> list[str]:
    """The image paths of the files aitrail collected (files.jsonl's source_path, below the image)."""
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        records = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines() if line]
    return sorted(str(image) + record["source_path"] for record in records if record["outcome"] == "collected")


def run(work: Path, homes: int, repeat: int, limit: int, python: str) -> dict:
    image = build(work, homes)
    aitrail = [python, "-m", "aitrail.collector.cli", "collect", "--root", str(image), "--quiet"]
    listing = work / "files.txt"
    results: dict[str, list[dict]] = {"baseline": [], "aitrail": []}
    files = 0
    for attempt in range(repeat + 1):  # the first round warms the page cache and is discarded
        bundle = work / "b.tar.zst"
        for stale in (bundle, work / "b.tar.zst.sha256", work / "t.tar.zst"):
            stale.unlink(missing_ok=True)
        ours = measure([*aitrail, "-o", str(bundle)], limit)
        paths = collected_files(bundle, image)
        files = len(paths)
        listing.write_text("\n".join(paths) + "\n")
        floor = measure(["sh", "-c", f'tar --zstd -cf "{work}/t.tar.zst" -T "{listing}" 2>/dev/null && '
                                     f'tr "\\n" "\\0" < "{listing}" | xargs -0 sha256sum > /dev/null'], limit)
        if attempt:
            results["aitrail"].append(ours)
            results["baseline"].append(floor)
    return {"homes": homes, "files": files, "limit": limit, "repeat": repeat,
            **{name: {key: statistics.median(item[key] for item in items) for key in items[0]}
               for name, items in results.items()}}


def table(result: dict) -> str:
    base = result["baseline"]["wall"]
    lines = [f"{result['homes']} homes, {result['files']:,} files collected, ulimit -n {result['limit']}; "
             f"median of {result['repeat']} warm-cache runs (one discarded warm-up round).", "",
             "| run | wall time (s) | CPU time (s) | peak RSS (MB) | peak open descriptors | vs baseline |",
             "|---|---|---|---|---|---|"]
    for name, label in (("baseline", "tar --zstd -cf + sha256sum (baseline)"), ("aitrail", "aitrail collect --root")):
        row = result[name]
        fds, rss = (f"{row['fds']:.0f}", f"{row['rss']:.0f}") if name == "aitrail" else ("-", "-")
        lines.append(f"| {label} | {row['wall']:.2f} | {row['cpu']:.2f} | {rss} | {fds} | "
                     f"{row['wall'] / base:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "many-homes")
    parser.add_argument("--homes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--python", default=sys.executable, help="the Python of the aitrail install to run")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    print(table(run(args.work, args.homes, args.repeat, args.limit, args.python)))
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
