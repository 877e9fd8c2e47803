"""Earlier versions of a database from its write-ahead log: a rewritten row's older values, as of each commit.

Some agents keep a conversation in one row and rewrite it whole on every turn
(Amazon Q's ``conversations`` row per directory, Void's thread blob and Kilo
Code's ``taskHistory`` in a ``state.vscdb``). The live database holds only the
last version; a SQLite ``-wal`` that has not been restarted holds every page
written since its last restart, one frame per page write, and a frame whose
header gives the database size is a commit. The database as of commit *k* is
the main file read through the WAL's frames up to *k*: SQLite itself reads a
WAL only up to its last valid commit, so a copy of the WAL cut after commit
*k*, beside a copy of the main file, opens as that earlier database.

``earlier_snapshots`` yields those databases for every commit but the last
(the live state, which the caller has read already), oldest first, after the
main file read alone (commit 0: the database as of its last checkpoint, before
the first commit the WAL holds; a main file with no table yet, written
only through the WAL, gives nothing). The caller
reads each with the code it reads the live database with and gives the rows
``origin="secondary"`` and the locator ``wal:<k>/<locator>``: the engine drops
a secondary row equal to a primary one (analyzer/engine/secondary.py), so
what remains is what the live database no longer holds, counted once.

What this does not recover, and why:

- frames older than the WAL's last restart (a new salt): SQLite overwrites
  the log from its start after a full checkpoint, so those versions are gone
  unless they survive in free pages;
- a snapshot is exact only while the main file has not been checkpointed
  past commit *k*; a page checkpointed since is read in its newer form. Such a
  mix can fail SQLite's checks: that snapshot is a ``parser:`` row, never a
  crash, and the rows it could give are not claimed;
- frame checksums are left to SQLite: a damaged frame makes SQLite stop at
  the commit before it, which gives a repeat of an earlier snapshot (dropped as
  a duplicate), never a wrong row.

Bounds: at most MAX_SNAPSHOTS snapshots (evenly spread over the commits,
first and last-but-one always among them) and MAX_COPY_BYTES copied for
them in all; past either, one ``parser:`` row says how many were read.

References: SQLite file format, "The Write-Ahead Log" (https://www.sqlite.org/fileformat2.html#walformat:
header magic 0x377f0682/3, page size at offset 8, salts at 16 and 20; frame header of 24 bytes, the database
size after commit at offset 4, nonzero for a commit frame, the salts at 8 and 12).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

MAX_SNAPSHOTS = 64
MAX_COPY_BYTES = 2 * 1024 * 1024 * 1024
WAL_MAGIC = (0x377F0682, 0x377F0683)
_WAL_HEADER = struct.Struct(">IIIIII")  # magic, version, page size, checkpoint sequence, salt 1, salt 2
_FRAME_HEADER = struct.Struct(">IIII")  # page number, database size after commit, salt 1, salt 2
WAL_HEADER_BYTES = 32
FRAME_HEADER_BYTES = 24


@dataclass
class Snapshot:
    """The database as of one earlier commit of its WAL; ``connection`` is valid until the next item is asked for."""

    commit: int  # 1-based, in the WAL's order; 0 for the main file read without its WAL
    commits: int  # commits the WAL holds (the last is the live state)
    connection: sqlite3.Connection

    def locator(self, inner: str) -> str:
        """``wal:<commit>/<inner>``: the live reader's locator, read as of this commit (0: the main file alone)."""
        return f"wal:{self.commit}/{inner}"

    @property
    def described(self) -> str:
        """Which version this is, for a row's text (``version_text``)."""
        return version_text(self.commit, self.commits)


def version_text(commit: int, commits: int) -> str:
    """``-wal commit k of n``, or for commit 0 the main file before its -wal."""
    if commit == 0:
        return f"the database file before its -wal (its last checkpoint; the -wal holds {commits} commits)"
    return f"-wal commit {commit} of {commits}"


def commit_ends(wal_path: str) -> list[int]:
    """The byte offset just past each commit frame of the WAL's current generation, in order.

    Scanning stops at the first frame whose salts are not the header's (a
    frame left from before the WAL's last restart) or that is cut short.
    """
    ends: list[int] = []
    size = os.path.getsize(wal_path)
    with open(wal_path, "rb") as wal:
        header = wal.read(WAL_HEADER_BYTES)
        if len(header) < WAL_HEADER_BYTES:
            return ends
        magic, _version, page_size, _sequence, salt1, salt2 = _WAL_HEADER.unpack_from(header)
        if magic not in WAL_MAGIC:
            return ends
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
            return ends
        frame_bytes = FRAME_HEADER_BYTES + page_size
        offset = WAL_HEADER_BYTES
        while offset + frame_bytes <= size:
            wal.seek(offset)
            _page, after_commit, frame_salt1, frame_salt2 = _FRAME_HEADER.unpack(wal.read(16))
            if (frame_salt1, frame_salt2) != (salt1, salt2):
                break
            offset += frame_bytes
            if after_commit:
                ends.append(offset)
    return ends


