"""One collection run: plan, walk, classify, capture, seal.

Phase 1 walks every target and classifies each match (metadata only: nothing
is opened for reading). Phase 2 reads the files to collect in a fixed order
(location, raw path bytes) and writes them to ``<output>.partial``; the
metadata members, tag manifest and signature follow, then the index, and only
then is the file renamed to its final name and its SHA-256 written beside it.
A run killed at any point leaves only a ``.partial`` file, which never verifies.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field

from aitrail.collector import catalog as catalog_module
from aitrail.collector import outcomes as oc
from aitrail.collector import runinfo
from aitrail.collector.bundle.seal import load_private
from aitrail.collector.bundle.writer import BundleWriter
from aitrail.collector.globs import compile_any
from aitrail.collector.metadata import write_metadata_members
from aitrail.collector.pipeline import capture_all
from aitrail.collector.plan import Home, Planner, Target
from aitrail.collector.walk import Expander, Match, Tree

SQLITE_COMPANIONS = ("-journal", "-shm", "-wal")


class CollectionError(RuntimeError):
    """The run could not produce a bundle (exit 1)."""


@dataclass
class CollectOptions:
    output: str | None
    homes: list[str] = field(default_factory=list)
    all_users: bool = False
    root: str | None = None
    agents: list[str] = field(default_factory=list)
    case_id: str | None = None
    examiner: str | None = None
    notes: str | None = None
    sign_key: str | None = None
    dry_run: bool = False
    max_file_size: int | None = None
    catalog_dir: str | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))
    progress: bool = True
    trace_walk: bool = False  # tests: record every directory the walk opened


@dataclass
class CollectResult:
    entries: list[oc.Entry]
    counts: dict
    mode: str
    homes: list[Home]
    overrides: list
    walk_opened: list[str]
    bundle_path: str | None = None
    bundle_sha256: str | None = None

    @property
    def exit_code(self) -> int:
        return 3 if any(entry.outcome in oc.PARTIAL_OUTCOMES for entry in self.entries) else 0


# -- planning -------------------------------------------------------------------


def _mode_and_homes(options: CollectOptions) -> tuple[str, list[Home]]:
    if options.root:
        return "image-root", runinfo.homes_in_image(options.root)
    if options.homes:
        return "homes", runinfo.homes_from_dirs(options.homes)
    if options.all_users:
        return "all-users", runinfo.homes_of_all_users()
    return "current-user", [runinfo.current_user_home()]


def _plan(options: CollectOptions, catalog, full_catalog, mode: str, homes: list[Home]):
    environ = dict(os.environ) if mode == "current-user" else None
    planner = Planner(catalog=catalog, never_catalog=full_catalog, environ=environ, image_root=options.root,
                      live=mode in ("current-user", "all-users"))
    targets: list[Target] = []
    vetoes: dict[str, list[Target]] = {}
    for home in homes:
        targets.extend(planner.targets_for_home(home))
        for never in planner.never_targets_for_home(home):
            vetoes.setdefault(never.location.label, []).append(never)
    system_base = options.root if mode == "image-root" else ("/" if mode in ("current-user", "all-users") else None)
    if system_base is not None:
        targets.extend(planner.targets_for_system(system_base))
        for never in Planner(full_catalog, full_catalog).targets_for_system(system_base):
            if never.never:
                vetoes.setdefault("system", []).append(never)
    return planner, targets, vetoes


# -- phase 1: walk and classify ---------------------------------------------------


def _walk(targets: list[Target], trace: bool) -> tuple[dict[str, Tree], list[Match]]:
    trees: dict[str, Tree] = {}
    matches: list[Match] = []
    for target in targets:
        label = target.location.label
        tree = trees.get(label)
        if tree is None:
            tree = trees[label] = Tree(target.location, trace=trace)
        matches.extend(Expander(tree).expand(target))
    return trees, matches


def _compile_vetoes(vetoes: dict[str, list[Target]]) -> dict[str, re.Pattern[str]]:
    """One regex per location: a credential glob of any agent matches the path."""
    compiled = {}
    for label, targets in vetoes.items():
        pattern = compile_any(sorted({target.segments for target in targets}))
        if pattern is not None:
            compiled[label] = pattern
    return compiled


def _vetoed(match: Match, vetoes: dict[str, re.Pattern[str]]) -> bool:
    pattern = vetoes.get(match.target.location.label)
    return pattern is not None and pattern.match(match.relpath) is not None


def _classify(match: Match, vetoes, max_file_size: int | None) -> oc.Entry:
    entry = oc.Entry(match.target, match.parts, match.kind, match.meta, notes=[match.note] if match.note else [])
    if match.error is not None:
        entry.error = match.error
        entry.outcome = oc.VANISHED if match.kind == "missing" else _errno_outcome(match.error)
    elif match.excluded_by is not None:
        entry.outcome, entry.reason = oc.EXCLUDED, f"exclude rule {match.excluded_by}"
    elif match.target.never or _vetoed(match, vetoes):
        entry.outcome, entry.reason = oc.NEVER_COLLECT, "credential store: catalogued, never opened"
    elif match.kind in ("file", "symlink"):
        if match.kind == "file" and max_file_size is not None and match.meta.size > max_file_size:
            entry.outcome, entry.reason = oc.TOO_LARGE, f"{match.meta.size} bytes > --max-file-size {max_file_size}"
    else:
        entry.outcome, entry.reason = oc.SPECIAL, f"{match.kind}: recorded from lstat, never opened"
    return entry


def _errno_outcome(error: OSError) -> str:
    import errno as errno_module

    if error.errno in (errno_module.EACCES, errno_module.EPERM):
        return oc.DENIED
    if error.errno == errno_module.ENOENT:
        return oc.VANISHED
    return oc.READ_ERROR


def _add_sqlite_companions(entries: list[oc.Entry], trees: dict[str, Tree]) -> list[oc.Entry]:
    """A SQLite database travels with its -journal, -shm and -wal siblings."""
    extra: list[oc.Entry] = []
    for entry in entries:
        if entry.target.store_def.format != "sqlite" or entry.kind != "file" or entry.outcome:
            continue
        tree = trees[entry.target.location.label]
        for suffix in SQLITE_COMPANIONS:
            parts = entry.parts[:-1] + (entry.parts[-1] + suffix,)
            try:
                meta = tree.lstat(parts)
            except OSError:
                continue
            companion = oc.Entry(entry.target, parts, meta.kind, meta, companion_of=entry.raw_relpath.decode("utf-8", "backslashreplace"))
            if meta.kind not in ("file", "symlink"):
                companion.outcome, companion.reason = oc.SPECIAL, f"{meta.kind}: recorded from lstat, never opened"
            extra.append(companion)
    return entries + extra


def _complete_metadata(entries: list[oc.Entry], trees: dict[str, Tree]) -> None:
    """Entries settled without a read get the full lstat (with birth time) the walk skipped."""
    for entry in entries:
        if entry.outcome and entry.meta is not None:
            try:
                full = trees[entry.target.location.label].lstat(entry.parts, birth=True)
            except OSError:
                continue
            if full.ino == entry.meta.ino:
                entry.meta = full


def _dedupe_and_sort(entries: list[oc.Entry]) -> list[oc.Entry]:
    unique: dict[tuple, oc.Entry] = {}
    for entry in entries:
        unique.setdefault(entry.key, entry)
    return sorted(unique.values(), key=lambda entry: (entry.key, entry.outcome))


# -- the run -----------------------------------------------------------------------


def run(options: CollectOptions) -> CollectResult:
    """Collect (or, with dry_run, only plan and walk). Raises CollectionError for exit 1."""
    started, started_clock = runinfo.utc_now(), time.monotonic()
    full_catalog = catalog_module.load(options.catalog_dir)
    catalog = full_catalog.select(options.agents)
    mode, homes = _mode_and_homes(options)
    if not homes and mode != "image-root":  # an image may hold system stores only
        raise CollectionError("no home directory to collect from")
    signing_key = load_private(options.sign_key) if options.sign_key else None
    planner, targets, vetoes = _plan(options, catalog, full_catalog, mode, homes)
    trees, matches = _walk(targets, options.trace_walk)
    compiled_vetoes = _compile_vetoes(vetoes)
    entries = [_classify(match, compiled_vetoes, options.max_file_size) for match in matches]
    entries = _dedupe_and_sort(_add_sqlite_companions(entries, trees))
    _complete_metadata(entries, trees)
    opened = [f"{label}:{path}" for label, tree in trees.items() for path in tree.stats.opened]
    result = CollectResult(entries, {}, mode, homes, planner.overrides, opened)
    if options.dry_run:
        for entry in entries:
            entry.outcome = entry.outcome or "would_collect"
        _close(trees)
        return result
    partial = options.output + ".partial"
    writer = BundleWriter(partial)
    try:
        spool_dir = os.path.dirname(os.path.abspath(options.output))
        _close(trees)  # phase 2 threads open their own descriptors
        capture_all(entries, writer, spool_dir, options.progress)
        result.counts = oc.count(entries)
        run_meta = {
            "mode": mode, "started_utc": started, "homes": homes, "trees": trees, "overrides": planner.overrides,
            "catalog": catalog, "options": options, "clock_start": started_clock,
        }
        write_metadata_members(writer, entries, result.counts, run_meta, signing_key)
        writer.finish()
    except BaseException:
        writer.close()
        _close(trees)
        raise
    _close(trees)
    os.replace(partial, options.output)
    result.bundle_path = options.output
    result.bundle_sha256 = _write_sidecar_digest(options.output)
    return result


def _close(trees: dict[str, Tree]) -> None:
    for tree in trees.values():
        tree.close()


def _write_sidecar_digest(path: str) -> str:
    import hashlib

    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(4 * 1024 * 1024), b""):
            hasher.update(chunk)
    digest = hasher.hexdigest()
    with open(path + ".sha256", "x", encoding="utf-8") as handle:
        handle.write(f"{digest}  {os.path.basename(path)}\n")
    return digest
