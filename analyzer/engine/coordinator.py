"""``aitrail analyze``: verify, parse every collected file, deduplicate, sort, write.

Order of work:

0. open the bundle (index, collection.json, files.jsonl, each checked against
   its limits and schema) and check its structure (tag manifest, signature
   policy: collector/verify/structure.py), synchronously: a bundle that fails
   it is refused before any parser runs (unless forced);
1. parse the secondary stores (logs, side tables, backups); their rendered rows
   are spooled to disk and only their 8-byte dedup keys stay in memory, handed
   to the workers (analyzer/engine/secondary.py);
2. verify the bundle while workers (one per core) parse the primary stores,
   each handing back sorted runs of rendered rows (in memory for a batch
   within its share of runs.MEMORY_BYTES, else run files in the analyzer's
   temporary directory), which secondary keys its rows matched, and what
   verifying the frames it decompressed found (each frame is verified once:
   by the first batch that parses a member of it, else by this, the
   coordinator's, process, which makes every other check meanwhile);
3. refuse the bundle if verification failed (unless forced; a forced run puts
   a ``verify:`` row first and says so in the summary) before anything is
   written;
4. drop the secondary rows that a primary row matched, keep the others as
   ``origin=secondary``, and write everything as one sorted timeline: ordered
   in memory when all runs fit in runs.MEMORY_BYTES, else each worker merges
   one key range of all the run files and the ranges are copied into the
   output in order (analyzer/engine/sorted_runs.py).

Memory stays bounded by the run size and MEMORY_BYTES, not the bundle size. Forked workers
(analyzer/engine/forkpool.py) inherit the coordinator's decoded Bundle (index and
sources) and its list of batches, and only open the file again; under spawn
(a ProcessPoolExecutor, where there is no fork) each worker decodes it once.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

from aitrail.analyzer.engine import batches as batches_module
from aitrail.analyzer.engine import bundle_rows, forkpool, verifying
from aitrail.analyzer.engine import secondary as secondary_module
from aitrail.analyzer.engine import sorted_runs as runs_module
from aitrail.analyzer.engine import worker as worker_module
from aitrail.analyzer.engine.absences import known_absences
from aitrail.analyzer.engine.bundle_digest import FileDigest
from aitrail.analyzer.engine.secondary import dedup_key
from aitrail.analyzer.engine.sorted_runs import Held, Parked, Run, Stored
from aitrail.analyzer.engine.tally import Tally
from aitrail.analyzer.engine.unparsed import unparsed_sources
from aitrail.analyzer.engine.worker import BatchResult, StoreStats, Worker, parser_row_kind
from aitrail.analyzer.integrity import sessions as integrity_sessions
from aitrail.analyzer.outputs import export
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.rows import COLUMNS, Draft, Provenance, stamp
from aitrail.collector.bundle.reader import BundleFormatError
from aitrail.collector.verify import RateLimiter, sha256_of_file
from aitrail.collector.verify.frames import FrameFindings
from aitrail.collector.verify.structure import SignaturePolicy, Structure, check_structure

MERGE_SPLIT_BYTES = 8 * 1024 * 1024
# ordinals of the bundle-wide rows stamped with a file's provenance: past any file's own rows, so their
# event ids and sort keys never equal one of that file's
BUNDLE_ROW_ORDINALS = 1 << 48  # below this the final merge is not worth splitting
_AGENT = COLUMNS.index("agent")
_STORE = COLUMNS.index("store")
_ORIGIN = COLUMNS.index("origin")
_TURN = COLUMNS.index("turn_type")
_SESSION = COLUMNS.index("session_id")


class Unreadable(Exception):
    """The bundle cannot be opened at all (no trailer, bad index, unsafe member names)."""


class SameBundleTwice(ValueError):
    """Two arguments name the same bundle (same SHA-256): its rows would be counted twice."""


class NotVerified(Exception):
    """The bundle failed verification and the run was not forced."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class AnalyzeOptions:
    """What the examiner asked of ``aitrail analyze``."""

    bundle: str
    output: str
    format: str = "csv"
    agents: list[str] = field(default_factory=list)
    force: bool = False
    jobs: int | None = None
    progress: bool = True
    public_key: str | None = None
    require_signature: bool = False
    more_bundles: list[str] = field(default_factory=list)  # analyze B1 B2 ...: the others, merged in
    # the SHA-256 of a bundle file the caller has just verified, without a problem (aitrail report): a
    # file with this digest is not verified a second time; any other file is verified as always
    verified_sha256: str | None = None
    # the bundle's SHA-256 already being computed (analyzer/engine/bundle_digest.py: the command line starts it
    # before the analyzer's imports); None: the run starts it as it opens the bundle
    digesting: FileDigest | None = None

    @property
    def bundles(self) -> list[str]:
        """Every bundle of the run, as given."""
        return [self.bundle, *self.more_bundles]

    @property
    def to_stdout(self) -> bool:
        """True for ``-o -``."""
        return self.output == "-"

    @property
    def policy(self) -> SignaturePolicy:
        """The signature policy verify applies (pinned key, signature required)."""
        return SignaturePolicy(self.public_key, self.require_signature)


