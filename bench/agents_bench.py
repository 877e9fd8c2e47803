"""Every agent's corpus: aitrail analyze beside the stdlib and msgspec decode floors, one run.

    python bench/agents_bench.py [--work DIR] [--megabytes 8] [--repeat 3] [--agent NAME]...

For each agent, its fixture cases (every format generation and layout the
parsers know: fixtures/<agent>/<case>/home) are copied as separate homes,
as many times as it takes to pass --megabytes of collected files, and
collected into one bundle (``aitrail collect --home H1 --home H2 ...``). Then,
side by side on that bundle:

* floor (stdlib): decompress every parsed member through the bundle index and
  decode it with ``json.loads``: JSONL line by line, JSON documents whole,
  every text value of every SQLite table that starts like JSON;
* floor (msgspec): the same with msgspec's decoder;
* aitrail analyze BUNDLE -o timeline.csv (one worker per core).

The fixtures hold damaged lines, torn tails and WAL-only rows on purpose:
the corpora are small and varied, not large and uniform like
bench/analyze_bench.py's, so process start is a larger share of each run.
Timings are for reading, never for pass/fail tests.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze_bench import EACH_MEMBER, bench_arguments, measure  # noqa: E402  (shared with the transcript bench)

REPO = Path(__file__).resolve().parent.parent

FLOOR = r"""
import json, os, sqlite3, sys, tempfile
if sys.argv[2] == "msgspec":
    import msgspec
    loads = msgspec.json.Decoder().decode
else:
    loads = json.loads
values = 0

def decode(data):
    global values
    try:
        loads(data)
        values += 1
    except (ValueError, TypeError):
        pass
""" + EACH_MEMBER + r"""
        if record["format"] in ("jsonl", "jsonl_zst"):
            for line in data.splitlines():
                if line.strip():
                    decode(line)
        elif record["format"] == "sqlite":
            handle, path = tempfile.mkstemp(suffix=".db")
            os.write(handle, data)
            os.close(handle)
            try:
                connection = sqlite3.connect(path)
                tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
                for table in tables:
                    try:
                        rows = connection.execute(f'SELECT * FROM "{table}"')
                        for row in rows:
                            for value in row:
                                if isinstance(value, (str, bytes)) and value[:1] in ("{", "[", b"{", b"["):
                                    decode(value)
                    except sqlite3.DatabaseError:
                        pass
                connection.close()
            except sqlite3.DatabaseError:
                pass
            os.unlink(path)
        else:
            decode(data)
print(values)
"""


def agents() -> list[str]:
    """Every agent with fixture cases (fixtures/<agent>/<case>/home)."""
    return sorted(path.name for path in (REPO / "fixtures").iterdir()
                  if path.is_dir() and any(path.glob("*/home")) and path.name != "demo-home")


def _size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file() and not item.is_symlink())


def build(work: Path, agent: str, megabytes: int) -> dict:
    """Copies of the agent's fixture homes (one home per case and copy), collected into one bundle."""
    homes_dir, bundle = work / "homes", work / "bench.tar.zst"
    cases = sorted((REPO / "fixtures" / agent).glob("*/home"))
    per_copy = max(1, sum(_size(case) for case in cases))
    copies = max(1, -(-megabytes * 1_000_000 // per_copy))
    homes = []
    for copy in range(copies):
        for case in cases:
            target = homes_dir / f"{case.parent.name}-{copy:04d}"
            shutil.copytree(case, target, symlinks=True)
            homes.append(target)
    command = [sys.executable, "-m", "aitrail.collector.cli", "collect", "-o", str(bundle), "--quiet"]
    for home in homes:
        command += ["--home", str(home)]
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)  # exit 3 (partial) is expected: fixtures
    if not bundle.exists():
        raise RuntimeError(f"{agent}: no bundle")
    stats = {"agent": agent, "cases": len(cases), "copies": copies, "bytes": per_copy * copies}
    (work / "built.json").write_text(json.dumps(stats))
    return stats


def run(work: Path, agent: str, megabytes: int, repeat: int) -> dict:
    work = work / agent
    if not (work / "bench.tar.zst").exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        build(work, agent, megabytes)
    stats = json.loads((work / "built.json").read_text())
    bundle = work / "bench.tar.zst"
    results: dict[str, list[dict]] = {"stdlib": [], "msgspec": [], "aitrail": []}
    rows = 0
    for attempt in range(repeat + 1):  # the first round warms the page cache and is discarded
        stdlib = measure([sys.executable, "-c", FLOOR, str(bundle), "stdlib"])
        fast = measure([sys.executable, "-c", FLOOR, str(bundle), "msgspec"])
        out, summary = work / "timeline.csv", work / "summary.json"
        out.unlink(missing_ok=True)
        summary.unlink(missing_ok=True)
        analyzed = measure([sys.executable, "-m", "aitrail.collector.cli", "analyze", str(bundle), "-o", str(out),
                            "--summary", str(summary), "--quiet"])
        rows = json.loads(summary.read_text())["rows"]
        if attempt:
            for key, value in (("stdlib", stdlib), ("msgspec", fast), ("aitrail", analyzed)):
                results[key].append(value)
    medians = {key: statistics.median(item["wall"] for item in values) for key, values in results.items()}
    peak = max(item["peak"] for item in results["aitrail"]) / 1e6
    return {**stats, "rows": rows, **medians, "peak_mb": peak}


def table(lines: list[dict], repeat: int) -> str:
    out = [f"Median of {repeat} warm-cache runs (one discarded warm-up round) per agent.", "",
           "| agent | cases x copies | MB | rows | stdlib floor (s) | msgspec floor (s) | aitrail analyze (s) | "
           "vs stdlib | peak PSS (MB) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for line in lines:
        out.append(f"| {line['agent']} | {line['cases']} x {line['copies']} | {line['bytes'] / 1e6:.1f} | "
                   f"{line['rows']:,} | {line['stdlib']:.2f} | {line['msgspec']:.2f} | {line['aitrail']:.2f} | "
                   f"{line['aitrail'] / line['stdlib']:.2f}x | {line['peak_mb']:.0f} |")
    return "\n".join(out)


def main() -> None:
    parser = bench_arguments(__doc__, "agents", 8)
    parser.add_argument("--agent", action="append", help="only this agent (repeatable; default: all)")
    args = parser.parse_args()
    started = time.time()
    lines = [run(args.work, agent, args.megabytes, args.repeat) for agent in args.agent or agents()]
    print(table(lines, args.repeat))
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
