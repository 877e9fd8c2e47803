"""One parsing process: the bundle, the parsers, their join caches, and what it hands back.

The coordinator builds one Worker (it parses the secondary stores itself);
forked pool processes inherit it and only open the bundle file again
(``Worker.in_this_process``), so the index and sources are decoded once per
run; under spawn each process builds its own. A batch of sources comes back
as a BatchResult: the sorted runs it wrote (or parked), its per-source row
counts, the secondary dedup keys its rows matched, and what verifying the
frames it was given found (analyzer/engine/verifying.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import cast

from aitrail.analyzer.engine import sorted_runs as runs_module
from aitrail.analyzer.engine import verifying
from aitrail.analyzer.engine.dispatch import parse_source
from aitrail.analyzer.engine.registry import Parser, parsers, session_links, wanted_prefixes
from aitrail.analyzer.engine.secondary import KeySet, dedup_key
from aitrail.analyzer.engine.sorted_runs import ROW_OVERHEAD, Held, Parked, Run
from aitrail.analyzer.engine.tally import Tally
from aitrail.analyzer.integrity.rules import PREFIX as INTEGRITY_PREFIX
from aitrail.analyzer.integrity.sessions import SessionNotes
from aitrail.analyzer.outputs import export
from aitrail.analyzer.view.bundle import Bundle, Source
from aitrail.analyzer.view.rows import COLUMNS, UNPAIRED_PREFIXES
from aitrail.collector.verify.frames import FrameFindings

RUN_BYTES = 16 * 1024 * 1024  # rendered text a worker holds before it writes a sorted run
_TEXT = COLUMNS.index("text")
_AGENT = COLUMNS.index("agent")
_SESSION = COLUMNS.index("session_id")
_TURN = COLUMNS.index("turn_type")


@dataclass
class StoreStats:
    """What the analyzer did with one store: files, rows, bad records, unpaired calls, secondary rows kept and dropped.

    ``bad_records`` counts the ``parser:`` rows of damaged or unreadable
    records; ``unpaired`` those of a call without its result or a result
    without its call (rows.UNPAIRED_PREFIXES): an incomplete conversation in
    a sound file.
    """

    agent: str
    store: str
    files: int = 0
    rows: int = 0
    bad_records: int = 0
    unpaired: int = 0
    secondary_kept: int = 0
    secondary_dropped: int = 0
    integrity: int = 0  # ``integrity:`` rows (analyzer/integrity/)

    def add_rows(self, rows: int, bad: int, unpaired: int = 0, integrity: int = 0) -> None:
        """Count rows parsed from one file (``bad`` damaged-record rows, ``unpaired`` unpaired-call rows, ...)."""
        self.rows += rows
        self.bad_records += bad
        self.unpaired += unpaired
        self.integrity += integrity

    def secondary_outcome(self, dropped: bool, secondary: bool) -> None:
        """Count one spooled secondary row: dropped (a primary row has it) or kept."""
        if dropped:
            self.secondary_dropped += 1
            self.rows -= 1
        elif secondary:
            self.secondary_kept += 1

    def merge(self, other: StoreStats) -> None:
        """Add another bundle's counts of the same store."""
        for name in ("files", "rows", "bad_records", "unpaired", "secondary_kept", "secondary_dropped", "integrity"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_record(self) -> dict:
        """The statistics as the summary JSON records them."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class SourceCount:
    """Rows one source gave, for its store's statistics."""

    agent: str
    store: str
    rows: int
    bad: int
    unpaired: int = 0
    integrity: int = 0


@dataclass
class BatchResult:
    """What a worker hands back for one batch of sources."""

    runs: list[Run | Held | Parked] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    counts: list[SourceCount] = field(default_factory=list)
    matched: set[int] = field(default_factory=set)
    frames: dict[int, FrameFindings] = field(default_factory=dict)  # frame offset -> what verifying it found
    sessions: SessionNotes = field(default_factory=SessionNotes)  # sessions named and held (integrity rules)


class _AnyTurn:
    """Every turn type (secondary keys whose kinds are not known)."""

    def __contains__(self, turn: object) -> bool:
        return True


def _keyed_turns(keys: KeySet | None, agent: str) -> frozenset | _AnyTurn | None:
    """The turn types whose rows of ``agent`` may match a secondary key; None when none can."""
    if not keys:
        return None
    if keys.kinds is None:
        return _AnyTurn()
    turns = frozenset(turn for kind_agent, turn in keys.kinds if kind_agent == agent)
    return turns or None


def parser_row_kind(row: tuple) -> str | None:
    """The kind of a row the statistics count apart: ``bad``, ``unpaired``, ``integrity``, else None.

    ``bad``: a damaged or unreadable record; ``unpaired``: a call or result alone; ``integrity``: a finding.
    """
    text = row[_TEXT]
    if not text.startswith("parser:"):
        return "integrity" if text.startswith(INTEGRITY_PREFIX) else None
    return "unpaired" if text.startswith(UNPAIRED_PREFIXES) else "bad"


class Worker:
    """The state one parsing process keeps for the whole run."""

    def __init__(self, bundle: Bundle, temp_dir: str, format_name: str = "csv", keys: KeySet | None = None,
                 bundle_sha256: str = ""):
        self.bundle = bundle
        self.temp_dir = temp_dir
        # only the agent packages this bundle's files need (forked workers inherit them)
        prefixes = wanted_prefixes(source.parser for source in bundle.sources)
        self.registry: dict[str, Parser] = parsers(prefixes)
        links = session_links(prefixes)
        self.naming = frozenset(links)  # parsers whose rows name sessions, and those whose rows hold them
        self.holding = frozenset(holder for holders in links.values() for holder in holders)
        self.sessions = SessionNotes()  # what this process's parses noted, handed back with each batch
        self.cache: dict = {}  # join tables, shared by the parsers of this process
        self.keys: KeySet | None = keys  # secondary dedup keys, once the secondary stores are parsed
        self.format_name = format_name
        # every row's trailing host, case_id and bundle_sha256 columns come from here
        self.context = export.bundle_context(bundle.collection, bundle_sha256)
        self.render: Callable[[tuple], str] = export.renderer(format_name, self.context)
        self.pid = os.getpid()

    @classmethod
    def open(cls, bundle_path: str, temp_dir: str, format_name: str = "csv", check_digests: bool = True,
             bundle_sha256: str = "") -> Worker:
        """Decode the bundle (index, metadata, sources) and make a worker over it."""
        bundle = Bundle(bundle_path, temp_dir=temp_dir, check_digests=check_digests)
        return cls(bundle, temp_dir, format_name, bundle_sha256=bundle_sha256)

    def set_bundle_sha256(self, digest: str) -> None:
        """The bundle file's digest, once known: every row's bundle_sha256 column, and what verify compares."""
        self.context["bundle_sha256"] = digest
        self.render = export.renderer(self.format_name, self.context)

    def in_this_process(self) -> Worker:
        """After a fork: the same decoded bundle, with a file handle and join cache of this process's own."""
        if self.pid != os.getpid():
            self.bundle.reopen()
            self.cache = {}
            self.pid = os.getpid()
        return self

    def close(self) -> None:
        """Close the bundle (and its temporary SQLite copies)."""
        self.bundle.close()

    def rows(self, source: Source) -> Iterator[tuple[bytes, tuple]]:
        """(sort key, row) for every row of one source, crash rows included."""
        parser_id = cast(str, source.parser)  # planned: parsed
        notes = self.sessions
        sessions = notes.name if parser_id in self.naming else notes.hold if parser_id in self.holding else None
        return parse_source(self.bundle, source, self.registry[parser_id], self.cache, sessions)

    def parse_batch(self, members: list[tuple[str, str]], batch: int, hold_bytes: int = RUN_BYTES,
                    frames: Collection[int] = ()) -> BatchResult:
        """Parse some sources; hand back sorted runs of rendered rows; note which secondary keys matched.

        A batch whose rendered rows stay under ``hold_bytes`` comes back as one
        run in memory; otherwise runs of RUN_BYTES go to files as they fill.
        ``frames``: offsets of the frames this batch verifies (collector/verify/frames.py),
        each from its bytes as soon as a parse here decompresses it; a frame
        no parse read is decompressed for its check at the end.
        """
        result = BatchResult()
        self.sessions = result.sessions
        reader, to_check = self.bundle.reader, set(frames)
        with verifying.checking_frames(reader, result.frames, to_check):
            self._parse_members(members, batch, hold_bytes, result)
        verifying.check_rest(reader, to_check, result.frames)
        return result

    def _parse_members(self, members: list[tuple[str, str]], batch: int, hold_bytes: int,
                       result: BatchResult) -> None:
        pending: list[tuple[bytes, bytes]] = []
        held = lines = 0  # memory the pending rows take (runs.memory_cost's measure), and their lines' bytes
        render, keys, tally = self.render, self.keys, result.tally
        sessions = tally.sessions
        spill_at = max(hold_bytes, RUN_BYTES)  # a batch held whole, or runs of RUN_BYTES once it cannot be
        for member, store in members:
            source = self.bundle.source_for(member, store)  # a file matched by two stores is two sources
            rows = bad = unpaired = integrity = 0
            session, in_session = "", 0  # rows of a file come session by session: counted per stretch
            turns = _keyed_turns(keys, source.agent)
            for key, row in self.rows(source):
                rows += 1
                if row[_TEXT].startswith("parser:"):  # parser_row_kind, inline: this loop runs once per row
                    if row[_TEXT].startswith(UNPAIRED_PREFIXES):
                        unpaired += 1
                    else:
                        bad += 1
                elif row[_TEXT].startswith(INTEGRITY_PREFIX):
                    integrity += 1
                if turns is not None and row[_TURN] in turns:  # only a row of a keyed kind can match a key
                    digest = dedup_key(row)
                    if keys is not None and digest in keys:
                        result.matched.add(digest)
                line = render(row).encode("utf-8")
                if row[_SESSION] != session:
                    if in_session:
                        sessions[(source.agent, session)] += in_session
                    session, in_session = row[_SESSION], 0
                in_session += 1
                pending.append((key, line))
                lines += len(line)
                held += len(line) + len(key) + ROW_OVERHEAD
                if held >= spill_at:
                    result.runs.append(self._write_run(pending, batch, len(result.runs), tally))
                    pending, held, lines = [], 0, 0
            if in_session:
                sessions[(source.agent, session)] += in_session
            result.counts.append(SourceCount(source.agent, source.store, rows, bad, unpaired, integrity))
        if pending and (result.runs or held > hold_bytes):
            result.runs.append(self._write_run(pending, batch, len(result.runs), tally))
        elif pending:  # the whole batch stayed under hold_bytes: it goes back in memory, never to disk
            result.runs.append(runs_module.hold(pending, lines))
            tally.cover(pending)

    def _write_run(self, items: list[tuple[bytes, bytes]], batch: int, number: int, tally: Tally) -> Run:
        run = runs_module.write_run(items, os.path.join(self.temp_dir, f"run-{os.getpid()}-{batch}-{number}.bin"))
        tally.cover(items)  # sorted by write_run
        return run


# -- process pool entry points --------------------------------------------------------

_CURRENT: Worker | None = None  # this process's worker (the coordinator's, inherited by a fork)


def current() -> Worker:
    """This process's worker."""
    if _CURRENT is None:
        raise RuntimeError("no worker in this process")
    return _CURRENT


def install(worker: Worker | None) -> None:
    """Make ``worker`` this process's worker (the coordinator does, before forking)."""
    global _CURRENT
    _CURRENT = worker


def init_process(bundle_path: str, temp_dir: str, keys: KeySet, format_name: str = "csv",
                 check_digests: bool = True, bundle_sha256: str = "") -> None:
    """Pool initializer: reuse the inherited worker after a fork, or build one (spawn)."""
    inherited = _CURRENT
    if inherited is not None and inherited.bundle.path == bundle_path:
        worker = inherited.in_this_process()
    else:
        worker = Worker.open(bundle_path, temp_dir, format_name, check_digests, bundle_sha256)
    worker.keys = keys
    install(worker)


def run_batch(members: list[tuple[str, str]], batch: int, hold_bytes: int = RUN_BYTES,
              frames: Collection[int] = ()) -> BatchResult:
    """Pool task: parse one batch in this process's worker (and verify its frames); its held run goes parked."""
    worker = current()
    result = worker.parse_batch(members, batch, hold_bytes, frames)
    result.runs = [runs_module.park(run, os.path.join(worker.temp_dir, f"parked-{batch}-{number}.bin"))
                   if isinstance(run, Held) else run for number, run in enumerate(result.runs)]
    return result
