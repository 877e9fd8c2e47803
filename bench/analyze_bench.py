"""Analyzer benchmark: aitrail analyze against a decode-only floor, same bundle, one run.

    python bench/analyze_bench.py [--work DIR] [--megabytes 320] [--repeat 3] [--profile NAME]...
    python bench/analyze_bench.py --profile claude --sizes 10,90,1000   # the cost per row at three sizes
    python bench/analyze_bench.py --profile codex --before-python OLD/.venv/bin/python   # an older aitrail too

Builds (once per corpus, cached in --work) a home with at least --megabytes
of agent transcripts, collects it into a bundle, then times side by side:

* floor:   decompress every parsed member through the bundle index and
           json-decode it, nothing else: JSON documents whole, JSONL line by
           line (Claude Code, Codex, Copilot CLI events.jsonl); a SQLite
           database is written out with its -wal member beside it (so the
           rows only in the -wal are read, as aitrail reads them) and every
           row of the tables the parsers read is fetched, its JSON columns
           decoded (SQLITE_JSON: Cursor's ItemTable and cursorDiskKV values;
           Goose's sessions, messages and thread copies; OpenClaw's session_nodes,
           session_windows and transcript_events, an ``event_zstd`` frame
           zstd-decompressed first);
* aitrail: aitrail analyze BUNDLE -o timeline.csv (default jobs: one per core).

The goose, openclaw and copilot homes are built by bench/agents_homes.py.

Reports rows/s, MB/s, wall time, CPU use (user+sys over wall: about 2.0 means
both cores busy) and the peak resident memory of the whole process tree,
sampled every 50 ms (proportional set size, so pages shared by forked workers
count once). Timings are for reading, never for pass/fail tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agents_homes import build_copilot_home, build_goose_home, build_openclaw_home  # noqa: E402

WORDS = ("the build fails because make all needs a target run the tests again read the file utils slug py "
         "lower case dashes unicode handling npm test passing failing error stack trace module import").split()
TOOLS = ("execute_command", "read_file", "write_to_file", "search_files", "list_files")

# The start of every floor script: each parsed member's bytes, as ``record`` and ``data`` (the
# bundle is argv[1]); a floor goes on from there at the indentation of the loop's body.
EACH_MEMBER = r"""
import json, sys
from aitrail.collector.bundle.reader import BundleReader
with BundleReader(sys.argv[1]) as reader:
    records = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
    members = {record.get("member") for record in records}
    for record in records:
        if record.get("outcome") != "collected" or not record.get("parser") or not record["member"].startswith("data/"):
            continue
        data = reader.read_data(record["member"])
"""

# A SQLite member's rows, as a minimal reader gets them: the database and its -wal written out, every row of
# the tables the parsers read fetched, each JSON column decoded (a zstd frame decompressed first).
SQLITE_FLOOR = r"""
import json, os, shutil, sqlite3, tempfile
import zstandard
SQLITE_JSON = {"ItemTable": ("value",), "cursorDiskKV": ("value",),  # Cursor, VS Code
               "sessions": ("extension_data", "model_config_json", "recipe_json", "user_recipe_values_json"),
               "messages": ("content_json", "metadata_json"), "threads": ("metadata_json",),
               "thread_messages": ("content_json", "metadata_json"),  # Goose
               "session_nodes": ("entry_json",), "session_windows": (),
               "transcript_events": ("event_json", "event_zstd")}  # OpenClaw
unzstd = zstandard.ZstdDecompressor()

def decoded(value):
    if isinstance(value, bytes) and value[:4] == b"\x28\xb5\x2f\xfd":
        value = unzstd.decompress(value)
    try:
        json.loads(value)
        return 1
    except (ValueError, TypeError):
        return 0

