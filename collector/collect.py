"""One collection run: plan, walk, classify, capture, seal.

Phase 1 walks every target and classifies each match (metadata only: nothing
is opened for reading). Phase 2 reads the files to collect in a fixed order
(location, raw path bytes) and writes them to ``<output>.partial``; the
metadata members, tag manifest and signature follow, then the index, and only
then is the file renamed to its final name and its SHA-256 written beside it.
A run killed at any point leaves only a ``.partial`` file, which never verifies.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aitrail.collector import catalog as catalog_module
from aitrail.collector import runinfo
from aitrail.collector.bundle import records as oc
from aitrail.collector.bundle.seal import fingerprint, load_private, one_time_key
from aitrail.collector.bundle.tagfiles import write_metadata_members
from aitrail.collector.bundle.writer import BundleWriter
from aitrail.collector.finding.expand import Expander
from aitrail.collector.finding.plan import Home, Planner, Target
from aitrail.collector.finding.secret_inodes import SecretInodes
from aitrail.collector.finding.vetoes import Vetoes, credential_inodes, inode_veto
from aitrail.collector.finding.walk import Match, Tree
from aitrail.collector.fs.backend import DATALESS_REASON, DatalessRefused
from aitrail.collector.image import homes as image_homes
from aitrail.collector.reading.pipeline import capture_all

SQLITE_COMPANIONS = ("-journal", "-shm", "-wal")


class CollectionError(RuntimeError):
    """The run could not produce a bundle (exit 1)."""


class Interrupted(CollectionError):
    """SIGINT or SIGTERM arrived before the bundle was sealed; the .partial file was removed."""


@dataclass
class CollectOptions:
    """What the examiner asked for (the ``collect`` command line, parsed)."""
    output: str | None
    homes: list[str] = field(default_factory=list)
    all_users: bool = False
    root: str | None = None
    agents: list[str] = field(default_factory=list)
    case_id: str | None = None
    examiner: str | None = None
    notes: str | None = None
    sign_key: str | None = None
    sign: bool = False  # a key made for this collection, in memory only
    dry_run: bool = False
    max_file_size: int | None = None
    max_file_seconds: float | None = 900.0  # how long one large file may take to read; None or 0: no bound
    hostname: str | None = None  # --hostname: the subject's name, stated by the examiner (--root, --home)
    time_zone: str | None = None  # --time-zone: the subject's zone, stated by the examiner (--root, --home)
    catalog_dir: str | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))
    progress: bool = True
    trace_walk: bool = False  # tests: record every directory the walk opened
    # aitrail import (collector/foreign/run.py): the container's hooks around the capture, and its custody record
    foreign: ForeignHooks | None = None


class ForeignHooks:
    """What an import adds to a run over its staging tree (collector/foreign/run.py implements it)."""

    def subject(self, subject: tuple[dict, dict]) -> tuple[dict, dict]:
        """The subject's host and time zone records, completed from the container's own statements."""
        return subject

    def before_capture(self, entries: list[oc.Entry]) -> None:
        """Fill the placeholders the capture will read with the container's bytes."""

    def after_capture(self, entries: list[oc.Entry]) -> None:
        """Give the entries the container's records in place of the placeholders' facts."""

    def custody(self) -> dict:
        """collection.json's ``foreign_custody``."""
        return {}


