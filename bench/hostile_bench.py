"""Hostile bundles for the analyzer's parsing bounds (issue 8, part A): time and peak memory.

Builds each attack as a file on a fake home, collects it with ``aitrail collect
--home`` (the real collector), then runs ``aitrail analyze`` on the bundle and
reports wall time, exit status and the peak of the whole process tree's RSS
(sampled from /proc every 20 ms: the coordinator, its parse workers and the
verify worker), plus the ``parser:`` rows of the timeline.

    python bench/hostile_bench.py --work /tmp/hostile [--python OTHER_VENV/bin/python] [--only NAME ...]

``--python`` runs analyze with another interpreter (e.g. a venv of the code
before the fix) on the same bundles; collection always uses this checkout.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import zstandard

THREAD = "0198e2a4-7b1c-7d3e-8f40-5a6b7c8d9e01"
ROLLOUT = f".codex/sessions/2026/07/02/rollout-2026-07-02T11-14-05-{THREAD}.jsonl"
VSCDB = ".config/PearAI/User/globalStorage/state.vscdb"
MIB = 1024 * 1024


def record(text: str) -> bytes:
    return json.dumps({"timestamp": "2026-07-02T09:14:05.000Z", "type": "response_item",
                       "payload": {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}]}}).encode() + b"\n"


def long_line(home: Path) -> None:
    """A 200 MB single-line rollout between two ordinary records."""
    path = home / ROLLOUT
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        handle.write(record("before"))
        for _ in range(200):
            handle.write(b"a" * 1_000_000)
        handle.write(b"\n" + record("after"))


def sparse_rollout(home: Path) -> None:
    """A 3 GiB sparse file named like a Codex rollout (one 3 GiB line of NULs)."""
    path = home / ROLLOUT
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        handle.seek(3 * 1024 * MIB - 1)
        handle.write(b"\n")


def sparse_settings(home: Path) -> None:
    """A 1 GiB sparse .gemini/settings.json."""
    path = home / ".gemini/settings.json"
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        handle.seek(1024 * MIB - 1)
        handle.write(b"}")


def deep_json(home: Path) -> None:
    """A Claude transcript: a line of 100k '[' between two prompts."""
    path = home / ".claude/projects/-home-dev-x/4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"
    path.parent.mkdir(parents=True)
    prompt = '{"type":"user","uuid":"u%d","sessionId":"s","timestamp":"2026-07-02T09:14:05.000Z",' \
             '"message":{"role":"user","content":"prompt %d"}}\n'
    path.write_bytes((prompt % (1, 1)).encode() + b"[" * 100_000 + b"\n" + (prompt % (2, 2)).encode())


def worst_json(home: Path) -> None:
    """Two Claude transcripts, each a line of the costliest JSON shape found just within the decode cap.

    That line is 18 MiB of two-character strings (3.9M values, about 250 MiB of objects); a prompt follows it.
    """
    line = b"[" + b",".join([b'"ab"'] * 3_880_000) + b"]\n"
    prompt = b'{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-07-02T09:14:05.000Z",' \
             b'"message":{"role":"user","content":"after"}}\n'
    for name in ("4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37", "5a0e3d2f-8c4b-4f66-ab1d-3e7f9c2a1b48"):
        path = home / f".claude/projects/-home-dev-x/{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(line + prompt)


def many_records(home: Path, count: int = 1_000_000) -> None:
    """A Claude transcript and a Codex rollout of ``count`` tiny records each (about 170 MB apiece).

    What the parsers keep per record (branch tracking, duplicate pairing) grows with the file: this loads it.
    """
    transcript = home / ".claude/projects/-home-dev-x/4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"
    transcript.parent.mkdir(parents=True)
    with open(transcript, "w") as handle:
        for n in range(count):
            handle.write(json.dumps({"type": "user", "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
                                     "sessionId": "s", "timestamp": "2026-07-02T09:14:05.000Z",
                                     "message": {"role": "user", "content": f"p{n}"}}) + "\n")
    rollout = home / ROLLOUT
    rollout.parent.mkdir(parents=True)
    with open(rollout, "wb") as handle:
        for n in range(count):
            handle.write(record(f"m{n}"))


def _vscdb(home: Path, schema: str) -> None:
    path = home / VSCDB
    path.parent.mkdir(parents=True)
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.commit()
    connection.close()


def cte_view(home: Path) -> None:
    _vscdb(home, "CREATE VIEW ItemTable AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                 "SELECT 'PearAI.pearai-roo-cline' AS key, x AS value FROM n WHERE x < 0;")


def zeroblob_view(home: Path) -> None:
    _vscdb(home, "CREATE VIEW ItemTable AS SELECT 'PearAI.pearai-roo-cline' AS key, zeroblob(900000000) AS value;")


def generated_column(home: Path) -> None:
    _vscdb(home, "CREATE TABLE ItemTable (key TEXT UNIQUE, value BLOB AS (zeroblob(900000000)));"
                 "INSERT INTO ItemTable (key) VALUES ('PearAI.pearai-roo-cline');")


def state_rows(home: Path, count: int) -> None:
    path = home / ".codex/state_5.sqlite"
    path.parent.mkdir(parents=True)
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER, "
                       "updated_at INTEGER, source TEXT, model TEXT, cwd TEXT, title TEXT, first_user_message TEXT, "
                       "tokens_used INTEGER)")
    connection.executemany("INSERT INTO threads VALUES (?,?,?,?,?,?,?,?,?,?)",
                           ((f"thread-{n:08d}", f"/h/.codex/sessions/r-{n}.jsonl", 1751447645 + n, 1751447645 + n,
                             "cli", "gpt-5", f"/src/p{n % 100}", f"title {n}", f"prompt number {n}", n)
                            for n in range(count)))
    connection.commit()
    connection.close()


def zst_bomb(home: Path, size: int = 2 * 1024 * MIB) -> None:
    """A .jsonl.zst rollout: a few KB that expand to ``size`` bytes of NULs."""
    path = home / (ROLLOUT + ".zst")
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        handle.write(zstandard.ZstdCompressor().compress(record("before")))
        with zstandard.ZstdCompressor(level=19).stream_writer(handle, closefd=False) as writer:
            block = b"\0" * (16 * MIB)
            for _ in range(size // len(block)):
                writer.write(block)


CASES = {
    "long_line_200mb": long_line,
    "sparse_rollout_3gib": sparse_rollout,
    "sparse_settings_1gib": sparse_settings,
    "deep_json_100k": deep_json,
    "vscdb_cte_view": cte_view,
    "vscdb_zeroblob_view": zeroblob_view,
    "vscdb_generated_column": generated_column,
    "state_5_250k_threads": lambda home: state_rows(home, 250_000),  # 1M rows in the timeline
    "zst_bomb_2gib": zst_bomb,
    "worst_json_two_files": worst_json,
    "many_records_1m_each": many_records,
}


def _processes() -> tuple[dict[int, list[int]], dict[int, int]]:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, IndexError, ValueError):
            continue
    return children, rss


def descendants(root: int, children: dict[int, list[int]]) -> list[int]:
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def tree_rss_kib(root: int) -> int:
    """RSS of a process and all its descendants, in KiB."""
    children, rss = _processes()
    return sum(rss.get(pid, 0) for pid in descendants(root, children))


def measure(command: list[str], timeout: float) -> tuple[float, int, str]:
    """(seconds, peak tree RSS KiB, exit status or 'timeout')."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kib(proc.pid))
        if time.monotonic() - start > timeout:
            for pid in reversed(descendants(proc.pid, _processes()[0])):  # the run and its workers, by id
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            proc.wait()
            return time.monotonic() - start, peak, "timeout"
        time.sleep(0.02)
    return time.monotonic() - start, peak, str(proc.returncode)


