"""Where a collection's CPU goes, by phase and by thread (for attributing changes, not for tests).

    python bench/collect_phases.py [--home DIR] [--repeat 3]

Runs ``aitrail collect`` in this process on the bench home (built by
collect_bench.py) and reports, as medians over the runs, the main thread's
CPU time in each phase (walk and classify, capture, metadata members, finish,
sidecar digest) and the compressing thread's CPU time for the packed blocks
(join, hash, compress). CPU time per thread is far less sensitive to a busy machine than
wall time: on two cores the wall time is about the main thread's CPU time
whenever the compressing thread has less to do.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from aitrail.collector import collect
from aitrail.collector.bundle.writer import BundleWriter

PHASES = {"walk and classify": (collect, "_walk"), "capture": (collect, "capture_all"),
          "metadata members": (collect, "write_metadata_members"), "finish (index)": (BundleWriter, "finish"),
          "sidecar digest": (collect, "_write_sidecar_digest")}


def _timed(function, name: str, spent: dict[str, float]):
    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            if threading.current_thread() is threading.main_thread():
                spent[name] += time.thread_time() - start
    return wrapper


def one_run(home: Path, work: Path, spent: dict[str, float]) -> dict[str, float]:
    output = work / "phases.tar.zst"
    options = collect.CollectOptions(output=str(output), homes=[str(home)], progress=False, command_line=["bench"])
    start_wall, start_cpu = time.perf_counter(), time.thread_time()
    collect.run(options)
    result = {"main thread, whole run": time.thread_time() - start_cpu, "wall (s)": time.perf_counter() - start_wall}
    for path in work.glob("phases.tar.zst*"):
        path.unlink()
    return result


def _compressing(function, spent: dict[str, float]):
    """Wrap the compressing thread's job (hash, join, compress one block) to add up its CPU time."""
    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent["compressing thread: blocks"] += time.thread_time() - start
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path,
                        default=Path(__file__).resolve().parent / "out" / "collect" / "home-plain")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spent: dict[str, float] = defaultdict(float)
    for name, (owner, attribute) in PHASES.items():
        setattr(owner, attribute, _timed(getattr(owner, attribute), name, spent))
    job = "_compress_block" if hasattr(BundleWriter, "_compress_block") else None
    if job:
        setattr(BundleWriter, job, _compressing(getattr(BundleWriter, job), spent))
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(dir=args.home.parent) as scratch:
        for attempt in range(args.repeat + 1):  # the first run warms caches and is discarded
            spent.clear()
            result = one_run(args.home, Path(scratch), spent)
            if attempt:
                runs.append({**{name: spent[name] for name in PHASES}, **result,
                             "compressing thread: blocks": spent["compressing thread: blocks"]})
    print(f"Median of {args.repeat} in-process runs on {args.home} (CPU seconds unless noted)\n")
    print("| part | seconds |\n|---|---|")
    for name in runs[0]:
        print(f"| {name} | {statistics.median(run[name] for run in runs):.2f} |")


if __name__ == "__main__":
    main()