@dataclass
class AnalyzeResult:
    """What a run wrote and found: row count, verification, per-store statistics."""

    rows: int
    verified: bool
    problems: list[str]
    stores: dict[tuple[str, str], StoreStats]
    not_parsed: list[dict]  # every collected file no parser read (analyzer/engine/unparsed.py), with its bundle
    signature: str = ""
    warnings: list[str] = field(default_factory=list)
    runs: list[Run | Held | Stored] = field(default_factory=list)  # sorted runs not merged yet (one bundle of several)
    tally: Tally = field(default_factory=Tally)
    bundles: list[dict] = field(default_factory=list)  # per bundle: path, sha256, host, case, verified, rows
    absences: list[dict] = field(default_factory=list)  # what the agents present keep nowhere on disk (catalog)

    def summary(self, options: AnalyzeOptions) -> dict:
        """The summary as ``--summary`` writes it."""
        return {
            "bundle": options.bundle,
            "bundles": self.bundles,
            "output": options.output,
            "format": options.format,
            "verified": self.verified,
            "verification_problems": self.problems,
            "signature": self.signature,
            "rows": self.rows,
            **self.tally.as_record(),
            "stores": [stats.as_record() for _, stats in sorted(self.stores.items())],
            "not_parsed": self.not_parsed,
            "known_absences": self.absences,
        }


# -- coordinator side ------------------------------------------------------------------------


def _progress(options: AnalyzeOptions, message: str) -> None:
    if options.progress:
        print(f"aitrail: {message}", file=sys.stderr, flush=True)


def analyze(options: AnalyzeOptions) -> AnalyzeResult:
    """Verify and parse; nothing is written unless the bundle verified (or the run is forced).

    The structure (index, metadata, tag manifest, signature policy) is checked
    first; a bundle that fails it is refused before any parser runs.
    """
    with tempfile.TemporaryDirectory(prefix="aitrail-analyze-") as temp_dir:
        several = len(options.bundles) > 1
        # several bundles are ordered by digest first; one is hashed while it is opened (None: not hashed yet)
        ordered: list[tuple[str | None, str]] = _ordered_bundles(options.bundles) if several else [
            (None, options.bundle)]
        results = []
        for number, (digest, path) in enumerate(ordered):
            one = dataclasses.replace(options, bundle=path, more_bundles=[])
            directory = os.path.join(temp_dir, f"bundle-{number}")
            os.mkdir(directory)
            try:
                results.append(_analyze_bundle(one, directory, digest))
            except NotVerified as exc:
                named = [f"{path}: {problem}" for problem in exc.problems] if several else exc.problems
                raise NotVerified(named) from exc
            _within_memory(results, temp_dir)
        _progress(options, "writing the timeline to " + ("stdout" if options.to_stdout else options.output))
        count = _merge(options, [run for result in results for run in result.runs], temp_dir)
        return _combined(results, count, several)