def chosen(earlier: int, limit: int) -> list[int]:
    """Which of ``earlier`` commits (1-based) to open when at most ``limit`` may be: all, or spread evenly."""
    if earlier <= limit:
        return list(range(1, earlier + 1))
    if limit <= 1:
        return [earlier][:limit]
    step = (earlier - 1) / (limit - 1)
    return sorted({1 + round(index * step) for index in range(limit)})


def earlier_snapshots(ctx: ParseContext, source: Source | None = None) -> Iterator[Snapshot | Draft]:
    """The database (the context's, or ``source``) as of each commit of its WAL but the last, oldest first.

    Nothing is yielded for a database collected without a ``-wal`` or whose
    WAL holds no commit. ``parser:`` Drafts say what a bound left out and
    which snapshot SQLite could not open; the caller passes them through.
    """
    source = source or ctx.source
    database, wal = ctx.bundle.copy_with_wal(source)
    try:
        if wal is None:
            return
        ends = commit_ends(wal)
        if not ends:
            return
        yield from _snapshots(ctx, database, wal, ends)
    finally:
        shutil.rmtree(os.path.dirname(database), ignore_errors=True)


def _snapshots(ctx: ParseContext, database: str, wal: str, ends: list[int]) -> Iterator[Snapshot | Draft]:
    commits, earlier = len(ends), len(ends) - 1
    picked = chosen(earlier, MAX_SNAPSHOTS)
    if len(picked) < earlier:
        yield over_limit("WAL commits to reopen", f"{MAX_SNAPSHOTS} of {earlier} earlier commits",
                         f"the database was read as of commits {_listed(picked)} only", "wal")
    database_bytes = os.path.getsize(database)
    if database_bytes > MAX_COPY_BYTES:
        yield over_limit("bytes copied to reopen WAL commits", f"{MAX_COPY_BYTES} bytes",
                         f"no earlier version of the database was reopened ({database_bytes} bytes)", "wal:0")
        return
    yield from _one_snapshot(ctx, database, wal, 0, commits, 0)
    copied = database_bytes
    for commit in picked:
        cost = database_bytes + ends[commit - 1]
        if copied + cost > MAX_COPY_BYTES:
            yield over_limit("bytes copied to reopen WAL commits", f"{MAX_COPY_BYTES} bytes",
                             f"commits from {commit} on (of {commits}) were not reopened", f"wal:{commit}")
            return
        copied += cost
        yield from _one_snapshot(ctx, database, wal, commit, commits, ends[commit - 1])


def _one_snapshot(ctx: ParseContext, database: str, wal: str, commit: int, commits: int,
                  end: int) -> Iterator[Snapshot | Draft]:
    directory = ctx.bundle.scratch_directory()
    copy = os.path.join(directory, "db")
    connection = None
    try:
        shutil.copyfile(database, copy)
        if commit:
            _copy_prefix(wal, copy + "-wal", end)
        snapshot = None
        try:
            connection = sqlite_safe.open_copy(copy)
            tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            snapshot = Snapshot(commit, commits, connection)
        except sqlite3.Error as exc:
            yield Draft("system", f"parser: the database as of {version_text(commit, commits)} could not be opened "
                        f"({exc}); rows only that version held are not recovered", f"wal:{commit}",
                        timestamp_source="none")
            return
        if commit or tables:  # a main file with no table yet holds no earlier version
            yield snapshot
    finally:
        if connection is not None:
            connection.close()
        shutil.rmtree(directory, ignore_errors=True)


def _copy_prefix(source: str, target: str, length: int) -> None:
    with open(source, "rb") as reader, open(target, "wb") as writer:
        remaining = length
        while remaining > 0:
            chunk = reader.read(min(remaining, 1 << 20))
            if not chunk:
                break
            writer.write(chunk)
            remaining -= len(chunk)


def _listed(commits: list[int]) -> str:
    shown = ", ".join(str(commit) for commit in commits[:8])
    return shown + (f" ... ({len(commits)} in all)" if len(commits) > 8 else "")
