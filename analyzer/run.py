"""``aitrail analyze``: verify, parse every collected file, deduplicate, sort, write.

Order of work:

1. verify the bundle (refuse it if damaged, unless forced; a forced run puts
   a ``verify:`` row first in the timeline and says so in the summary);
2. parse the secondary stores (logs, side tables, backups); their rows are few
   and stay in memory, and their dedup keys are handed to the workers;
3. parse the primary stores in worker processes (one per core), each writing
   sorted runs of rows to the analyzer's temporary directory and reporting
   which secondary keys its rows matched;
4. drop the secondary rows that a primary row matched, keep the others as
   ``origin=secondary``, and merge everything into one sorted timeline.

Memory stays bounded by the run size, not the bundle size.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import heapq
import multiprocessing
import os
import pickle
import sys
import tempfile
from dataclasses import dataclass, field

from aitrail.analyzer import export
from aitrail.analyzer.bundle import Bundle, Source
from aitrail.analyzer.dispatch import parse_source
from aitrail.analyzer.registry import parsers
from aitrail.analyzer.rows import COLUMNS, stamp, Draft, Provenance
from aitrail.collector.bundle.reader import BundleFormatError
from aitrail.collector.verify import verify

RUN_ROWS = 100_000
_TEXT = COLUMNS.index("text")
_AGENT = COLUMNS.index("agent")
_TURN = COLUMNS.index("turn_type")
_STORE = COLUMNS.index("store")
_ORIGIN = COLUMNS.index("origin")


class Unreadable(Exception):
    """The bundle cannot be opened at all (no trailer, bad index, unsafe member names)."""


class NotVerified(Exception):
    """The bundle failed verification and the run was not forced."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class AnalyzeOptions:
    bundle: str
    output: str
    format: str = "csv"
    agents: list[str] = field(default_factory=list)
    force: bool = False
    jobs: int | None = None
    progress: bool = True


@dataclass
class StoreStats:
    agent: str
    store: str
    files: int = 0
    rows: int = 0
    bad_records: int = 0
    secondary_kept: int = 0
    secondary_dropped: int = 0

    def as_record(self) -> dict:
        return dict(self.__dict__)


@dataclass
class AnalyzeResult:
    rows: int
    verified: bool
    problems: list[str]
    stores: dict[tuple[str, str], StoreStats]
    not_parsed: dict[tuple[str, str], int]

    def summary(self, options: AnalyzeOptions) -> dict:
        return {
            "bundle": options.bundle,
            "output": options.output,
            "format": options.format,
            "verified": self.verified,
            "verification_problems": self.problems,
            "rows": self.rows,
            "stores": [stats.as_record() for _, stats in sorted(self.stores.items())],
            "not_parsed": [{"store": store, "parser": parser, "files": count}
                           for (store, parser), count in sorted(self.not_parsed.items())],
        }


def dedup_key(row: tuple) -> bytes:
    """Agent, turn type and whitespace-normalized text: what 'the same row' means across sources."""
    text = " ".join(row[_TEXT].split())
    return hashlib.sha256(f"{row[_AGENT]}\0{row[_TURN]}\0{text}".encode()).digest()[:16]


# -- worker side ------------------------------------------------------------------------

_WORKER: dict = {}


def _init_worker(bundle_path: str, temp_dir: str, secondary_keys: frozenset) -> None:
    _WORKER["bundle"] = Bundle(bundle_path, temp_dir=temp_dir)
    _WORKER["registry"] = parsers()
    _WORKER["cache"] = {}
    _WORKER["keys"] = secondary_keys
    _WORKER["temp"] = temp_dir


def _parse_batch(members: list[str], batch: int) -> tuple[list[str], list[tuple], set]:
    """Parse some sources; write sorted runs; return run paths, per-file stats and matched keys."""
    bundle: Bundle = _WORKER["bundle"]
    by_member = {source.member: source for source in bundle.sources}
    runs: list[str] = []
    stats: list[tuple] = []
    matched: set = set()
    pending: list[tuple] = []
    for member in members:
        source = by_member[member]
        rows = bad = 0
        for key, row in parse_source(bundle, source, _WORKER["registry"][source.parser], _WORKER["cache"]):
            rows += 1
            bad += row[_TEXT].startswith("parser:")
            if _WORKER["keys"]:
                digest = dedup_key(row)
                if digest in _WORKER["keys"]:
                    matched.add(digest)
            pending.append((key, row))
            if len(pending) >= RUN_ROWS:
                runs.append(_write_run(pending, batch, len(runs)))
                pending = []
        stats.append((source.agent, source.store, rows, bad))
    if pending:
        runs.append(_write_run(pending, batch, len(runs)))
    return runs, stats, matched


def _write_run(rows: list[tuple], batch: int, number: int) -> str:
    rows.sort(key=lambda item: item[0])
    path = os.path.join(_WORKER["temp"], f"run-{os.getpid()}-{batch}-{number}.pickle")
    with open(path, "xb") as handle:
        pickler = pickle.Pickler(handle, protocol=pickle.HIGHEST_PROTOCOL)
        for item in rows:
            pickler.dump(item)
    return path


def _read_run(path: str):
    with open(path, "rb") as handle:
        unpickler = pickle.Unpickler(handle)
        while True:
            try:
                yield unpickler.load()
            except EOFError:
                return


