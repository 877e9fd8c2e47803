"""Phase 2: read each file once, in order, and hand its bytes to the bundle writer.

Reading and the bookkeeping happen on this thread; the writer hashes and
compresses packed frames on a thread of its own, so the two overlap on two
cores (files streamed or spooled are hashed here as they are read). Files are
read in the entries' order (location, raw path bytes), so the archive order is
the same whatever the timing. A digest the writer computes is known once the
frame is written: the entries get theirs when the payload's last frame is.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from aitrail.collector.bundle import layout
from aitrail.collector.bundle import records as oc
from aitrail.collector.bundle.layout import IndexEntry
from aitrail.collector.bundle.writer import BundleWriter
from aitrail.collector.finding.secret_inodes import SecretInodes
from aitrail.collector.finding.walk import Tree
from aitrail.collector.reading.capture import Capture, Capturer


class Progress:
    """A line on stderr at most once a second while collecting."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = total, enabled
        self.done = self.bytes = 0
        self._last = time.monotonic()

    def step(self, size: int) -> None:
        """Count one file read; print a line when a second has passed since the last."""
        self.done += 1
        self.bytes += size
        now = time.monotonic()
        if self.enabled and now - self._last >= 1.0:
            self._last = now
            print(f"aitrail: {self.done}/{self.total} files, {self.bytes / 1e6:.1f} MB", file=sys.stderr, flush=True)


@dataclass
class _Job:
    entry: oc.Entry
    member: str
    link_member: str


def capture_all(entries: list[oc.Entry], writer: BundleWriter, spool_dir: str, progress_enabled: bool,
                forbidden: SecretInodes | None = None, file_seconds: float | None = None) -> None:
    """Read every entry still without an outcome and write it to the bundle.

    ``forbidden`` knows the (device, inode) of the secrets (secret_inodes.py):
    a file that turns out to be one of them when opened is never read.
    """
    jobs, duplicates = _plan_jobs(entries)
    progress = Progress(len(jobs), progress_enabled)
    capturers: dict[str, Capturer] = {}
    hashed_by_writer: list[tuple[oc.Entry, IndexEntry]] = []
    try:
        for job in jobs:
            location = job.entry.target.location
            capturer = capturers.get(location.label)
            if capturer is None:
                capturer = Capturer(Tree(location), spool_dir, writer, forbidden, file_seconds)
                capturers[location.label] = capturer
            capture = capturer.capture(job.entry.parts, job.member)
            stored = capture.write_to(writer, job.member, job.link_member)
            if _record(job, capture, stored):
                hashed_by_writer.append((job.entry, stored))
            progress.step(capture.size)
    finally:
        for capturer in capturers.values():
            capturer.tree.close()
    writer.end_frame()  # every payload frame written: the writer's digests are known
    for entry, stored in hashed_by_writer:
        if stored.sha256 is None:  # cannot happen once end_frame has drained every frame; never record a gap
            raise RuntimeError(f"no digest for {stored.name} after its frame was written")
        entry.sha256 = stored.sha256
    for entry, first in duplicates:
        _copy_capture(first, entry)


def _plan_jobs(entries: list[oc.Entry]) -> tuple[list[_Job], list[tuple[oc.Entry, oc.Entry]]]:
    """One job per distinct file; later matches of the same file copy its result."""
    jobs: list[_Job] = []
    duplicates: list[tuple[oc.Entry, oc.Entry]] = []
    first_by_file: dict[tuple, oc.Entry] = {}
    for entry in entries:
        if entry.outcome:
            continue
        file_key = (entry.target.location.label, entry.key[1])
        first = first_by_file.get(file_key)
        if first is not None:
            duplicates.append((entry, first))
            continue
        first_by_file[file_key] = entry
        jobs.append(_Job(entry, *layout.payload_and_link_names(file_key[0], file_key[1])))  # key[1]: raw parts
    return jobs, duplicates


def _record(job: _Job, result: Capture, stored: IndexEntry | None) -> bool:
    """Copy a capture's result to its entry; True when the digest is still to come from the writer."""
    entry = job.entry
    entry.outcome, entry.error, entry.notes = result.outcome, result.error, entry.notes + result.notes
    if result.outcome == oc.NEVER_COLLECT:
        entry.reason = result.notes[-1] if result.notes else "credential"
    elif result.reason:
        entry.reason = result.reason
    entry.meta = result.before or entry.meta
    entry.after, entry.attempts, entry.link_target = result.after, result.attempts, result.link_target
    entry.holes = result.holes
    if result.before is not None:
        entry.kind = result.before.kind
    if result.outcome in (oc.COLLECTED, oc.CHANGED) and stored is not None and stored.type == "file":
        entry.member, entry.sha256, entry.stored_size = job.member, stored.sha256, result.size
        entry.atime_protection = result.atime_protection
        return stored.sha256 is None
    if result.outcome in (oc.COLLECTED, oc.CHANGED) and result.sha256:  # streamed: written while read
        entry.member, entry.sha256, entry.stored_size = job.member, result.sha256, result.size
        entry.atime_protection = result.atime_protection
    elif result.outcome == oc.SYMLINK:
        entry.member = job.link_member
    return False


def _copy_capture(first: oc.Entry, entry: oc.Entry) -> None:
    for name in ("outcome", "error", "meta", "after", "attempts", "link_target", "member", "sha256",
                 "stored_size", "atime_protection", "kind", "holes", "reason"):
        setattr(entry, name, getattr(first, name))
    entry.notes = entry.notes + first.notes
    entry.duplicate_of = f"{first.target.store} (the same file, matched by another store)"
