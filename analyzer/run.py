"""``aitrail analyze``: verify, parse every collected file, deduplicate, sort, write.

Order of work:

0. open the bundle (index, collection.json, files.jsonl, each checked against
   its limits and schema) and check its structure (tag manifest, signature
   policy: collector/verify_structure.py), synchronously: a bundle that fails
   it is refused before any parser runs (unless forced);
1. parse the secondary stores (logs, side tables, backups); their rendered rows
   are spooled to disk and only their 8-byte dedup keys stay in memory, handed
   to the workers (analyzer/secondary.py);
2. verify the bundle, in this (the coordinator's) process, while workers (one
   per core) parse the primary stores, each writing sorted runs of rendered rows to the
   analyzer's temporary directory and reporting which secondary keys its rows
   matched;
3. refuse the bundle if verification failed (unless forced; a forced run puts
   a ``verify:`` row first and says so in the summary) before anything is
   written;
4. drop the secondary rows that a primary row matched, keep the others as
   ``origin=secondary``, and merge everything into one sorted timeline: each
   worker merges one key range of all the runs, and the ranges are copied
   into the output in order (analyzer/runs.py).

Memory stays bounded by the run size, not the bundle size. Forked workers
inherit the coordinator's decoded Bundle (index and sources) and only open
the file again; under spawn each worker decodes it once.
"""

from __future__ import annotations