@dataclass
class CollectResult:
    """What a run found and wrote."""
    entries: list[oc.Entry]
    counts: dict
    mode: str
    homes: list[Home]
    overrides: list
    walk_opened: list[str]
    bundle_path: str | None = None
    bundle_sha256: str | None = None
    signer_fingerprint: str = ""
    signer_kind: str = ""  # "per-collection" or "examiner key"
    subject: tuple[dict, dict] = ({}, {})  # the subject's host and time zone records (collection.json)

    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when every file was read whole, 3 when some changed while read or failed."""
        return 3 if any(entry.outcome in oc.PARTIAL_OUTCOMES for entry in self.entries) else 0


def empty_warning(entries: list[oc.Entry], homes: list[Home], collected: set[str]) -> list[str]:
    """A run that found no agent data says so: it may have run as the wrong user or on the wrong directory."""
    if any(entry.outcome in collected for entry in entries):
        return []
    where = ", ".join(home.path for home in homes) or "the image"
    return [f"no agent data found: nothing the catalog names exists in {where} "
            f"({len(entries)} matches, none collected); check the user, --home or --root"]


# -- planning -------------------------------------------------------------------


SHARED_HOME_FOLDERS = frozenset({"", ".", ".config", ".local", ".Trash", "Documents", "Library", "AppData", "OneDrive"})


def _agent_dirs(catalog) -> tuple[str, ...]:
    """The first component of each home root's path: a home holding one holds agent data.

    Folders every account may have (``.config``, ``Library`` ...) say nothing
    of agents and are left out.
    """
    return tuple(sorted({path.strip("/").split("/")[0] for agent in (catalog.agents if catalog else ())
                         for root in agent.roots if root.scope == "home" for path in root.paths}
                        - SHARED_HOME_FOLDERS))


def _mode_and_homes(options: CollectOptions, catalog=None) -> tuple[str, list[Home]]:
    if options.root:
        try:
            return "image-root", image_homes.homes_in_image(options.root, _agent_dirs(catalog), tuple(options.homes))
        except image_homes.ImageHomeError as exc:
            raise CollectionError(str(exc)) from None
    if options.homes:
        return "homes", runinfo.homes_from_dirs(options.homes)
    if options.all_users:
        return "all-users", runinfo.homes_of_all_users(_agent_dirs(catalog))
    return "current-user", [runinfo.current_user_home()]


def _plan(options: CollectOptions, catalog, full_catalog, mode: str, homes: list[Home]):
    environ = dict(os.environ) if mode == "current-user" else None
    planner = Planner(catalog=catalog, never_catalog=full_catalog, environ=environ, image_root=options.root,
                      live=mode in ("current-user", "all-users"))
    # A home's targets are made when the walk reaches it and let go after: about 4,800 a home (42 agents'
    # globs on every path of their roots), 190 MB for 100 homes when all were made first. The credential
    # globs, a few a home, are kept: the vetoes need every home's.
    batches: list[Callable[[], list[Target]]] = [functools.partial(planner.targets_for_home, home) for home in homes]
    vetoes: dict[str, list[Target]] = {}
    for home in homes:
        for never in planner.never_targets_for_home(home):
            vetoes.setdefault(never.location.label, []).append(never)
    system_base = options.root if mode == "image-root" else ("/" if mode in ("current-user", "all-users") else None)
    if system_base is not None:
        batches.append(functools.partial(planner.targets_for_system, system_base))
        for never in Planner(full_catalog, full_catalog).targets_for_system(system_base):
            if never.never:
                vetoes.setdefault("system", []).append(never)
    return planner, batches, vetoes


# -- phase 1: walk and classify ---------------------------------------------------


def _walk(batches: list[Callable[[], list[Target]]], trace: bool) -> tuple[dict[str, Tree], list[Match]]:
    """Every batch's targets (a home's, the system's) made, expanded by location and let go; the matches kept."""
    trees: dict[str, Tree] = {}
    matches: list[Match] = []
    for batch in batches:
        by_location: dict[str, list[Target]] = {}
        for target in batch():
            by_location.setdefault(target.location.label, []).append(target)
        for label, location_targets in by_location.items():
            tree = trees.get(label)
            if tree is None:
                tree = trees[label] = Tree(location_targets[0].location, trace=trace)
            expander = Expander(tree, location_targets)
            for target in location_targets:
                matches.extend(expander.expand(target))
    return trees, matches


def _classify(match: Match, vetoes: Vetoes, max_file_size: int | None, trees: dict[str, Tree]) -> oc.Entry:
    if match.meta is None and match.kind == "file" and max_file_size is not None and match.error is None:
        _lstat_now(match, trees)  # the walk left a listed file's lstat to the capture; its size is needed here
    entry = oc.Entry(match.target, match.parts, match.kind, match.meta, notes=[match.note] if match.note else [])
    if match.error is not None:
        entry.error = match.error
        entry.outcome = oc.VANISHED if match.kind == "missing" else _errno_outcome(match.error)
    elif match.excluded_by is not None:
        entry.outcome, entry.reason = oc.EXCLUDED, f"exclude rule {match.excluded_by}"
    elif (veto := vetoes.reason(match)) is not None:
        entry.outcome, entry.reason = oc.NEVER_COLLECT, veto
    elif match.kind in ("file", "symlink"):
        if (match.kind == "file" and max_file_size is not None and match.meta is not None
                and match.meta.size > max_file_size):
            entry.outcome, entry.reason = oc.TOO_LARGE, f"{match.meta.size} bytes > --max-file-size {max_file_size}"
    else:
        entry.outcome, entry.reason = oc.SPECIAL, f"{match.kind}: recorded from lstat, never opened"
    return entry