def parser_rows(timeline: Path) -> list[str]:
    if not timeline.exists():
        return []
    with open(timeline, newline="", encoding="utf-8") as handle:
        return [row["text"][:110] for row in csv.DictReader(handle) if row["text"].startswith("parser:")]


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--work", required=True, type=Path)
    options.add_argument("--python", default=sys.executable, help="interpreter that runs analyze")
    options.add_argument("--only", nargs="*", default=list(CASES))
    options.add_argument("--timeout", type=float, default=180)
    args = options.parse_args()
    for name in args.only:
        case = args.work / name
        bundle = case / "bundle.tar.zst"
        if not bundle.exists():
            case.mkdir(parents=True, exist_ok=True)
            CASES[name](case / "home")
            subprocess.run([sys.executable, "-m", "aitrail.collector.cli", "collect", "--home", str(case / "home"),
                            "-o", str(bundle), "--quiet"], check=True)
        timeline = case / f"timeline-{abs(hash(args.python)) % 10000}.csv"
        timeline.unlink(missing_ok=True)
        seconds, peak, status = measure([args.python, "-m", "aitrail.collector.cli", "analyze", str(bundle), "-o",
                                         str(timeline), "--quiet"], args.timeout)
        print(json.dumps({"case": name, "seconds": round(seconds, 1), "peak_tree_mib": round(peak / 1024),
                          "exit": status, "bundle_bytes": bundle.stat().st_size,
                          "parser_rows": parser_rows(timeline)}), flush=True)


if __name__ == "__main__":
    main()