def _within_memory(results: list[AnalyzeResult], temp_dir: str) -> None:
    """Each bundle may hold MEMORY_BYTES of runs; the bundles before the last are written out once together past it.

    Twenty bundles analyzed at once held twenty shares of memory until the merge.
    """
    runs = [run for result in results for run in result.runs]
    if len(results) < 2 or sum(runs_module.memory_cost(run) for run in runs) <= runs_module.MEMORY_BYTES:
        return
    for number, result in enumerate(results):
        directory = os.path.join(temp_dir, f"spilled-{len(results)}-{number}")
        os.mkdir(directory)
        result.runs = runs_module.written_out(result.runs, directory)


def _ordered_bundles(paths: list[str]) -> list[tuple[str, str]]:
    """(SHA-256, path) of every bundle, by digest: the output does not depend on the order given."""
    seen: dict[str, str] = {}
    for path in paths:
        digest = _bundle_digest(path)
        if digest in seen:
            raise SameBundleTwice(f"{path} is the same bundle as {seen[digest]} (SHA-256 {digest}); give it once")
        seen[digest] = path
    return sorted((digest, path) for digest, path in seen.items())


def _bundle_digest(path: str, hashing: FileDigest | None = None) -> str:
    """A bundle file's SHA-256 (``hashing``'s, when a thread computes it); Unreadable, naming the file, on failure."""
    try:
        return hashing.result() if hashing is not None else sha256_of_file(path)
    except OSError as exc:
        raise Unreadable(f"{path}: {exc}") from exc


def _analyze_bundle(options: AnalyzeOptions, temp_dir: str, digest: str | None) -> AnalyzeResult:
    """One bundle's sorted runs (not merged yet), statistics and verification; ``digest`` None: hashed here."""
    hashing = None
    if digest is None:  # a digest the command line started is taken only for this very path
        started = options.digesting
        hashing = started if started is not None and started.path == options.bundle else FileDigest(options.bundle)
    try:
        worker = Worker.open(options.bundle, temp_dir, options.format, check_digests=options.force,
                             bundle_sha256=digest or "")
    except (BundleFormatError, OSError) as exc:
        if hashing is not None:
            _bundle_digest(options.bundle, hashing)  # an unreadable file is named so first, as when hashed first
        raise Unreadable(str(exc)) from exc
    if hashing is not None:
        try:
            digest = _bundle_digest(options.bundle, hashing)
        except Unreadable:
            worker.close()
            raise
        worker.set_bundle_sha256(digest)  # before any row is rendered or any process forked
    worker_module.install(worker)  # forked pool processes inherit it
    try:
        structure = _check_structure_first(options, worker)
        result = _analyze(options, worker, structure)
        result.signature, result.warnings = structure.signature, structure.warnings
        context = worker.context
        result.bundles = [{"bundle": options.bundle, "sha256": digest, "host": context["hostname"],
                           "case_id": context["case_id"], "verified": result.verified,
                           "signature": result.signature, "rows": sum(s.rows for s in result.stores.values())}]
        return result
    finally:
        worker_module.install(None)
        worker.close()


