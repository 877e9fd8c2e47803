"""Collection benchmark: aitrail collect against tar --zstd + sha256sum, same files, one run.

    python bench/collect_bench.py [--work DIR] [--repeat 3] [--before REV] [--frozen PROGRAM]

Builds (once, cached in --work) a synthetic home with about 10,000 agent files
and 150 MB of JSONL and SQLite, plus a second copy of the same home with
200,000 unrelated files in projects/*/node_modules and .cache that no catalog
glob names. Then, side by side with warm page caches:

* aitrail:  aitrail collect --home HOME -o B.tar.zst
* baseline: tar --zstd -cf B.tar.zst -T <the files aitrail collected>, then
            sha256sum of the same files

and aitrail again on the home with the unrelated files, and on the plain home
with the POSIX backend of macOS and the BSDs forced (AITRAIL_PLATFORM=posix:
no O_NOATIME, os.stat instead of statx; its payload manifest must equal the
Linux backend's), with --frozen PROGRAM the frozen collector-only build
(packaging/build_frozen_collector.py; its payload manifest must equal the
installed collector's), and, with --before REV, the collector of an earlier commit
on the plain home, all interleaved, so a change is measured against its
baseline in one run. Prints a Markdown
table (median wall time, CPU time, peak RSS) for docs/performance.md. Timings are for
reading, never for pass/fail tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the login endpoint times out under load find cause pool timeout raise test assert handler request "
         "database connection retry backoff config settings user assistant tool result error stack trace file "
         "src main python typescript function class return value import module build fails make target").split()

RUN = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime)
"""