def _lstat_now(match: Match, trees: dict[str, Tree]) -> None:
    """Give a listed file the lstat the walk skipped; a file gone since is left to the capture to record."""
    try:
        meta = trees[match.target.location.label].lstat(match.parts)
    except OSError:
        return
    match.meta, match.kind = meta, meta.kind


def _errno_outcome(error: OSError) -> str:
    import errno as errno_module

    if isinstance(error, DatalessRefused):  # a cloud placeholder directory: not listed, nothing failed
        return oc.NOT_READ_WOULD_DOWNLOAD
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
            companion = oc.Entry(entry.target, parts, meta.kind, meta,
                                 companion_of=entry.raw_relpath.decode("utf-8", "backslashreplace"))
            if meta.kind not in ("file", "symlink"):
                companion.outcome, companion.reason = oc.SPECIAL, f"{meta.kind}: recorded from lstat, never opened"
            extra.append(companion)
    return entries + extra


def _settle_without_capture(entries: list[oc.Entry], trees: dict[str, Tree],
                            inodes: SecretInodes) -> None:
    """A dry run's outcomes: would_collect, or what the capture would decide before opening anything.

    The walk leaves a listed file's lstat, and so the credential-inode veto, to
    the capture, which a dry run does not reach: the lstat is taken here
    (``_complete_metadata``) and the same veto applied to it, so that a hard
    link to a credential is never_collect in a dry run as in a run.
    """
    for entry in entries:
        entry.outcome = entry.outcome or "would_collect"
    _complete_metadata(entries, trees)
    for entry in entries:
        if entry.outcome == "would_collect" and (veto := inode_veto(inodes, entry.meta)) is not None:
            entry.outcome, entry.reason = oc.NEVER_COLLECT, veto
        elif entry.outcome == "would_collect" and entry.meta is not None and entry.meta.dataless:
            entry.outcome, entry.reason = oc.NOT_READ_WOULD_DOWNLOAD, DATALESS_REASON


def _complete_metadata(entries: list[oc.Entry], trees: dict[str, Tree]) -> None:
    """Entries settled without a read get the full lstat (with birth time) the walk skipped.

    A listed regular file has no lstat yet (the walk leaves it to the capture):
    it gets this one. An entry with an lstat keeps it unless this one is of
    the same inode.
    """
    for entry in entries:
        if entry.outcome and entry.error is None and (entry.meta is not None or entry.kind == "file"):
            try:
                full = trees[entry.target.location.label].lstat(entry.parts, birth=True)
            except OSError:
                continue
            if entry.meta is None or full.ino == entry.meta.ino:
                entry.meta = full


def _dedupe_and_sort(entries: list[oc.Entry]) -> list[oc.Entry]:
    unique: dict[tuple, oc.Entry] = {}
    for entry in entries:
        unique.setdefault(entry.key, entry)
    return sorted(unique.values(), key=lambda entry: (entry.key, entry.outcome))


# -- the run -----------------------------------------------------------------------


def run(options: CollectOptions) -> CollectResult:
    """Collect (or, with dry_run, only plan and walk). Raises CollectionError for exit 1."""
    with _fewer_collections():
        return _run(options)