def _combined(results: list[AnalyzeResult], count: int, several: bool) -> AnalyzeResult:
    """One result for the run: rows written, every bundle's problems (named by bundle when several)."""
    if not several:
        result = results[0]
        result.rows, result.runs = count, []
        return result
    stores: dict[tuple[str, str], StoreStats] = {}
    not_parsed: list[dict] = []
    problems, warnings = [], []
    for result in results:
        path = result.bundles[0]["bundle"]
        problems += [f"{path}: {problem}" for problem in result.problems]
        warnings += [f"{path}: {warning}" for warning in result.warnings]
        for key, stats in result.stores.items():
            stores.setdefault(key, StoreStats(stats.agent, stats.store)).merge(stats)
        not_parsed += result.not_parsed
    tally = Tally()
    for result in results:
        tally.merge(result.tally)
    signatures = "; ".join(f"{result.bundles[0]['bundle']}: {result.signature}" for result in results)
    absences = sorted({json.dumps(item, sort_keys=True) for result in results for item in result.absences})
    return AnalyzeResult(count, all(result.verified for result in results), problems, stores, not_parsed,
                         signatures, warnings, bundles=[result.bundles[0] for result in results], tally=tally,
                         absences=[json.loads(item) for item in absences])


def _check_structure_first(options: AnalyzeOptions, worker: Worker):
    """The structural check, before any parser; refuse (unless forced) a bundle that fails it."""
    bundle = worker.bundle
    structure = check_structure(bundle.reader, options.policy)
    problems = structure.problems + [problem for problem in bundle.problems if problem not in structure.problems]
    if problems and not options.force:
        raise NotVerified(problems)
    for warning in structure.warnings:
        _progress(options, f"WARNING: {warning}")
    return structure


def _analyze(options: AnalyzeOptions, worker: Worker, structure: Structure) -> AnalyzeResult:
    bundle = worker.bundle
    stats: dict[tuple[str, str], StoreStats] = {}
    unparsed = unparsed_sources(bundle, worker.registry, options.agents)
    not_parsed = [{"bundle": options.bundle, **item.as_record()} for item in unparsed]
    wanted = [source for source in bundle.sources if source.parser and not source.companion_of
              and (not options.agents or source.agent in options.agents)]
    for source in wanted:
        stats.setdefault((source.agent, source.store), StoreStats(source.agent, source.store)).files += 1
    parsable = [source for source in wanted if source.parser in worker.registry]
    secondary = [source for source in parsable if source.origin == "secondary"]
    primary = [source for source in parsable if source.origin != "secondary"]

    _progress(options, f"verifying, and parsing {len(secondary)} secondary and {len(primary)} primary files")
    # frames verified from the bytes the secondary parse decompressed; None: this run does not verify
    checked: dict[int, FrameFindings] | None = {} if verifying.must_verify(options, worker) else None
    spool = _parse_secondary(worker, secondary, stats, checked)
    worker.keys = spool.keys()
    notes, worker.sessions = worker.sessions, integrity_sessions.SessionNotes()  # the secondary parse's
    tally = Tally()
    report, runs, matched = _parse_primary(options, worker, primary, stats, tally, checked, structure, notes)
    if not report.ok and not options.force:
        raise NotVerified(report.problems)
    render = worker.render
    forced = [_forced_row(report.problems, bundle.problems)] if not report.ok else []
    forced += bundle_rows.integrity_rows(worker, notes, unparsed, stats)
    for key, row in forced:
        tally.add(row[_AGENT], row[_SESSION], key)
    runs.extend(secondary_module.kept_runs(
        itertools.chain(secondary_module.kept_rows(spool, matched, stats, tally),
                        ((key, render(row).encode("utf-8")) for key, row in forced)),
        lambda items, number: runs_module.write_run(items, os.path.join(worker.temp_dir,
                                                                         f"run-secondary-{number}.bin"))))
    absences = known_absences(source.agent for source in bundle.sources
                              if not options.agents or source.agent in options.agents)
    return AnalyzeResult(0, report.ok, report.problems, stats, not_parsed, runs=runs, tally=tally, absences=absences)


