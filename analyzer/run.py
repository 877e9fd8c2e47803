"""``aitrail analyze``: verify, parse every collected file, deduplicate, sort, write.

Order of work:

1. parse the secondary stores (logs, side tables, backups); their rendered rows
   are spooled to disk and only their 8-byte dedup keys stay in memory, handed
   to the workers (analyzer/secondary.py);
2. verify the bundle, in a worker process, while other workers (one per core)
   parse the primary stores, each writing sorted runs of rendered rows to the
   analyzer's temporary directory and reporting which secondary keys its rows
   matched;
3. refuse the bundle if verification failed (unless forced; a forced run puts
   a ``verify:`` row first and says so in the summary) before anything is
   written;
4. drop the secondary rows that a primary row matched, keep the others as
   ``origin=secondary``, and merge everything into one sorted timeline: each
   worker merges one key range of all the runs, and the ranges are copied
   into the output in order (analyzer/runs.py).

Memory stays bounded by the run size, not the bundle size.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import itertools
import multiprocessing
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterator

from aitrail.analyzer import export
from aitrail.analyzer import runs as runs_module
from aitrail.analyzer import secondary as secondary_module
from aitrail.analyzer.runs import Run
from aitrail.analyzer.bundle import Bundle, Source
from aitrail.analyzer.dispatch import parse_source
from aitrail.analyzer.registry import parsers
from aitrail.analyzer.rows import COLUMNS, stamp, Draft, Provenance
from aitrail.collector.bundle.reader import BundleFormatError
from aitrail.collector.verify import verify

RUN_BYTES = 16 * 1024 * 1024  # rendered text a worker holds before it writes a sorted run
MERGE_SPLIT_BYTES = 8 * 1024 * 1024  # below this the final merge is not worth splitting
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


def dedup_key(row: tuple) -> int:
    """Agent, turn type and whitespace-normalized text: what 'the same row' means across sources.

    64 bits of SHA-256: 8 bytes a key in memory; two distinct rows among 3
    million share one with probability about 2.4e-7.
    """
    text = " ".join(row[_TEXT].split())
    return int.from_bytes(hashlib.sha256(f"{row[_AGENT]}\0{row[_TURN]}\0{text}".encode()).digest()[:8], "big")


# -- worker side ------------------------------------------------------------------------

_WORKER: dict = {}


def _init_worker(bundle_path: str, temp_dir: str, secondary_keys: frozenset, format_name: str = "csv",
                 check_digests: bool = True) -> None:
    _WORKER["bundle"] = Bundle(bundle_path, temp_dir=temp_dir, check_digests=check_digests)
    _WORKER["registry"] = parsers()
    _WORKER["cache"] = {}
    _WORKER["keys"] = secondary_keys
    _WORKER["temp"] = temp_dir
    _WORKER["render"] = export.renderer(format_name)


def _parse_batch(members: list[tuple[str, str]], batch: int) -> tuple[list[Run], list[tuple], set]:
    """Parse some sources; write sorted runs of rendered lines; return the runs, stats, matched keys."""
    bundle: Bundle = _WORKER["bundle"]
    render = _WORKER["render"]
    keys = _WORKER["keys"]
    # a file matched by two stores is two sources: key by (member, store)
    by_member = {(source.member, source.store): source for source in bundle.sources}
    runs: list[Run] = []
    stats: list[tuple] = []
    matched: set = set()
    pending: list[tuple[bytes, bytes]] = []
    held = 0
    for member in members:
        source = by_member[member]
        rows = bad = 0
        for key, row in parse_source(bundle, source, _WORKER["registry"][source.parser], _WORKER["cache"]):
            rows += 1
            bad += row[_TEXT].startswith("parser:")
            if keys:
                digest = dedup_key(row)
                if digest in keys:
                    matched.add(digest)
            line = render(row).encode("utf-8")
            pending.append((key, line))
            held += len(line)
            if held >= RUN_BYTES:
                runs.append(_write_run(pending, batch, len(runs)))
                pending, held = [], 0
        stats.append((source.agent, source.store, rows, bad))
    if pending:
        runs.append(_write_run(pending, batch, len(runs)))
    return runs, stats, matched


def _write_run(items: list[tuple[bytes, bytes]], batch: int, number: int) -> Run:
    return runs_module.write_run(items, os.path.join(_WORKER["temp"], f"run-{os.getpid()}-{batch}-{number}.bin"))


# -- coordinator side ------------------------------------------------------------------------


def _batches(sources: list[Source], count: int) -> list[list[tuple[str, str]]]:
    """Contiguous runs of sources in bundle order (members of one frame stay together), of similar size."""
    ordered = sorted(sources, key=lambda item: item.order)
    total = sum(max(1, source.size) for source in ordered)
    target = total / max(1, count)
    batches: list[list[str]] = [[]]
    size = 0
    for source in ordered:
        if size >= target and len(batches) < count:
            batches.append([])
            size = 0
        batches[-1].append((source.member, source.store))
        size += max(1, source.size)
    return [batch for batch in batches if batch]


def _progress(options: AnalyzeOptions, message: str) -> None:
    if options.progress:
        print(f"aitrail: {message}", file=sys.stderr, flush=True)


def analyze(options: AnalyzeOptions) -> AnalyzeResult:
    """Verify and parse; nothing is written unless the bundle verified (or the run is forced)."""
    with tempfile.TemporaryDirectory(prefix="aitrail-analyze-") as temp_dir:
        try:
            _init_worker(options.bundle, temp_dir, frozenset(), options.format, check_digests=options.force)
        except (BundleFormatError, OSError) as exc:
            raise Unreadable(str(exc)) from exc
        try:
            return _analyze(options, temp_dir)
        finally:
            _WORKER["bundle"].close()
            _WORKER.clear()


def _analyze(options: AnalyzeOptions, temp_dir: str) -> AnalyzeResult:
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

    _progress(options, f"verifying, and parsing {len(secondary)} secondary and {len(primary)} primary files")
    spool = _parse_secondary(secondary, stats)
    keys = spool.keys()
    report, runs, matched = _parse_primary(options, primary, keys, temp_dir, stats)
    runs = list(runs)
    if not report.ok and not options.force:
        raise NotVerified(report.problems)
    render = export.renderer(options.format)
    forced = [_forced_row(report.problems, bundle.problems)] if not report.ok else []
    runs.extend(secondary_module.kept_runs(
        itertools.chain(_kept_secondary(spool, matched, stats),
                        ((key, render(row).encode("utf-8")) for key, row in forced)),
        lambda items, number: runs_module.write_run(items, os.path.join(temp_dir, f"run-secondary-{number}.bin"))))
    _progress(options, f"writing {options.output}")
    count = _merge(options, runs, temp_dir)
    return AnalyzeResult(count, report.ok, report.problems, stats, not_parsed)


def _merge(options: AnalyzeOptions, runs: list[Run], temp_dir: str) -> int:
    """Merge the sorted runs into the output, one key range per worker when there is work to share."""
    jobs = options.jobs or os.cpu_count() or 1
    total = sum(os.path.getsize(run.path) for run in runs)
    cuts = runs_module.boundaries(runs, jobs) if jobs > 1 and total > MERGE_SPLIT_BYTES else []
    ranges = runs_module.ranges(cuts)
    parts = [os.path.join(temp_dir, f"part-{number}.bin") for number in range(len(ranges))]
    if len(ranges) == 1:
        counts = [runs_module.merge_range(runs, None, None, parts[0])]
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method)) as pool:
            futures = [pool.submit(runs_module.merge_range, runs, low, high, part)
                       for (low, high), part in zip(ranges, parts)]
            counts = [future.result() for future in futures]
    runs_module.concatenate(options.output, export.header(options.format).encode("utf-8"), parts)
    return sum(counts)


def _parse_secondary(sources: list[Source], stats) -> secondary_module.Spool:
    """Parse the secondary sources; spool their rendered rows to disk, keep only dedup keys in memory."""
    spool = secondary_module.Spool(os.path.join(_WORKER["temp"], "secondary.spool"))
    bundle, registry, cache, render = _WORKER["bundle"], _WORKER["registry"], _WORKER["cache"], _WORKER["render"]
    for source in sorted(sources, key=lambda item: item.member):
        entry = stats[(source.agent, source.store)]
        for key, row in parse_source(bundle, source, registry[source.parser], cache):
            spool.add(dedup_key(row), (row[_AGENT], row[_STORE]), row[_ORIGIN] == "secondary", key,
                      render(row).encode("utf-8"))
            entry.rows += 1
            entry.bad_records += row[_TEXT].startswith("parser:")
    return spool


def _kept_secondary(spool: secondary_module.Spool, matched: set, stats) -> Iterator[tuple[bytes, bytes]]:
    """The spooled secondary rows no primary row matched, as (sort key, line); counts kept and dropped."""
    for item in spool.replay():
        entry = stats[item.stats]
        if item.dedup in matched:
            entry.secondary_dropped += 1
            entry.rows -= 1
        else:
            entry.secondary_kept += 1 if item.secondary else 0
            yield item.key, item.line


def _parse_primary(options: AnalyzeOptions, sources: list[Source], keys: frozenset, temp_dir: str, stats):
    """Parse the primary sources while the bundle is verified, each in worker processes when there are cores.

    Verification runs in a pool worker of its own, beside the parsing workers:
    no output is written until its result is known (the caller refuses a
    failed bundle then), and it keeps an otherwise idle core busy.
    """
    jobs = options.jobs or os.cpu_count() or 1
    batches = _batches(sources, jobs * 4 if len(sources) > 1 else 1)
    runs: list[Run] = []
    matched: set = set()
    if jobs <= 1 or len(batches) <= 1:
        report = verify(options.bundle)
        _WORKER["keys"] = keys
        results = [_parse_batch(batch, number) for number, batch in enumerate(batches)]
    else:
        # fork: workers start at once and inherit this process's modules (it runs no threads
        # here); spawn where fork does not exist.
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        with concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs + 1, mp_context=context, initializer=_init_worker,
                initargs=(options.bundle, temp_dir, keys, options.format, options.force)) as pool:
            verifying = pool.submit(verify, options.bundle)
            futures = [pool.submit(_parse_batch, batch, number) for number, batch in enumerate(batches)]
            results = [future.result() for future in futures]
            report = verifying.result()
    for batch_runs, batch_stats, batch_matched in results:
        runs.extend(batch_runs)
        matched |= batch_matched
        for agent, store, rows, bad in batch_stats:
            entry = stats[(agent, store)]
            entry.rows += rows
            entry.bad_records += bad
    return report, runs, matched


def _forced_row(problems: list[str], unreadable: list[str]) -> tuple:
    text = ("verify: this bundle FAILED verification and was analyzed only because --force was given; "
            "rows may come from damaged or altered members: " + "; ".join(problems))
    if unreadable:
        text += "; not analyzable: " + "; ".join(unreadable)
    _, row = stamp(Draft("system", text, "bundle", timestamp_source="none"), Provenance("", "", "", "", "primary"), 0)
    return b"", row  # the empty key sorts before every other
