"""Many homes in one image: aitrail collect --root beside tar --zstd + sha256sum, one run, a small file limit.

    python bench/many_homes_bench.py [--work DIR] [--homes 400] [--repeat 3] [--limit 256] [--before REV]

Builds (once, cached in --work) an image whose ``home/`` holds --homes copies
of fixtures/demo-home (every agent of the demo, 28 files a home), the layout
of a shared server's /home. Then, side by side with warm page caches:

* aitrail:  aitrail collect --root IMAGE -o B.tar.zst under ``ulimit -n`` --limit
  (every home found by the image's home/*)
* baseline: tar --zstd + sha256sum of the files aitrail collected (collect_bench.baseline)

and, with --before REV, the collector of an earlier commit on the same image,
interleaved (collect_bench.before_env; an older collector may need a higher
--limit). Reports the median wall and CPU time of each and, for the collectors,
their own peak RSS and open descriptors (sampled from /proc every 20 ms).
Prints a Markdown table for docs/performance.md. Timings are for reading,
never for pass/fail tests.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_bench import baseline, before_env, collected_files  # noqa: E402 - the bench folder is not a package

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo-home"


def build(work: Path, homes: int) -> Path:
    image = work / f"image-{homes}"
    if not (image / ".built").exists():
        shutil.rmtree(image, ignore_errors=True)
        for number in range(homes):
            shutil.copytree(DEMO, image / "home" / f"user{number:05d}", symlinks=True)
        (image / ".built").write_text("")
    return image


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


def collect(image: Path, bundle: Path, limit: int, env: dict | None = None) -> dict:
    """One aitrail collect under the descriptor limit: wall, CPU, its own peak RSS (MB) and open descriptors."""
    def small_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "aitrail.collector.cli", "collect", "--root", str(image),
                                "-o", str(bundle), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=small_limit, env=env)
    peak = [0, 0]
    sampler = threading.Thread(target=sample, args=(process, peak))
    sampler.start()
    _, stderr = process.communicate()
    sampler.join()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode:
        raise SystemExit(f"aitrail collect failed ({process.returncode}): {stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss": peak[1] / 1024, "fds": peak[0]}


def run(work: Path, homes: int, repeat: int, limit: int, revision: str | None) -> dict:
    image = build(work, homes)
    runs = {"aitrail": None, "before": before_env(work, revision)} if revision else {"aitrail": None}
    results: dict[str, list[dict]] = {name: [] for name in ("baseline", *runs)}
    files = 0
    for attempt in range(repeat + 1):  # the first round warms the page cache and is discarded
        measured = {}
        for name, env in runs.items():
            bundle = work / f"{name}.tar.zst"
            for stale in (bundle, Path(f"{bundle}.sha256")):
                stale.unlink(missing_ok=True)
            measured[name] = collect(image, bundle, limit, env)
        listing, files = collected_files(work / "aitrail.tar.zst", image)
        (work / "t.tar.zst").unlink(missing_ok=True)
        wall, _, cpu = baseline(listing, work / "t.tar.zst")
        measured["baseline"] = {"wall": wall, "cpu": cpu}
        if attempt:
            for name, value in measured.items():
                results[name].append(value)
    medians = {name: {key: statistics.median(item[key] for item in items) for key in items[0]}
               for name, items in results.items()}
    return {"homes": homes, "files": files, "limit": limit, "repeat": repeat, "revision": revision, **medians}


def table(result: dict) -> str:
    labels = {"baseline": "tar --zstd -cf + sha256sum (baseline)", "aitrail": "aitrail collect --root",
              "before": f"aitrail collect --root at {result['revision']}"}
    lines = [f"{result['homes']} homes, {result['files']:,} files collected, ulimit -n {result['limit']}; "
             f"median of {result['repeat']} warm-cache runs (one discarded warm-up round).", "",
             "| run | wall time (s) | CPU time (s) | peak RSS (MB) | peak open descriptors | vs baseline |",
             "|---|---|---|---|---|---|"]
    for name in ("baseline", "before", "aitrail"):
        row = result.get(name)
        if row is not None:
            own = f"{row['rss']:.0f} | {row['fds']:.0f}" if "fds" in row else "- | -"
            lines.append(f"| {labels[name]} | {row['wall']:.2f} | {row['cpu']:.2f} | {own} | "
                         f"{row['wall'] / result['baseline']['wall']:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "many-homes")
    parser.add_argument("--homes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--before", metavar="REV", help="also time the collector of this git revision, interleaved")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    print(table(run(args.work, args.homes, args.repeat, args.limit, args.before)))
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