import concurrent.futures
import gc
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
from aitrail.collector.verify import RateLimiter, verify
from aitrail.collector.verify_structure import SignaturePolicy, check_structure

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
    public_key: str | None = None
    require_signature: bool = False

    @property
    def to_stdout(self) -> bool:
        return self.output == "-"

    @property
    def policy(self) -> SignaturePolicy:
        return SignaturePolicy(self.public_key, self.require_signature)


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
    signature: str = ""
    warnings: list[str] = field(default_factory=list)

    def summary(self, options: AnalyzeOptions) -> dict:
        return {
            "bundle": options.bundle,
            "output": options.output,
            "format": options.format,
            "verified": self.verified,
            "verification_problems": self.problems,
            "signature": self.signature,
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


def _init_worker(bundle_path: str, temp_dir: str, secondary_keys: "secondary_module.KeySet", format_name: str = "csv",
                 check_digests: bool = True) -> None:
    inherited = _WORKER.get("bundle")
    if inherited is not None and inherited.path == bundle_path and _WORKER.get("pid") != os.getpid():
        inherited.reopen()  # forked: the coordinator's decoded bundle, with a file handle of our own
    else:
        _WORKER["bundle"] = Bundle(bundle_path, temp_dir=temp_dir, check_digests=check_digests)
    _WORKER["pid"] = os.getpid()
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
    runs: list[Run] = []
    stats: list[tuple] = []
    matched: set = set()
    pending: list[tuple[bytes, bytes]] = []
    held = 0
    for member in members:
        source = bundle.source_for(*member)  # (member, store): a file matched by two stores is two sources
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
    """Verify and parse; nothing is written unless the bundle verified (or the run is forced).

    The structure (index, metadata, tag manifest, signature policy) is checked
    first; a bundle that fails it is refused before any parser runs.
    """
    with tempfile.TemporaryDirectory(prefix="aitrail-analyze-") as temp_dir:
        try:
            _init_worker(options.bundle, temp_dir, frozenset(), options.format, check_digests=options.force)
        except (BundleFormatError, OSError) as exc:
            raise Unreadable(str(exc)) from exc
        try:
            structure = _check_structure_first(options)
            result = _analyze(options, temp_dir)
            result.signature, result.warnings = structure.signature, structure.warnings
            return result
        finally:
            _WORKER["bundle"].close()
            _WORKER.clear()


def _check_structure_first(options: AnalyzeOptions):
    """The structural check, before any parser; refuse (unless forced) a bundle that fails it."""
    bundle: Bundle = _WORKER["bundle"]
    structure = check_structure(bundle.reader, options.policy)
    problems = structure.problems + [problem for problem in bundle.problems if problem not in structure.problems]
    if problems and not options.force:
        raise NotVerified(problems)
    for warning in structure.warnings:
        _progress(options, f"WARNING: {warning}")
    return structure


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
    _progress(options, "writing the timeline to " + ("stdout" if options.to_stdout else options.output))
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
    header = export.header(options.format).encode("utf-8")
    if options.to_stdout:
        runs_module.concatenate_to(sys.stdout.buffer, header, parts)
    else:
        runs_module.concatenate(options.output, header, parts)
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


def _parse_primary(options: AnalyzeOptions, sources: list[Source], keys: "secondary_module.KeySet", temp_dir: str, stats):
    """Parse the primary sources while the bundle is verified, each in worker processes when there are cores.

    Verification runs in this process, beside the parsing workers, on the
    bundle it has already decoded: no output is written until its result is
    known (the caller refuses a failed bundle then), the coordinator would
    otherwise only wait, and no extra process holds a copy of the index.
    """
    jobs = options.jobs or os.cpu_count() or 1
    batches = _batches(sources, jobs * 4 if len(sources) > 1 else 1)
    runs: list[Run] = []
    matched: set = set()
    limiter = RateLimiter()
    if jobs <= 1 or len(batches) <= 1:
        report = verify(options.bundle, options.public_key, options.require_signature, reader=_WORKER["bundle"].reader,
                        progress=_progress_callback(options))
        _WORKER["keys"] = keys
        results = []
        for number, batch in enumerate(batches):
            results.append(_parse_batch(batch, number))
            _batch_progress(options, limiter, results, len(batches))
    else:
        # fork: workers start at once and inherit this process's modules (it runs no threads
        # here); spawn where fork does not exist.
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        gc.freeze()  # forked workers share the decoded bundle; a collection there must not touch (copy) its pages
        try:
            with concurrent.futures.ProcessPoolExecutor(
                    max_workers=jobs, mp_context=context, initializer=_init_worker,
                    initargs=(options.bundle, temp_dir, keys, options.format, options.force)) as pool:
                futures = [pool.submit(_parse_batch, batch, number) for number, batch in enumerate(batches)]
                # verify here, on the coordinator's reader: it would otherwise wait idle, and a worker
                # of its own would hold a private copy of every index entry it touches
                report = verify(options.bundle, options.public_key, options.require_signature,
                                reader=_WORKER["bundle"].reader, progress=_progress_callback(options))
                results = _gather(options, futures, limiter)
        finally:
            gc.unfreeze()
    for batch_runs, batch_stats, batch_matched in results:
        runs.extend(batch_runs)
        matched |= batch_matched
        for agent, store, rows, bad in batch_stats:
            entry = stats[(agent, store)]
            entry.rows += rows
            entry.bad_records += bad
    return report, runs, matched


def _progress_callback(options: AnalyzeOptions):
    return (lambda text: _progress(options, text)) if options.progress else None


def _gather(options: AnalyzeOptions, futures: list, limiter: RateLimiter) -> list:
    """The batches' results in order, with a progress line at most once a second meanwhile."""
    pending = set(futures)
    done: list = []
    while pending:
        finished, pending = concurrent.futures.wait(pending, timeout=1.0,
                                                    return_when=concurrent.futures.FIRST_COMPLETED)
        done.extend(finished)
        _batch_progress(options, limiter, done, len(futures))
    return [future.result() for future in futures]


def _batch_progress(options: AnalyzeOptions, limiter: RateLimiter, done: list, total: int) -> None:
    if options.progress and limiter.ready():
        _progress(options, f"parsed {len(done)}/{total} batches of primary files")


def _forced_row(problems: list[str], unreadable: list[str]) -> tuple:
    text = ("verify: this bundle FAILED verification and was analyzed only because --force was given; "
            "rows may come from damaged or altered members: " + "; ".join(problems))
    if unreadable:
        text += "; not analyzable: " + "; ".join(unreadable)
    _, row = stamp(Draft("system", text, "bundle", timestamp_source="none"), Provenance("", "", "", "", "primary"), 0)
    return b"", row  # the empty key sorts before every other