# -- coordinator side ------------------------------------------------------------------------


def _batches(sources: list[Source], count: int) -> list[list[str]]:
    """Split sources into about ``count`` batches of similar byte size (largest first)."""
    batches: list[list[str]] = [[] for _ in range(max(1, count))]
    sizes = [0] * len(batches)
    for source in sorted(sources, key=lambda item: (-item.size, item.member)):
        smallest = sizes.index(min(sizes))
        batches[smallest].append(source.member)
        sizes[smallest] += max(1, source.size)
    return [batch for batch in batches if batch]


def _progress(options: AnalyzeOptions, message: str) -> None:
    if options.progress:
        print(f"aitrail: {message}", file=sys.stderr, flush=True)


def analyze(options: AnalyzeOptions) -> AnalyzeResult:
    report = verify(options.bundle)
    if not report.ok and not options.force:
        raise NotVerified(report.problems)
    with tempfile.TemporaryDirectory(prefix="aitrail-analyze-") as temp_dir:
        try:
            _init_worker(options.bundle, temp_dir, frozenset())
        except (BundleFormatError, OSError) as exc:
            raise Unreadable(str(exc)) from exc
        return _analyze(options, report.ok, report.problems, temp_dir)


def _analyze(options: AnalyzeOptions, verified: bool, problems: list[str], temp_dir: str) -> AnalyzeResult:
    registry = parsers()
    bundle: Bundle = _WORKER["bundle"]
    stats: dict[tuple[str, str], StoreStats] = {}
    not_parsed: dict[tuple[str, str], int] = {}
    wanted = [source for source in bundle.sources if source.parser and not source.companion_of
              and (not options.agents or source.agent in options.agents)]
    for source in wanted:
        stats.setdefault((source.agent, source.store), StoreStats(source.agent, source.store)).files += 1
        if source.parser not in registry:
            not_parsed[(source.store, source.parser)] = not_parsed.get((source.store, source.parser), 0) + 1
    parsable = [source for source in wanted if source.parser in registry]
    secondary = [source for source in parsable if source.origin == "secondary"]
    primary = [source for source in parsable if source.origin != "secondary"]

    _progress(options, f"parsing {len(secondary)} secondary and {len(primary)} primary files")
    secondary_rows = _parse_secondary(secondary, stats)
    keys = frozenset(dedup_key(row) for _, row in secondary_rows)
    runs, matched = _parse_primary(options, primary, keys, temp_dir, stats)
    kept = []
    for key, row in secondary_rows:
        entry = stats[(row[_AGENT], row[_STORE])]
        if dedup_key(row) in matched:
            entry.secondary_dropped += 1
            entry.rows -= 1
        else:
            entry.secondary_kept += 1 if row[_ORIGIN] == "secondary" else 0
            kept.append((key, row))
    kept.sort(key=lambda item: item[0])
    streams = [iter(kept)] + [_read_run(path) for path in runs]
    if not verified:
        streams.insert(0, iter([_forced_row(problems, bundle.problems)]))
    _progress(options, f"writing {options.output}")
    count = export.write(options.output, options.format, (row for _, row in heapq.merge(*streams, key=lambda item: item[0])))
    bundle.close()
    _WORKER.clear()
    return AnalyzeResult(count, verified, problems, stats, not_parsed)


def _parse_secondary(sources: list[Source], stats) -> list[tuple]:
    rows: list[tuple] = []
    bundle, registry, cache = _WORKER["bundle"], _WORKER["registry"], _WORKER["cache"]
    for source in sorted(sources, key=lambda item: item.member):
        entry = stats[(source.agent, source.store)]
        for key, row in parse_source(bundle, source, registry[source.parser], cache):
            rows.append((key, row))
            entry.rows += 1
            entry.bad_records += row[_TEXT].startswith("parser:")
    return rows


def _parse_primary(options: AnalyzeOptions, sources: list[Source], keys: frozenset, temp_dir: str, stats):
    jobs = options.jobs or os.cpu_count() or 1
    batches = _batches(sources, jobs * 4 if len(sources) > 1 else 1)
    runs: list[str] = []
    matched: set = set()
    if jobs <= 1 or len(batches) <= 1:
        _WORKER["keys"] = keys
        results = [_parse_batch(batch, number) for number, batch in enumerate(batches)]
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                                                    initargs=(options.bundle, temp_dir, keys)) as pool:
            futures = [pool.submit(_parse_batch, batch, number) for number, batch in enumerate(batches)]
            results = [future.result() for future in futures]
    for batch_runs, batch_stats, batch_matched in results:
        runs.extend(batch_runs)
        matched |= batch_matched
        for agent, store, rows, bad in batch_stats:
            entry = stats[(agent, store)]
            entry.rows += rows
            entry.bad_records += bad
    return runs, matched


def _forced_row(problems: list[str], unreadable: list[str]) -> tuple:
    text = ("verify: this bundle FAILED verification and was analyzed only because --force was given; "
            "rows may come from damaged or altered members: " + "; ".join(problems))
    if unreadable:
        text += "; not analyzable: " + "; ".join(unreadable)
    _, row = stamp(Draft("system", text, "bundle", timestamp_source="none"), Provenance("", "", "", "", "primary"), 0)
    return (-1,), row
