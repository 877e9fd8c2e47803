"""Zed's ``threads/threads.db`` (with its -wal): one row per agent thread, its JSON zstd-compressed.

[src] zed-industries/zed ``crates/agent/src/db.rs`` ``ThreadsDatabase::new``:
``threads(id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT, data_type TEXT,
data BLOB)`` plus the added columns ``parent_id``, ``folder_paths``,
``folder_paths_order`` and ``created_at`` (back-filled from updated_at).
``save_thread_sync`` upserts the whole row on every save (``data`` always
zstd level 3; ``created_at`` kept from the first save); ``updated_at`` and
``created_at`` are RFC 3339 text with ``+00:00``. ``folder_paths`` is a
serialized ``PathList`` (crates/util/src/path_list.rs): the sorted paths
joined by newlines, ``folder_paths_order`` the original positions joined by
commas. ``delete_thread`` is ``DELETE FROM threads WHERE id = ?``.

The database is read through ``ctx.sqlite()`` (a copy with its -wal
applied: a thread saved only into the -wal is read). Because every save
rewrites the row, the earlier versions of a thread that the -wal still holds
(a thread before a message was edited away, a thread deleted in the last
commit) are read with the same code from each earlier commit
(``formats.sqlite_history.earlier_snapshots``) as secondary rows, located
``wal:<commit>/sqlite:threads:<rowid>/...``: only the rows that neither the
live thread nor an earlier state of it gives (``History``), so nothing is
counted twice.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.json_values import as_text
from aitrail.analyzer.formats.sqlite_history import Snapshot, earlier_snapshots
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, over_limit

from . import blobs
from .thread import prepare, thread_rows
from .values import Thread

MAX_THREADS = 1_000_000  # live threads whose saved state is remembered (8 bytes and an id each)
KEYS_BUDGET = 500_000  # row keys held to compare earlier thread states with later ones (about 40 MB)
COLUMNS = ("id", "parent_id", "folder_paths", "folder_paths_order", "summary", "updated_at", "created_at",
           "data_type", "data")


def parse_threads_db(ctx: ParseContext) -> Iterator[Draft]:
    """threads.db: every thread's rows (live rows primary; earlier versions in the -wal secondary)."""
    budget = blobs.Budget()
    yield from each_database_row(ctx, lambda connection: _live_and_history(ctx, connection, budget))
    yield from _budget_row(budget)


def _live_and_history(ctx: ParseContext, connection: sqlite3.Connection, budget: blobs.Budget) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "threads"):
        yield bad_file(f"{ctx.source.name}: no threads table")
        return
    history = History(connection, budget)
    for row in _rows(connection):
        history.remember(row)
        yield from _thread(row, budget, None, lambda inner: inner)
    yield from history.snapshots(ctx)


def _rows(connection: sqlite3.Connection, where: str = "1 ORDER BY rowid", parameters: tuple = ()) -> Iterator[dict]:
    return sqlite_safe.table_rows(connection, "threads", "threads rows", COLUMNS, where=where, parameters=parameters)


def _thread(row: dict, budget: blobs.Budget, origin: str | None, place: Callable[[str], str]) -> Iterator[Draft]:
    locator = place(f"sqlite:threads:{as_text(row.get('_rowid'))}")
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield _secondary(bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})"), origin)
            row[column] = None
    created, updated = ns_from_iso(row.get("created_at")), ns_from_iso(row.get("updated_at"))
    folders = folder_list(row.get("folder_paths"), row.get("folder_paths_order"))
    thread = Thread(session_id=as_text(row.get("id")), locator=f"{locator}/data", time_ns=created or updated,
                    project_path=folders[0] if folders else "", origin=origin)
    facts = [f"{key}={as_text(row[key])}" for key in ("created_at", "updated_at", "parent_id", "data_type")
             if row.get(key) not in (None, "")]
    if folders:
        facts.insert(2, f"folder_paths={'; '.join(folders)}")
    document, problem = _document(row, budget, f"{locator}/data")
    if document is None:
        yield from (_secondary(problem, origin),) if problem is not None else ()
        # the row's own columns still say the thread existed, what it was called and when
        yield thread.row("system", f"session: {as_text(row.get('summary'))} ({', '.join(facts)}; the thread's data "
                         "was not read)", locator, timestamp_ns=created or updated,
                         timestamp_source="record" if created or updated else "none")
        return
    prepare(thread, document, folders)
    yield from thread_rows(thread, document, facts, created or updated, updated or ns_from_iso(document.get(
        "updated_at")))


def _secondary(draft: Draft, origin: str | None) -> Draft:
    draft.origin = origin
    return draft


def _document(row: dict, budget: blobs.Budget, locator: str) -> tuple[dict | None, Draft | None]:
    """The thread's decoded JSON object, or (None, the row saying why not; None when only the budget refused it)."""
    try:
        content = blobs.thread_json(row.get("data_type"), row.get("data"), budget, locator)
    except blobs.OverLimit as exc:
        return None, over_limit("thread data", f"{blobs.MAX_THREAD_BYTES} bytes", f"{exc}; this thread was not read",
                                locator)
    except blobs.Unreadable as exc:
        return None, bad_record(locator, str(exc))
    if content is None:
        return None, None
    try:
        document = decode_json(content)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, bad_record(locator, f"thread data is not JSON: {exc}", content[:600])
    if not isinstance(document, dict):
        return None, bad_record(locator, f"thread data is a JSON {type(document).__name__}, not an object")
    return document, None