def _merge(options: AnalyzeOptions, runs: list[Run | Held | Stored], temp_dir: str) -> int:
    """Write the sorted runs as one timeline: in key order at once when they fit, else merged from files.

    The file merge takes one key range per worker when there is work to share.
    """
    header = export.header(options.format).encode("utf-8")
    total = sum(runs_module.memory_cost(run) for run in runs)
    if total <= runs_module.MEMORY_BYTES:
        if options.to_stdout:
            count = runs_module.write_in_memory(sys.stdout.buffer, header, runs)
            sys.stdout.buffer.flush()
            return count
        with open(options.output, "xb") as target:
            return runs_module.write_in_memory(target, header, runs)
    runs = runs_module.written_out(runs, temp_dir)
    jobs = options.jobs or os.cpu_count() or 1
    cuts = runs_module.boundaries(runs, jobs) if jobs > 1 and total > MERGE_SPLIT_BYTES else []
    ranges = runs_module.ranges(cuts)
    parts = [os.path.join(temp_dir, f"part-{number}.bin") for number in range(len(ranges))]
    if len(ranges) == 1:
        counts = [runs_module.merge_range(runs, None, None, parts[0])]
    else:
        import concurrent.futures  # the merge of run files alone needs a pool of this kind: imported here

        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context()) as pool:
            futures = [pool.submit(runs_module.merge_range, runs, low, high, part)
                       for (low, high), part in zip(ranges, parts, strict=True)]
            counts = [future.result() for future in futures]
    if options.to_stdout:
        runs_module.concatenate_to(sys.stdout.buffer, header, parts)
    else:
        runs_module.concatenate(options.output, header, parts)
    return sum(counts)


def _pool_context():
    # fork: workers start at once and inherit this process's modules and decoded bundle (it runs
    # no threads here); spawn where fork does not exist.
    import multiprocessing

    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def _parse_secondary(worker: Worker, sources: list[Source], stats,
                     checked: dict[int, FrameFindings] | None) -> secondary_module.Spool:
    """Parse the secondary sources; spool their rendered rows to disk, keep only dedup keys in memory.

    ``checked``: filled with the findings of every frame this parse decompresses, verified from its bytes.
    """
    spool = secondary_module.Spool(os.path.join(worker.temp_dir, "secondary.spool"))
    if checked is None:
        _spool_secondary(worker, sources, stats, spool)
    else:
        with verifying.checking_frames(worker.bundle.reader, checked):
            _spool_secondary(worker, sources, stats, spool)
    return spool


def _spool_secondary(worker: Worker, sources: list[Source], stats, spool: secondary_module.Spool) -> None:
    for source in sorted(sources, key=lambda item: item.member):
        rows, kinds = 0, {"bad": 0, "unpaired": 0, "integrity": 0}
        for key, row in worker.rows(source):
            spool.add(dedup_key(row), (row[_AGENT], row[_STORE], row[_SESSION]), row[_ORIGIN] == "secondary", key,
                      worker.render(row).encode("utf-8"), (row[_AGENT], row[_TURN]))
            rows += 1
            kind = parser_row_kind(row)
            if kind is not None:
                kinds[kind] += 1
        stats[(source.agent, source.store)].add_rows(rows, kinds["bad"], kinds["unpaired"], kinds["integrity"])


