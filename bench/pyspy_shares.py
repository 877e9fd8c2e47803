"""Shares of a collection's samples by what the code was doing, from a py-spy raw profile.

    py-spy record -r 200 -f raw --threads -o run.raw -- python -m aitrail.collector.cli collect ...
    python bench/pyspy_shares.py run.raw [--source DIR]

Each sample is put in one bucket by its stack: the phase (imports, catalog
and plan, walk, classify and sort, capture, metadata, index, sidecar) and,
inside the capture, by the source line the innermost collector frame was on
(a line calling os.read is "read", one calling hashlib is "hash", and so on;
``--source`` is the checkout the profile ran, default this one). The
compressing thread's samples are bucketed the same way. Only samples of
running threads are counted (py-spy's default), so the shares are of CPU.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

FRAME = re.compile(r"^(?P<function>.+) \((?P<file>[^():]+):(?P<line>\d+)\)$")

# What a source line does, by what it calls (first match wins).
LINE_KINDS = (
    ("os.read(", "read"), ("os.pread(", "read"), ("hashlib", "hash"), ("hasher.update", "hash"),
    ("hexdigest", "hash"), ("_STATX(", "statx (lstat before)"), ("lstat_at(", "statx (lstat before)"),
    ("os.open(", "open"), ("self._open(", "open"), ("fstat", "fstat"), ("os.stat(", "lstat after"),
    ("quick_lstat_at(", "lstat after"), ("os.close(", "close"), ("compress(", "zstd compress"),
)
# Functions that name their bucket wherever they are on the stack (innermost wins).
FUNCTIONS = {
    "tar_header": "tar header", "regular_file_header": "tar header", "_drain": "waiting for / writing frames",
    "files_jsonl": "files.jsonl", "write_metadata_members": "other metadata members",
    "finish": "index and tar end", "_seal": "index and tar end", "_write_sidecar_digest": "sidecar digest",
    "_file_sha256": "sidecar digest", "_walk": "walk",
    "_classify": "classify and sort", "_dedupe_and_sort": "classify and sort",
    "_add_sqlite_companions": "classify and sort", "_complete_metadata": "classify and sort",
    "credential_inodes": "classify and sort", "_plan_jobs": "capture: plan jobs", "_plan": "catalog and plan",
    "load": "catalog and plan", "_find_and_load": "imports",
}


def _source_line(source: Path, file: str, line: int, cache: dict) -> str:
    index = file.find("collector/")
    if index < 0:
        return ""
    path = source / file[index:]
    if path not in cache:
        cache[path] = path.read_text().splitlines() if path.exists() else []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else ""


def bucket(frames: list[str], source: Path, cache: dict) -> str:
    """The bucket of one sample's stack (outermost frame first)."""
    parsed = [match.groupdict() for frame in frames if (match := FRAME.match(frame))]
    for frame in reversed(parsed):  # innermost first
        name = frame["function"].split(".")[-1]
        if name in FUNCTIONS and ("collector/" in frame["file"] or name == "_find_and_load"):
            return FUNCTIONS[name]
    in_capture = any(frame["function"].endswith("capture_all") for frame in parsed)
    innermost = next((frame for frame in reversed(parsed) if "collector/" in frame["file"]), None)
    if innermost is not None:
        text = _source_line(source, innermost["file"], int(innermost["line"]), cache)
        for needle, kind in LINE_KINDS:
            if needle in text:
                return kind
    return "capture: per-file Python" if in_capture else "other"


def shares(raw: Path, source: Path) -> dict[str, collections.Counter]:
    """Samples per bucket, per thread (main thread, compressing thread)."""
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    cache: dict = {}
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        thread = "compressing thread" if "zstd" in frames[0] else "main thread"
        if thread == "compressing thread":
            kind = bucket(frames[1:], source, cache)
            kind = kind if kind in ("hash", "zstd compress") else "thread pool (queue, wake-up)"
            if frames[-1].startswith("_WorkItem.run"):  # before the block job had a name: compress() only
                kind = "zstd compress"
        else:
            kind = bucket(frames[1:], source, cache)
        out[thread][kind] += int(count)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--rate", type=int, default=200, help="the -r given to py-spy (samples per second)")
    args = parser.parse_args()
    result = shares(args.raw, args.source)
    total = sum(sum(counter.values()) for counter in result.values())
    print(f"{total} samples ({total / args.rate:.2f} CPU s at {args.rate} Hz)\n")
    print("| thread | what | CPU s | share |\n|---|---|---|---|")
    for thread in ("main thread", "compressing thread"):
        for kind, count in result[thread].most_common():
            print(f"| {thread} | {kind} | {count / args.rate:.2f} | {100 * count / total:.1f}% |")


if __name__ == "__main__":
    main()