GC_YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def _fewer_collections():
    """Run with the cyclic garbage collector's youngest generation collected every 50,000 allocations, not 700.

    A run allocates some thirty objects per file (metadata, entries, headers),
    almost none in reference cycles, so at the default threshold the collector
    ran about 300 times on 10,000 files (3 to 5% of the main thread's CPU) to
    free nothing; reference counting frees them as before. Restored afterwards.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _run(options: CollectOptions) -> CollectResult:
    started, started_clock = runinfo.utc_now(), time.monotonic()
    full_catalog = catalog_module.load(options.catalog_dir)
    catalog = full_catalog.select(options.agents)
    mode, homes = _mode_and_homes(options, full_catalog)
    if not homes and mode != "image-root":  # an image may hold system stores only
        raise CollectionError("no home directory to collect from")
    subject = runinfo.subject_description(mode, options.root, options.hostname, options.time_zone)
    if options.foreign is not None:
        subject = options.foreign.subject(subject)
    signing_key = load_private(options.sign_key) if options.sign_key else (one_time_key() if options.sign else None)
    planner, batches, vetoes = _plan(options, catalog, full_catalog, mode, homes)
    trees, matches = _walk(batches, options.trace_walk)
    # secrets by inode: below "/" unless an image is collected (a --home dir is on this machine's disks)
    secrets_base = options.root if mode == "image-root" else "/"
    run_vetoes = Vetoes(vetoes, {home.label for home in homes}, credential_inodes(trees, vetoes), secrets_base)
    entries = [_classify(match, run_vetoes, options.max_file_size, trees) for match in matches]
    entries = _dedupe_and_sort(_add_sqlite_companions(entries, trees))
    if options.dry_run:  # nothing is captured: every entry is settled here
        _settle_without_capture(entries, trees, run_vetoes.inodes)
    else:
        _complete_metadata(entries, trees)
    opened = [f"{label}:{path}" for label, tree in trees.items() for path in tree.stats.opened]
    result = CollectResult(entries, {}, mode, homes, planner.overrides, opened, subject=subject)
    if options.dry_run:
        result.warnings = empty_warning(entries, homes, {"would_collect"})
        _close(trees)
        return result
    partial = options.output + ".partial"
    writer = BundleWriter(partial)
    try:
        with _signals_end_the_run():
            spool_dir = os.path.dirname(os.path.abspath(options.output))
            _close(trees)  # phase 2 threads open their own descriptors
            if options.foreign is not None:
                options.foreign.before_capture(entries)
            capture_all(entries, writer, spool_dir, options.progress, run_vetoes.inodes,
                        options.max_file_seconds or None)
            if options.foreign is not None:
                options.foreign.after_capture(entries)
            writer.hash_and_sync_payload()  # on a thread of its own, while the metadata members are made
            result.counts = oc.count(entries)
            result.warnings = empty_warning(entries, homes, {oc.COLLECTED, oc.CHANGED, oc.SYMLINK})
            run_meta = {
                "mode": "import" if options.foreign is not None else mode, "started_utc": started, "homes": homes,
                "trees": trees, "overrides": planner.overrides,
                "catalog": catalog, "options": options, "clock_start": started_clock, "warnings": result.warnings,
                "signer_kind": "examiner key" if options.sign_key else "per-collection", "subject": subject,
                "foreign_custody": options.foreign.custody() if options.foreign is not None else None,
            }
            write_metadata_members(writer, entries, result.counts, run_meta, signing_key)
            _, bundle_digest = writer.finish_and_hash()
            os.replace(partial, options.output)
    except BaseException as exc:
        writer.close()
        _close(trees)
        _remove(partial)  # it never verifies; a leftover one would only stop the next run
        if isinstance(exc, KeyboardInterrupt):
            raise Interrupted("interrupted (SIGINT) before the bundle was sealed; "
                              f"the incomplete {partial} was removed") from None
        raise
    _close(trees)
    result.bundle_path = options.output
    result.bundle_sha256 = _write_sidecar_digest(options.output, bundle_digest)
    if signing_key is not None:
        result.signer_fingerprint = fingerprint(signing_key.public_key())
        result.signer_kind = "examiner key" if options.sign_key else "per-collection"
    return result


@contextlib.contextmanager
def _signals_end_the_run():
    """SIGTERM ends the run like Ctrl-C does (so the .partial file is removed); restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum, frame):
        raise Interrupted("terminated (SIGTERM) before the bundle was sealed; the incomplete .partial file was removed")

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _close(trees: dict[str, Tree]) -> None:
    for tree in trees.values():
        tree.close()


def _write_sidecar_digest(path: str, digest: str) -> str:
    """Write ``<bundle>.sha256`` in sha256sum's format (``sha256sum -c`` checks it)."""
    with open(path + ".sha256", "x", encoding="utf-8") as handle:
        handle.write(f"{digest}  {os.path.basename(path)}\n")
    return digest