def _parse_primary(options: AnalyzeOptions, worker: Worker, sources: list[Source], stats, tally: Tally,
                   checked: dict[int, FrameFindings] | None, structure: Structure,
                   notes: integrity_sessions.SessionNotes):
    """Parse the primary sources while the bundle is verified, each in worker processes when there are cores.

    The batches verify the frames they parse first (not ``checked`` by the
    secondary parse already); this process verifies the others meanwhile, on
    the bundle it has already decoded (analyzer/engine/verifying.py). No output is
    written until the report is complete: the caller refuses a failed bundle then.
    ``checked`` is None when this run does not verify (its caller just did). ``structure``: the
    structural check made before parsing, which the verification takes instead of making it again.
    """
    jobs = options.jobs or os.cpu_count() or 1
    sized = batches_module.batches(sources, jobs, batches_module.frame_finder(worker.bundle.reader))
    batches = [batch for batch, _ in sized]
    # what a batch may hand back in memory, by its share of the input: together within runs.MEMORY_BYTES
    total = sum(size for _, size in sized)
    holds = [runs_module.MEMORY_BYTES * size // max(1, total) for _, size in sized]
    verify = checked is not None
    owned = verifying.frames_to_verify(worker.bundle.reader, batches, checked) if verify else [[] for _ in batches]

    def begin_verify():  # in this process, meanwhile: all but the frames the batches or the secondary parse check
        return verifying.begin(options, worker, owned, checked, _progress_callback(options),
                               structure) if verify else None

    limiter = RateLimiter()
    if jobs <= 1 or len(batches) <= 1:
        verification = begin_verify()
        results: list[BatchResult] = []
        for number, batch in enumerate(batches):
            results.append(worker.parse_batch(batch, number, holds[number], owned[number]))
            _batch_progress(options, limiter, results, len(batches))
    else:
        gc.freeze()  # forked workers share the decoded bundle; a collection there must not touch (copy) its pages
        try:
            tasks = [(batch, number, holds[number], owned[number]) for number, batch in enumerate(batches)]
            initargs = (options.bundle, worker.temp_dir, worker.keys, options.format, options.force,
                        worker.context["bundle_sha256"])
            pool_kind = forkpool.ForkPool if hasattr(os, "fork") else forkpool.SpawnPool
            with pool_kind(jobs, worker_module.run_batch, tasks, worker_module.init_process, initargs) as pool:
                verification = begin_verify()
                results = _gather(options, pool.results(), len(tasks), limiter)
        finally:
            gc.unfreeze()
    report = verifying.complete(options, worker, verification, results, checked)
    runs: list[Run | Held | Stored] = []
    matched: set[int] = set()
    for result in results:
        runs.extend(result.runs)
        tally.merge(result.tally)
        matched |= result.matched
        notes.merge(result.sessions)
        for count in result.counts:
            stats[(count.agent, count.store)].add_rows(count.rows, count.bad, count.unpaired, count.integrity)
    return report, runs, matched


def _progress_callback(options: AnalyzeOptions):
    return (lambda text: _progress(options, text)) if options.progress else None


def _gather(options: AnalyzeOptions, finished: Iterable, count: int, limiter: RateLimiter) -> list[BatchResult]:
    """The batches' results in order, their parked runs' keys read back as they come; a progress line meanwhile.

    ``finished``: (number, result) as batches finish, None when a second passes without one.
    """
    results: list[BatchResult | None] = [None] * count
    for item in finished:
        if item is not None:
            number, result = item
            result.runs = [runs_module.unpark(run) if isinstance(run, Parked) else run for run in result.runs]
            results[number] = result
        _batch_progress(options, limiter, [result for result in results if result is not None], count)
    missing = [number for number, result in enumerate(results) if result is None]
    if missing:  # a pool hands back every batch or raises: never a timeline short of a batch
        raise RuntimeError(f"batches {missing} came back from no worker")
    return results


def _batch_progress(options: AnalyzeOptions, limiter: RateLimiter, done: list, total: int) -> None:
    if options.progress and limiter.ready():
        files = sum(len(result.counts) for result in done)
        rows = sum(count.rows for result in done for count in result.counts)
        written = sum(runs_module.run_size(run) for result in done for run in result.runs) / 1e6
        _progress(options, f"parsed {len(done)}/{total} batches of primary files: {files} files, {rows} rows, "
                           f"{written:.1f} MB of rendered rows")


def _forced_row(problems: list[str], unreadable: list[str]) -> tuple:
    text = ("verify: this bundle FAILED verification and was analyzed only because --force was given; "
            "rows may come from damaged or altered members: " + "; ".join(problems))
    if unreadable:
        text += "; not analyzable: " + "; ".join(unreadable)
    _, row = stamp(Draft("system", text, "bundle", timestamp_source="none"), Provenance("", "", "", "", "primary"), 0)
    return b"", row  # the empty key sorts before every other