def sentence(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def jsonl_file(rng: random.Random, path: Path, target_bytes: int) -> int:
    lines, size = [], 0
    turn = 0
    while size < target_bytes:
        record = {"type": rng.choice(["user", "assistant"]), "uuid": f"{rng.getrandbits(64):016x}",
                  "timestamp": f"2026-07-{1 + turn % 28:02d}T09:{turn % 60:02d}:05.112Z",
                  "message": {"role": "user", "content": sentence(rng, rng.randint(10, 120))}}
        line = json.dumps(record) + "\n"
        lines.append(line)
        size += len(line)
        turn += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return size


def sqlite_file(rng: random.Random, path: Path, target_bytes: int) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    size, index = 0, 0
    while size < target_bytes:
        value = json.dumps({"history": [sentence(rng, 60) for _ in range(20)]})
        connection.execute("INSERT INTO ItemTable VALUES (?, ?)", (f"key{index}", value))
        size += len(value)
        index += 1
    connection.commit()
    connection.close()
    return path.stat().st_size


def build_home(home: Path, seed: int = 7) -> dict:
    rng = random.Random(seed)
    files = total = 0
    for project in range(40):  # Claude Code: 40 projects x 100 sessions
        for _session in range(100):
            total += jsonl_file(rng, home / f".claude/projects/-home-u-p{project}/{rng.getrandbits(64):016x}.jsonl",
                                rng.randint(4_000, 20_000))
            files += 1
    for day in range(1, 31):  # Codex: 30 days x 100 rollouts
        for index in range(100):
            total += jsonl_file(rng, home / (f".codex/sessions/2026/06/{day:02d}/"
                                             f"rollout-2026-06-{day:02d}T10-00-{index:02d}-x{index}.jsonl"),
                                rng.randint(4_000, 20_000))
            files += 1
    for project in range(30):  # Gemini CLI: 30 projects x 100 chats
        for index in range(100):
            total += jsonl_file(rng, home / (f".gemini/tmp/p{project}/chats/"
                                             f"session-2026-05-01T10-{index:02d}-{project:08d}.jsonl"),
                                rng.randint(4_000, 20_000))
            files += 1
    for workspace in range(10):  # VS Code workspace state databases, about 5 MB each
        total += sqlite_file(rng, home / f".config/Code/User/workspaceStorage/{workspace:032x}/state.vscdb", 5_000_000)
        files += 1
    total += sqlite_file(rng, home / ".config/Code/User/globalStorage/state.vscdb", 5_000_000)
    return {"files": files + 1, "bytes": total}


def add_unrelated(home: Path, count: int = 200_000) -> None:
    per_project = 1000
    for project in range(count // per_project // 2):
        for index in range(per_project):
            path = home / f"projects/p{project}/node_modules/pkg{index // 50}/f{index}.js"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("module.exports = 1;\n")
    for index in range(count // 2):
        path = home / f".cache/pip/http/{index % 256:02x}/{index}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"c" * 64)


def measure(command: list[str], env: dict | None = None) -> tuple[float, int, int, float]:
    """Wall time, peak RSS (KiB), exit code and CPU time (user + system, s) of one command."""
    out = subprocess.run([sys.executable, "-c", RUN, *command], capture_output=True, text=True, check=True, env=env)
    wall, rss, code, cpu = out.stdout.split()
    return float(wall), int(rss), int(code), float(cpu)


def aitrail_command(home: Path, output: Path, program: str | None = None) -> list[str]:
    start = [program] if program else [sys.executable, "-m", "aitrail.collector.cli"]
    return [*start, "collect", "--home", str(home), "-o", str(output), "--quiet"]


def before_env(work: Path, revision: str) -> dict:
    """An environment that runs the collector of an earlier commit (its collector/ and catalog/, unpacked)."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", revision], capture_output=True,
                            text=True, check=True).stdout.strip()
    tree = work / f"rev-{commit}"
    if not (tree / "aitrail" / "collector").is_dir():
        (tree / "aitrail").mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "collector", "catalog"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree / "aitrail")], input=archive, check=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)  # found before the installed (editable) aitrail
    return env


def payload_manifest(bundle: Path) -> bytes:
    """manifest-sha256.txt of a bundle: the digest of every stored file."""
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        return reader.read_data("manifest-sha256.txt")


def collected_files(bundle: Path, image: Path | None = None) -> tuple[Path, int]:
    """The files aitrail collected, NUL-separated absolute paths for the baseline, and their number.

    ``image``: the --root the bundle was collected from (source_path is the subject's path below it).
    """
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        records = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
    prefix = os.fsencode(str(image)) if image is not None else b""
    paths = [prefix + os.fsencode(record["source_path"]) for record in records if record["outcome"] == "collected"]
    listing = bundle.with_suffix(".list")
    listing.write_bytes(b"".join(path + b"\0" for path in paths))
    return listing, len(paths)


def baseline(listing: Path, archive: Path) -> tuple[float, int, float]:
    """The floor: `tar --zstd` of the listed files, then `sha256sum` of them; wall, peak RSS (KiB), CPU."""
    tar_wall, tar_rss, _, tar_cpu = measure(["tar", "--zstd", "--null", "-cf", str(archive), "-T", str(listing)])
    sum_wall, sum_rss, _, sum_cpu = measure(["sh", "-c", f"xargs -0 sha256sum < '{listing}' > /dev/null"])
    return tar_wall + sum_wall, max(tar_rss, sum_rss), tar_cpu + sum_cpu


def build(work: Path) -> dict:
    """The two homes (built once into ``work``) and their size."""
    plain, noisy = work / "home-plain", work / "home-noisy"
    if not (work / "built.json").exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        stats = build_home(plain)
        shutil.copytree(plain, noisy, symlinks=True)
        add_unrelated(noisy)
        (work / "built.json").write_text(json.dumps(stats))
    return json.loads((work / "built.json").read_text())


def run(work: Path, repeat: int, before: str | None = None, frozen: str | None = None) -> str:
    stats = build(work)
    plain, noisy = work / "home-plain", work / "home-noisy"
    scratch = Path(tempfile.mkdtemp(dir=work))
    rows: dict[str, list[tuple[float, int, float]]] = {"aitrail": [], "baseline": [], "aitrail-noisy": [],
                                                       "aitrail-posix": []}
    posix_env = dict(os.environ, AITRAIL_PLATFORM="posix")
    old_env = before_env(work, before) if before else None
    if old_env:
        rows["before"] = []
    if frozen:
        rows["aitrail-frozen"] = []
    listing = None
    for attempt in range(repeat + 1):  # the first round warms the page cache and is discarded
        bundle = scratch / f"a{attempt}.tar.zst"
        wall, rss, code, cpu = measure(aitrail_command(plain, bundle))
        assert code == 0, code
        listing = listing or collected_files(bundle)[0]
        floor = baseline(listing, scratch / f"t{attempt}.tar.zst")
        noisy_wall, noisy_rss, code, noisy_cpu = measure(aitrail_command(noisy, scratch / f"n{attempt}.tar.zst"))
        assert code == 0, code
        posix_bundle = scratch / f"p{attempt}.tar.zst"
        posix = measure(aitrail_command(plain, posix_bundle), posix_env)
        assert posix[2] == 0, posix[2]
        assert payload_manifest(posix_bundle) == payload_manifest(bundle), "the POSIX backend stored other bytes"
        if old_env:
            old = measure(aitrail_command(plain, scratch / f"o{attempt}.tar.zst"), old_env)
            assert old[2] == 0, old[2]
        if frozen:
            frozen_bundle = scratch / f"f{attempt}.tar.zst"
            built = measure(aitrail_command(plain, frozen_bundle, frozen))
            assert built[2] == 0, built[2]
            assert payload_manifest(frozen_bundle) == payload_manifest(bundle), "the frozen build stored other bytes"
        if attempt:
            rows["aitrail"].append((wall, rss, cpu))
            rows["baseline"].append(floor)
            rows["aitrail-noisy"].append((noisy_wall, noisy_rss, noisy_cpu))
            rows["aitrail-posix"].append((posix[0], posix[1], posix[3]))
            if old_env:
                rows["before"].append((old[0], old[1], old[3]))
            if frozen:
                rows["aitrail-frozen"].append((built[0], built[1], built[3]))
        for path in scratch.glob("*.tar.zst*"):
            path.unlink()
    shutil.rmtree(scratch)
    return report(stats, rows, repeat, before)


def report(stats: dict, rows: dict, repeat: int, before: str | None = None) -> str:
    median = {name: statistics.median(w for w, _, _ in values) for name, values in rows.items()}
    peak = {name: max(r for _, r, _ in values) for name, values in rows.items()}
    cpu = {name: statistics.median(c for _, _, c in values) for name, values in rows.items()}
    zstd = subprocess.run(["zstd", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Linux {platform.release()}, "
        f"Python {platform.python_version()}, {zstd}",
        f"Data: {stats['files']} agent files, {stats['bytes'] / 1e6:.0f} MB (JSONL + SQLite); "
        "noisy home adds 200,000 unrelated files",
        f"Median of {repeat} warm-cache runs (one discarded warm-up round); CPU time is user + system of the "
        "process tree.",
        "",
        "| run | wall time (s) | CPU time (s) | peak RSS (MB) | vs baseline |",
        "|---|---|---|---|---|",
    ]
    names = {"baseline": "tar --zstd -cf + sha256sum (baseline)", "before": f"aitrail collect at {before}",
             "aitrail": "aitrail collect", "aitrail-noisy": "aitrail collect, +200,000 unrelated files",
             "aitrail-posix": "aitrail collect, POSIX backend (AITRAIL_PLATFORM=posix)",
             "aitrail-frozen": "frozen collector (PyInstaller onedir) collect"}
    for key in ("baseline", "before", "aitrail", "aitrail-posix", "aitrail-frozen", "aitrail-noisy"):
        if key not in rows:
            continue
        ratio = median[key] / median["baseline"]
        lines.append(f"| {names[key]} | {median[key]:.2f} | {cpu[key]:.2f} | {peak[key] / 1024:.0f} | {ratio:.2f}x |")
    lines.append("")
    lines.append("Unrelated files change aitrail's time by "
                 f"{100 * (median['aitrail-noisy'] / median['aitrail'] - 1):+.1f}%; the POSIX backend by "
                 f"{100 * (median['aitrail-posix'] / median['aitrail'] - 1):+.1f}% (same payload digests).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "collect")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also time the collector of this git revision, interleaved")
    parser.add_argument("--frozen", metavar="PROGRAM", help="also time this frozen collector build, interleaved")
    args = parser.parse_args()
    started = time.time()
    print(run(args.work, args.repeat, args.before, args.frozen))
    print(f"\n(benchmark took {time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