def folder_list(paths: object, order: object) -> list[str]:
    """A serialized PathList in the order the paths were given (sorted when the order does not fit them)."""
    if not isinstance(paths, str) or not paths:
        return []
    sorted_paths = paths.split("\n")
    positions = [int(part) for part in order.split(",") if part.strip().isdigit()] if isinstance(order, str) else []
    if sorted(positions) != list(range(len(sorted_paths))):
        return sorted_paths
    return [path for _, path in sorted(zip(positions, sorted_paths, strict=True))]


def _budget_row(budget: blobs.Budget) -> Iterator[Draft]:
    if budget.refused:
        yield over_limit("decompressed thread data of this database", f"{blobs.MAX_DATABASE_BYTES} bytes",
                         f"the threads from here on were not read ({budget.refused} in all)", budget.first_refused)


def _digest(row: dict) -> bytes:
    """What identifies one saved state of a thread: its data_type and data."""
    data = row.get("data")
    raw = data if isinstance(data, bytes) else as_text(data).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(as_text(row.get("data_type")).encode() + b"\0" + raw, digest_size=8).digest()


def row_key(draft: Draft) -> int:
    """A row of one thread as the run's deduplication sees it: turn type, tool_use_id, whitespace-normalized text."""
    text = " ".join(draft.text.split())
    return int.from_bytes(hashlib.blake2b(f"{draft.turn_type}\0{draft.tool_use_id}\0{text}".encode(),
                                          digest_size=8).digest(), "big")


class History:
    """The earlier states of the threads in the -wal, each given once, without the rows their later state holds.

    Zed rewrites a thread's row on every save, so a -wal of n commits can hold
    n copies of a thread: a state equal to the live one, or to one already
    read, gives nothing; a state that differs gives only the rows that neither
    the live thread nor an earlier state of it gave (``row_key``), so a turn
    edited away or a deleted thread is written once, as secondary. Held: 8
    bytes per live thread and per state read, and the keys of the threads that
    changed, at most KEYS_BUDGET; past it the later rows are written without
    the check and one ``parser:`` row says so.
    """

    def __init__(self, live: sqlite3.Connection, budget: blobs.Budget):
        self.live, self.budget = live, budget
        self.live_digests: dict[str, bytes] = {}
        self.seen: dict[str, set[bytes]] = {}
        self.keys: dict[str, set[int]] = {}
        self.held = 0
        self.over_at = ""
        self.all_live = True  # every live thread remembered: a thread not among them was deleted
        self.deleted: dict[str, tuple[str, str, str, str]] = {}  # id -> summary, updated_at, version, locator

    def remember(self, row: dict) -> None:
        """Note a live thread's saved state (its digest)."""
        if len(self.live_digests) < MAX_THREADS:
            self.live_digests[as_text(row.get("id"))] = _digest(row)
        else:
            self.all_live = False

    def snapshots(self, ctx: ParseContext) -> Iterator[Draft]:
        """The rows of every earlier commit's threads that no later state gives."""
        for item in earlier_snapshots(ctx):
            if isinstance(item, Draft):
                yield item
                continue
            try:
                if not sqlite_safe.is_real_table(item.connection, "threads"):
                    continue
                for row in _rows(item.connection):
                    self._note_deleted(row, item)
                    yield from self._earlier(row, item.locator)
            except sqlite3.Error as exc:
                yield bad_file(f"{ctx.source.name}: cannot read the state of {item.described}: {exc}")
        yield from self._deleted_rows()
        if self.over_at:
            yield over_limit("rows of earlier thread states", f"{KEYS_BUDGET} row keys", "the later rows of earlier "
                             "states were written without comparing them with the thread's other states", self.over_at)

    def _note_deleted(self, row: dict, snapshot: Snapshot) -> None:
        thread = as_text(row.get("id"))
        if self.all_live and thread not in self.live_digests and len(self.deleted) < MAX_THREADS:
            self.deleted[thread] = (as_text(row.get("summary")), as_text(row.get("updated_at")), snapshot.described,
                                    snapshot.locator(f"sqlite:threads:{as_text(row.get('_rowid'))}"))

    def _deleted_rows(self) -> Iterator[Draft]:
        """One ``session deleted:`` row per thread an earlier commit holds and the live database does not."""
        for thread, (summary, updated, version, locator) in self.deleted.items():
            yield Draft("system", f"session deleted: {summary} (thread {thread} is in {version} and not in the "
                        f"live database: deleted after it was last saved at {updated})",
                        locator, session_id=thread, timestamp_source="none", origin="secondary")

    def _earlier(self, row: dict, place: Callable[[str], str]) -> Iterator[Draft]:
        thread, digest = as_text(row.get("id")), _digest(row)
        states = self.seen.setdefault(thread, set())
        if digest == self.live_digests.get(thread) or digest in states:
            return
        states.add(digest)
        known = self.keys.get(thread)
        if known is None:
            known = self.keys[thread] = self._live_keys(thread)
        for draft in _thread(row, self.budget, "secondary", place):
            key = row_key(draft)
            if key in known:
                continue
            if self.held < KEYS_BUDGET:
                known.add(key)
                self.held += 1
            else:
                self.over_at = self.over_at or draft.locator
            yield draft

    def _live_keys(self, thread: str) -> set[int]:
        """The keys of the rows the live database gives for ``thread`` (none when it was deleted)."""
        keys: set[int] = set()
        for row in _rows(self.live, "id = ?", (thread,)):
            for draft in _thread(row, self.budget, None, lambda inner: inner):
                if self.held < KEYS_BUDGET:
                    keys.add(row_key(draft))
                    self.held += 1
        return keys