def sqlite_rows(data, wal):
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "copy.db")
    for name, content in ((path, data), (path + "-wal", wal)):
        if content is not None:
            with open(name, "wb") as handle:
                handle.write(content)
    connection, values = sqlite3.connect(path), 0
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in (table for table in SQLITE_JSON if table in tables):
        names = [column[1] for column in connection.execute(f'PRAGMA table_info("{table}")')]
        wanted = [names.index(name) for name in SQLITE_JSON[table] if name in names]
        for row in connection.execute(f'SELECT * FROM "{table}"'):
            values += sum(decoded(row[index]) for index in wanted if row[index] is not None)
    connection.close()
    shutil.rmtree(folder)
    return values
"""

FLOOR = SQLITE_FLOOR + "rows = 0" + EACH_MEMBER + r"""
        if record["format"] == "jsonl":
            for line in data.splitlines():
                if line.strip():
                    json.loads(line); rows += 1
        elif record["format"] == "json":
            value = json.loads(data); rows += len(value) if isinstance(value, list) else 1
        elif record["format"] == "sqlite":
            wal = record["member"] + "-wal"
            rows += sqlite_rows(data, reader.read_data(wal) if wal in members else None)
print(rows)
"""


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


PROFILES = {
    # PearAI agent tasks (JSON documents); words per tool result: "dense" is a worst case of
    # short results (many rows per MB), "typical" has results of a few kilobytes.
    "dense": (50, 400),
    "typical": (300, 1500),
    # JSONL transcripts with tool results of a few kilobytes
    "claude": (300, 1500),
    "codex": (300, 1500),
    # Cursor IDE: one global state.vscdb, thousands of composers and their bubbleId rows (use --megabytes 50)
    "cursor": (30, 300),
    # the largest stores of bench/agents_homes.py: Goose's sessions.db (results of a few kilobytes, file views
    # and writes up to ~20 KB), OpenClaw's agent database (events under 1 KiB plain, the rest zstd) and Copilot
    # CLI's events.jsonl
    "goose": (100, 3000),
    "openclaw": (50, 1500),
    "copilot": (100, 1500),
}
AGENT_HOMES = {"goose": build_goose_home, "openclaw": build_openclaw_home, "copilot": build_copilot_home}


def task_messages(rng: random.Random, start_ms: int, target: int, result_words: tuple[int, int]) -> list[dict]:
    messages = [{"role": "user", "content": [{"type": "text", "text": f"<task>\n{words(rng, 30)}\n</task>"},
                                             {"type": "text",
                                              "text": "<environment_details>\n# Current Workspace Directory (/home/u/p)"
                                                      " Files\n</environment_details>"}],
                 "ts": start_ms}]
    size, step = 0, 0
    while size < target:
        step += 1
        tool = rng.choice(TOOLS)
        call = {"role": "assistant",
                "content": [{"type": "text", "text": f"<thinking>{words(rng, 20)}</thinking>\n\n{words(rng, 15)}\n\n"
                                                     f"<{tool}>\n<path>src/{step}.py</path>\n</{tool}>"}],
                "ts": start_ms + step * 2000}
        result = {"role": "user", "content": [{"type": "text", "text": f"[{tool} for 'src/{step}.py'] Result:"},
                                              {"type": "text", "text": words(rng, rng.randint(*result_words))}],
                  "ts": start_ms + step * 2000 + 1000}
        messages += [call, result]
        size += len(json.dumps(call)) + len(json.dumps(result))
    return messages


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _write_jsonl(path: Path, lines: list[dict]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    path.write_text(data)
    return len(data)


def claude_session(rng: random.Random, start_ms: int, target: int, result_words: tuple[int, int],
                   project: str) -> list[dict]:
    """A Claude Code transcript: prompt, then tool_use / tool_result pairs and replies (research 1.3-1.4)."""
    session = f"{rng.getrandbits(128):032x}"
    session = f"{session[:8]}-{session[8:12]}-4{session[13:16]}-8{session[17:20]}-{session[20:32]}"
    base = {"isSidechain": False, "userType": "external", "cwd": project, "sessionId": session,
            "version": "2.1.120", "gitBranch": "main"}
    lines, parent, size, step = [], None, 0, 0

    def add(entry: dict) -> None:
        nonlocal parent, size
        entry = dict(base, parentUuid=parent, uuid=f"{rng.getrandbits(64):016x}-0000-4000-8000-000000000000",
                     timestamp=_iso(start_ms + len(lines) * 1500), **entry)
        parent = entry["uuid"]
        lines.append(entry)
        size += len(json.dumps(entry))

    add({"type": "user", "message": {"role": "user", "content": words(rng, 30)}})
    while size < target:
        step += 1
        message_id = f"msg_{rng.getrandbits(64):016x}"
        tool_id = f"toolu_{rng.getrandbits(64):016x}"
        add({"type": "assistant", "requestId": f"req_{step}", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": words(rng, 25)}], "stop_reason": None}})
        add({"type": "assistant", "requestId": f"req_{step}", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "tool_use", "id": tool_id, "name": rng.choice(("Read", "Bash", "Grep")),
                         "input": {"file_path": f"src/{step}.py"}}], "stop_reason": "tool_use"}})
        add({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": words(rng, rng.randint(*result_words))}]}})
    return lines


def codex_rollout(rng: random.Random, start_ms: int, target: int, result_words: tuple[int, int],
                  project: str) -> list[dict]:
    """A Codex rollout: session_meta, turn_context, prompts, function calls and outputs (research 2.3-2.4)."""
    thread = f"0199{rng.getrandbits(112):028x}"
    thread = f"{thread[:8]}-{thread[8:12]}-7{thread[13:16]}-8{thread[17:20]}-{thread[20:32]}"
    lines, size = [], 0

    def add(kind: str, payload: dict) -> None:
        nonlocal size
        line = {"timestamp": _iso(start_ms + len(lines) * 1500), "type": kind, "payload": payload}
        lines.append(line)
        size += len(json.dumps(line))

    add("session_meta", {"id": thread, "timestamp": _iso(start_ms), "cwd": project, "originator": "codex_cli_rs",
                         "cli_version": "0.44.0", "model_provider": "openai", "git": {"branch": "main"}})
    add("turn_context", {"cwd": project, "approval_policy": "on-request", "sandbox_policy": {"type": "workspace-write"},
                         "model": "gpt-5-codex", "summary": "auto"})
    prompt = words(rng, 30)
    add("event_msg", {"type": "user_message", "message": prompt, "images": []})
    add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
    step = 0
    while size < target:
        step += 1
        call = f"call_{rng.getrandbits(64):016x}"
        add("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": words(rng, 20)}],
                              "encrypted_content": None})
        add("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                              "arguments": json.dumps({"command": ["bash", "-lc", f"cat src/{step}.py"]})})
        add("response_item", {"type": "function_call_output", "call_id": call,
                              "output": ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"
                                         + words(rng, rng.randint(*result_words)))})
        add("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 1000 * step,
                          "cached_input_tokens": 0, "output_tokens": 90 * step, "reasoning_output_tokens": 0,
                          "total_tokens": 1090 * step}}, "rate_limits": None})
    add("response_item", {"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": words(rng, 40)}]})
    return lines


def build_jsonl_home(home: Path, megabytes: int, profile: str, seed: int = 13) -> dict:
    rng = random.Random(seed)
    total = files = 0
    while total < megabytes * 1_000_000:
        files += 1
        start = 1_780_000_000_000 + files * 600_000
        project = f"/home/u/p{files % 20}"
        size = rng.randint(40_000, 160_000)
        if profile == "claude":
            lines = claude_session(rng, start, size, PROFILES[profile], project)
            path = home / f".claude/projects/-home-u-p{files % 20}/{lines[0]['sessionId']}.jsonl"
        else:
            lines = codex_rollout(rng, start, size, PROFILES[profile], project)
            day = 1 + files % 28
            path = home / (f".codex/sessions/2026/06/{day:02d}/"
                           f"rollout-2026-06-{day:02d}T10-00-00-{lines[0]['payload']['id']}.jsonl")
        total += _write_jsonl(path, lines)
    return {"files": files, "bytes": total}


def _cursor_bubbles(rng: random.Random, composer: str, start_ms: int, result_words: tuple[int, int]) -> list[tuple]:
    rows, headers = [], []
    for turn in range(rng.randint(6, 30)):
        bubble = f"{composer[:8]}-{turn:04d}-4000-8000-{rng.getrandbits(48):012x}"
        created = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(start_ms / 1000 + turn * 7))
        kind = 1 if turn % 3 == 0 else 2
        value = {"_v": 3, "type": kind, "bubbleId": bubble, "text": words(rng, 25 if kind == 1 else 60),
                 "createdAt": created}
        if kind == 2 and turn % 3 == 1:
            call = f"toolu_{rng.getrandbits(64):016x}"
            value["text"] = ""
            value["toolFormerData"] = {
                "tool": 15, "toolCallId": call, "name": rng.choice(("run_terminal_cmd", "read_file", "edit_file")),
                "rawArgs": json.dumps({"command": words(rng, 6)}), "status": "completed",
                "result": json.dumps({"output": words(rng, rng.randint(*result_words)), "exitCode": 0})}
            value["thinking"] = {"text": words(rng, 20)}
        headers.append({"bubbleId": bubble, "type": kind})
        rows.append((f"bubbleId:{composer}:{bubble}", json.dumps(value, separators=(",", ":"))))
    return headers, rows


def build_cursor_home(home: Path, megabytes: int, seed: int = 17) -> dict:
    """A Cursor user-data tree: one global state.vscdb (cursorDiskKV) and 20 workspaces listing its composers."""
    rng = random.Random(seed)
    user = home / ".config/Cursor/User"
    (user / "globalStorage").mkdir(parents=True)
    connection = sqlite3.connect(user / "globalStorage/state.vscdb")
    for table in ("ItemTable", "cursorDiskKV"):
        connection.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    total, composers, listed = 0, 0, {number: [] for number in range(20)}
    while total < megabytes * 1_000_000:
        composers += 1
        composer = f"{rng.getrandbits(32):08x}-0000-4000-8000-{composers:012d}"
        start = 1_764_000_000_000 + composers * 600_000
        headers, rows = _cursor_bubbles(rng, composer, start, PROFILES["cursor"])
        document = {"_v": 10, "composerId": composer, "name": words(rng, 4), "createdAt": start,
                    "lastUpdatedAt": start + 200_000, "status": "completed", "unifiedMode": "agent",
                    "modelConfig": {"modelName": "claude-4.5-sonnet"}, "fullConversationHeadersOnly": headers}
        rows.append((f"composerData:{composer}", json.dumps(document, separators=(",", ":"))))
        connection.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        total += sum(len(key) + len(value) for key, value in rows)
        listed[composers % 20].append({"type": "head", "composerId": composer, "createdAt": start})
    connection.commit()
    connection.close()
    for number, entries in listed.items():
        folder = user / f"workspaceStorage/{number:032x}"
        folder.mkdir(parents=True)
        (folder / "workspace.json").write_text(json.dumps({"folder": f"file:///home/u/p{number}"}))
        workspace = sqlite3.connect(folder / "state.vscdb")
        workspace.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        workspace.execute("INSERT INTO ItemTable VALUES (?, ?)",
                          ("composer.composerData", json.dumps({"allComposers": entries})))
        workspace.commit()
        workspace.close()
    return {"files": 1 + len(listed), "bytes": total, "composers": composers}


def build_home(home: Path, megabytes: int, profile: str, seed: int = 11) -> dict:
    if profile in ("claude", "codex"):
        return build_jsonl_home(home, megabytes, profile)
    if profile == "cursor":
        return build_cursor_home(home, megabytes)
    if profile in AGENT_HOMES:
        return AGENT_HOMES[profile](home, megabytes, PROFILES[profile])
    rng = random.Random(seed)
    tasks_dir = home / ".config/PearAI/User/globalStorage/pearai.pearai-roo-cline/tasks"
    history, total, files = [], 0, 0
    task_number = 0
    while total < megabytes * 1_000_000:
        task_number += 1
        task_id = str(1759400000000 + task_number * 1000)
        messages = task_messages(rng, int(task_id), rng.randint(40_000, 160_000), PROFILES[profile])
        path = tasks_dir / task_id / "api_conversation_history.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(messages, separators=(",", ":"))
        path.write_text(data)
        total += len(data)
        files += 1
        history.append({"id": task_id, "number": task_number, "ts": int(task_id), "task": words(rng, 8),
                        "tokensIn": 1000, "tokensOut": 100, "totalCost": 0.01,
                        "workspace": f"/home/u/p{task_number % 20}"})
    sessions = home / ".pearai/sessions"
    sessions.mkdir(parents=True)
    index = []
    for number in range(200):
        session_id = f"00000000-0000-4000-8000-{number:012d}"
        items = []
        for _ in range(rng.randint(4, 20)):
            items.append({"message": {"role": "user", "content": words(rng, 30)}, "contextItems": []})
            items.append({"message": {"role": "assistant", "content": words(rng, 120)}, "contextItems": [],
                          "promptLogs": [{"completionOptions": {"model": "pearai_model"},
                                          "prompt": "", "completion": ""}]})
        data = json.dumps({"history": items, "perplexityHistory": [], "sessionId": session_id, "title": "t",
                           "workspaceDirectory": "/home/u/p"}, separators=(",", ":"))
        (sessions / f"{session_id}.json").write_text(data)
        total += len(data)
        files += 1
        index.append({"sessionId": session_id, "title": "t", "dateCreated": str(1759400000000 + number),
                      "workspaceDirectory": "/home/u/p"})
    (sessions / "sessions.json").write_text(json.dumps(index))
    database = home / ".config/PearAI/User/globalStorage/state.vscdb"
    connection = sqlite3.connect(database)
    connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    connection.execute("INSERT INTO ItemTable VALUES (?, ?)",
                       ("PearAI.pearai-roo-cline", json.dumps({"taskHistory": history})))
    connection.commit()
    connection.close()
    return {"files": files, "bytes": total}


def _tree_rss(root: int) -> int:
    """Memory (bytes) of a process and all its descendants, from /proc.

    Proportional set size (PSS): pages shared by forked workers are counted
    once in total, not once per process as a sum of RSS would.
    """
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    pending.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return total


def measure(command: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if process.returncode:
        raise RuntimeError(f"{command[:4]} failed with {process.returncode}")
    return {"wall": wall, "cpu": cpu, "peak": peak[0], "stdout": output.decode()}


def run(work: Path, megabytes: int, repeat: int, profile: str, before: str | None = None) -> str:
    work = work / profile
    home, bundle = work / "home", work / "bench.tar.zst"
    if not bundle.exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        stats = build_home(home, megabytes, profile)
        (work / "built.json").write_text(json.dumps(stats))
        subprocess.run([sys.executable, "-m", "aitrail.collector.cli", "collect", "--home", str(home),
                        "-o", str(bundle), "--quiet"], check=True, stdout=subprocess.DEVNULL)
    stats = json.loads((work / "built.json").read_text())
    results: dict[str, list[dict]] = {"floor": [], "aitrail": [], **({"before": []} if before else {})}
    rows = 0
    stats["profile"] = profile
    for attempt in range(repeat + 1):  # the first round warms the page cache and is discarded
        floor = measure([sys.executable, "-c", FLOOR, str(bundle)])
        out, summary = work / f"timeline-{attempt}.csv", work / f"summary-{attempt}.json"
        out.unlink(missing_ok=True)
        summary.unlink(missing_ok=True)
        analyzed = measure([sys.executable, "-m", "aitrail.collector.cli", "analyze", str(bundle), "-o", str(out),
                            "--summary", str(summary), "--quiet"])
        rows = json.loads(summary.read_text())["rows"]
        out.unlink()
        summary.unlink()
        if before:  # an earlier aitrail, installed for that interpreter, on the same bundle in the same round
            older = measure([before, "-m", "aitrail.collector.cli", "analyze", str(bundle), "-o", str(out), "--quiet"])
            out.unlink()
        if attempt:
            results["floor"].append(floor)
            results["aitrail"].append(analyzed)
            if before:
                results["before"].append(older)
    return report(stats, results, rows, repeat)


def report(stats: dict, results: dict, rows: int, repeat: int) -> str:
    megabytes = stats["bytes"] / 1e6
    lines = [
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Linux {platform.release()}, "
        f"Python {platform.python_version()}",
        f"Corpus '{stats['profile']}': {stats['files']} parsed files, {megabytes:.0f} MB of transcripts"
        f"{_on_disk(stats)}; {rows:,} timeline rows ({stats['bytes'] / max(rows, 1):.0f} bytes of input per row)",
        f"Median of {repeat} warm-cache runs (one discarded warm-up round).",
        "",
        "| run | wall (s) | MB/s | rows/s | CPU use | CPU per row (us) | peak process tree PSS (MB) | vs floor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    floor_wall = statistics.median(item["wall"] for item in results["floor"])
    names = {"floor": "floor: decompress + json-decode", "before": "aitrail analyze, --before-python",
             "aitrail": "aitrail analyze"}
    for key in [key for key in ("floor", "before", "aitrail") if key in results]:
        wall = statistics.median(item["wall"] for item in results[key])
        cpu = statistics.median(item["cpu"] / item["wall"] for item in results[key])
        per_row = statistics.median(item["cpu"] for item in results[key]) / max(rows, 1) * 1e6
        peak = max(item["peak"] for item in results[key]) / 1e6
        lines.append(f"| {names[key]} | {wall:.2f} | {megabytes / wall:.0f} | {rows / wall:,.0f} | {cpu:.2f} | "
                     f"{per_row:.0f} | {peak:.0f} | {wall / floor_wall:.2f}x |")
    # the machine's speed moves between rounds (a shared VM): each round's own ratio too
    lines.append("")
    lines.append(_per_round("aitrail / floor", results["aitrail"], results["floor"]))
    if "before" in results:
        lines.append(_per_round("aitrail / --before-python", results["aitrail"], results["before"]))
    return "\n".join(lines)


def _on_disk(stats: dict) -> str:
    """The files' size on disk where it is not the JSON's (compressed events, SQLite pages and indexes)."""
    disk = stats.get("disk_bytes", stats["bytes"])
    return "" if disk == stats["bytes"] else f" ({disk / 1e6:.0f} MB on disk)"


def _per_round(name: str, new: list[dict], old: list[dict]) -> str:
    ratios = sorted(one["wall"] / other["wall"] for one, other in zip(new, old, strict=True))
    return f"{name}, per round: median {statistics.median(ratios):.3f} (from {ratios[0]:.2f} to {ratios[-1]:.2f})"


def bench_arguments(doc: str, work: str, megabytes: int) -> argparse.ArgumentParser:
    """The options every analyzer bench takes: --work (under bench/out), --megabytes, --repeat."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / work)
    parser.add_argument("--megabytes", type=int, default=megabytes)
    parser.add_argument("--repeat", type=int, default=3)
    return parser


def main() -> None:
    parser = bench_arguments(__doc__, "analyze", 320)
    parser.add_argument("--profile", choices=sorted(PROFILES), action="append",
                        help="corpus shape (repeatable; default: all)")
    parser.add_argument("--sizes", help="comma-separated megabytes: one corpus of each size (instead of --megabytes)")
    parser.add_argument("--before-python", metavar="PYTHON",
                        help="also time the aitrail installed for this interpreter (an earlier commit), interleaved")
    args = parser.parse_args()
    started = time.time()
    sizes = [int(size) for size in args.sizes.split(",")] if args.sizes else [args.megabytes]
    for profile in args.profile or sorted(PROFILES):
        for size in sizes:
            work = args.work / f"{size}mb" if args.sizes else args.work
            print(run(work, size, args.repeat, profile, args.before_python))
            print()
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
