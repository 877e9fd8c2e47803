"""Zed's first agent-thread store: the LMDB environment ``threads/threads-db.1.mdb/`` (its ``data.mdb``).

[src] zed-industries/zed, the heed-backed ``ThreadsDatabase`` of the
``assistant2``/``agent`` crate before the SQLite store (index copies of
``thread_store.rs``): ``heed::EnvOpenOptions::new().map_size(1 GiB)
.max_dbs(1).open(support_dir()/threads/threads-db.1.mdb)`` (a directory),
one named database ``threads`` of ``Database<SerdeBincode<ThreadId>,
SerializedThread>``: the key is bincode's string (a u64 little-endian length,
then the UTF-8 id), the value ``serde_json::to_vec`` of a SerializedThread
(legacy_thread.rs shapes). The SQLite store migrates from it
(``needs_migration_from_heed`` in db.rs ``ThreadsDatabase::new``), so the
store is secondary: a thread that threads.db also holds gives rows equal to
its rows, which the run drops; one only here stays. Read with
``formats.lmdb`` (bounded, no C library); the threads have no time but their
``updated_at``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from aitrail.analyzer.formats import lmdb
from aitrail.analyzer.formats.json_values import as_text
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .thread import prepare, thread_rows
from .values import Thread


def parse_legacy_threads(ctx: ParseContext) -> Iterator[Draft]:
    """threads-db.1.mdb/data.mdb: each thread of the ``threads`` database as the SQLite store's rows."""
    try:
        environment = lmdb.LmdbFile(ctx.data)
    except lmdb.NotLmdb as exc:
        yield bad_file(f"{ctx.source.name} is not an LMDB data file: {exc}")
        return
    root = environment.named_root(b"threads")
    if root is None:
        yield bad_file(f"{ctx.source.name}: no 'threads' database in the LMDB environment")
        return
    for item in environment.walk(root):
        if isinstance(item, lmdb.Problem):
            yield bad_record(f"lmdb:threads:{item.where}", item.reason)
        else:
            yield from _thread(item)


def thread_id(key: bytes) -> str:
    """The ThreadId of a bincode key (u64 LE length, then UTF-8); any other key as text."""
    if len(key) >= 8 and struct.unpack_from("<Q", key)[0] == len(key) - 8:
        key = key[8:]
    return key.decode("utf-8", "backslashreplace")


def _thread(entry: lmdb.Entry) -> Iterator[Draft]:
    locator = f"lmdb:threads:{entry.where}"
    try:
        document = decode_json(entry.value)
    except (ValueError, UnicodeDecodeError) as exc:
        yield bad_record(locator, f"thread value is not JSON: {exc}", entry.value[:600])
        return
    if not isinstance(document, dict):
        yield bad_record(locator, f"thread value is a JSON {type(document).__name__}, not an object")
        return
    updated = ns_from_iso(document.get("updated_at"))
    thread = Thread(session_id=thread_id(entry.key), locator=locator, time_ns=updated)
    prepare(thread, document, [])
    facts = [f"updated_at={as_text(document['updated_at'])}"] if document.get("updated_at") else []
    yield from thread_rows(thread, document, [*facts, "store=threads-db.1.mdb"], updated, updated)
