"""Where a collection's CPU goes, by phase and by thread (for attributing changes, not for tests).

    python bench/collect_phases.py [--home DIR] [--repeat 3]

Runs ``aitrail collect`` in this process on the bench home (built by
collect_bench.py) and reports, as medians over the runs, the main thread's
CPU time in each phase (walk and classify, capture, metadata members,
finish) and the compressing threads' CPU time for the packed blocks (the
whole job: join, hash, compress; and zstd's compress() alone). CPU time per
thread is far less sensitive to a busy machine than wall time. Run it with
PYTHONPATH pointing at an unpacked older collector (collect_bench.py
--before leaves one in bench/out/collect/rev-*) to measure that one.
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
from aitrail.collector.bundle import writer as writer_module
from aitrail.collector.bundle.writer import BundleWriter

# phase -> the functions that make it up, in any version of the collector (absent ones are skipped):
# before 210cab6 the end was finish() and then _write_sidecar_digest re-reading the bundle (a run now calls
# finish_and_hash, which does not go through finish, so no time is counted twice).
PHASES = {"walk and classify": ((collect, "_walk"),), "capture": ((collect, "capture_all"),),
          "metadata members": ((collect, "write_metadata_members"),),
          "finish (index, fsync, the bundle's digest)": ((BundleWriter, "finish_and_hash"), (BundleWriter, "finish"),
                                                         (collect, "_write_sidecar_digest"))}


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


_ADDING = threading.Lock()  # two compressing threads add to the same totals


def _compressing(function, spent: dict[str, float], name: str):
    """Wrap a function the compressing threads run to add up their CPU time under ``name``."""
    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            with _ADDING:
                spent[name] += time.thread_time() - start
    return wrapper


class _TimedCompressor:
    """A packed-frame compressor whose compress() adds its CPU time up."""

    def __init__(self, compressor, spent: dict[str, float]):
        self._compress = _compressing(compressor.compress, spent, "compressing threads: zstd compress")

    def compress(self, data):
        return self._compress(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path,
                        default=Path(__file__).resolve().parent / "out" / "collect" / "home-plain")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spent: dict[str, float] = defaultdict(float)
    for name, functions in PHASES.items():
        for owner, attribute in functions:
            if hasattr(owner, attribute):
                setattr(owner, attribute, _timed(getattr(owner, attribute), name, spent))
    if hasattr(BundleWriter, "_compress_block"):  # the whole job: join, hash, compress
        BundleWriter._compress_block = _compressing(BundleWriter._compress_block, spent,
                                                    "compressing threads: block jobs")
    original_new = writer_module.new_compressor

    def timed_new(*args, **kwargs):  # time zstd itself on the compressing threads, in any version of the writer
        compressor = original_new(*args, **kwargs)
        if threading.current_thread().name.startswith("aitrail-zstd"):
            return _TimedCompressor(compressor, spent)
        return compressor

    writer_module.new_compressor = timed_new
    original_init = BundleWriter.__init__

    def init(self, *args, **kwargs):  # a writer with one block compressor made on the reading thread
        original_init(self, *args, **kwargs)
        if hasattr(self, "_block_compressor"):
            self._block_compressor = _TimedCompressor(self._block_compressor, spent)

    BundleWriter.__init__ = init
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(dir=args.home.parent) as scratch:
        for attempt in range(args.repeat + 1):  # the first run warms caches and is discarded
            spent.clear()
            result = one_run(args.home, Path(scratch), spent)
            if attempt:
                runs.append({**{name: spent[name] for name in PHASES}, **result,
                             **{name: spent[name] for name in ("compressing threads: block jobs",
                                                               "compressing threads: zstd compress")}})
    print(f"Median of {args.repeat} in-process runs on {args.home} (CPU seconds unless noted)\n")
    print("| part | seconds |\n|---|---|")
    for name in runs[0]:
        print(f"| {name} | {statistics.median(run[name] for run in runs):.2f} |")


if __name__ == "__main__":
    main()
