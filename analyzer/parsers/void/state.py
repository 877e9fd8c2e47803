"""Void's global state.vscdb: the thread blob, its older copies, and the encrypted settings value.

Keys read (common/storageKeys.ts:6-19), all APPLICATION scope, so always in the
default profile's ``User/globalStorage/state.vscdb``:

* ``void.chatThreadStorageII`` (1.0.3 on): every chat thread in one JSON value,
  rewritten whole on each change (``_storeAllThreads``); a deleted thread is
  gone from it at once (``deleteThread``, chatThreadService.ts:1651-1661).
  ``void.chatThreadStorageI`` (1.0.2) and ``void.chatThreadStorage`` may remain on
  an upgraded install: read the same way, as secondary rows (the engine keeps only
  what the current key no longer holds);
* ``void.settingsServiceStorageII`` (and the older ``void.settingsServiceStorage``,
  ``…I``): the settings, ``IEncryptionService.encrypt(JSON.stringify(state))``
  (common/voidSettingsService.ts:350-366), i.e. Electron safeStorage ciphertext as
  a JSON Buffer (platform/encryption/electron-main/encryptionMainService.ts:41-50).
  They hold the provider API keys and ``globalSettings.autoApprove`` (common/
  voidSettingsTypes.ts:441-467), the per-kind auto-approval switches the tool loop
  reads at call time (chatThreadService.ts:644-650). The value is never read into
  a row: one ``parser: <key> cannot be read: <reason>; <N> bytes`` row says it is
  there, untimed.

Older versions of the thread blob: the frames of the ``-wal`` (each earlier commit
read with the same code, rows secondary, locator ``wal:<k>/sqlite:ItemTable:…``)
and ``state.vscdb.backup`` (VS Code's copy at the last clean close, a secondary
store read by this parser). Rows a snapshot repeats are not written again, and a
call an older copy shows still pending gets no ``no result recorded`` row when
the live database still holds its thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.snapshot_rows import RowRepeats, earlier_versions
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft
from aitrail.analyzer.view.sqlite_safe import Oversize

from .threads import thread_rows, thread_session

THREAD_KEYS = ("void.chatThreadStorageII", "void.chatThreadStorageI", "void.chatThreadStorage")
SETTINGS_KEYS = ("void.settingsServiceStorageII", "void.settingsServiceStorageI", "void.settingsServiceStorage")
ENCRYPTED = ("encrypted by Void's IEncryptionService with Electron safeStorage (macOS Keychain \"Void Safe "
             "Storage\", Windows DPAPI, Linux libsecret/kwallet or Chromium's basic fixed key, the default Void "
             "sets on Linux); it holds the provider API keys and the auto-approve settings (globalSettings."
             "autoApprove for edits, terminal and MCP tools), which are therefore not in the timeline")


def parse_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb (or its .backup): thread rows, the encrypted-settings row, then the WAL's earlier versions."""
    try:
        connection = ctx.sqlite()
    except sqlite3.Error as exc:
        yield bad_file(f"{ctx.source.name}: cannot open state.vscdb: {exc}")
        return
    repeats, live_threads = RowRepeats(), set()
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # not a database: said here
        if not vscode_db.has_table(connection, vscode_db.ITEM_TABLE):
            yield bad_file(f"{ctx.source.name}: {vscode_db.missing_table(vscode_db.ITEM_TABLE)}")
            return
        settled = _live_threads(ctx) if vscode_db.is_backup(ctx.source) else frozenset()
        for row in state_rows(connection, settled, repeats):
            if row.text.startswith("thread: ") and row.origin is None:
                live_threads.add(row.session_id)
            yield row
        yield from settings_rows(connection)
    except (sqlite3.Error, MemoryError) as exc:  # QueryAborted is a sqlite3.Error
        yield bad_file(f"{ctx.source.name}: cannot query ItemTable: {exc}")
        return
    finally:
        connection.close()
    if not vscode_db.is_backup(ctx.source):
        settled_live = frozenset(live_threads)
        yield from earlier_versions(ctx, lambda connection: state_rows(connection, settled_live, RowRepeats()),
                                    repeats)


def state_rows(connection: sqlite3.Connection, settled: frozenset[str] = frozenset(),
               repeats: RowRepeats | None = None) -> Iterator[Draft]:
    """The rows of every thread key present in one open database, the current key first.

    An older key's rows are secondary, and those equal to a row already written
    (``repeats``: the current key's, or an earlier reading's) are left out: an upgrade
    leaves the same threads under two keys. Rows of a primary store are not compared
    with each other by the engine, so this reading does it.

    Raises:
        sqlite3.Error: the database cannot be queried.
    """
    repeats = repeats if repeats is not None else RowRepeats()
    for key in THREAD_KEYS:
        row = vscode_db.row_at_key(connection, key)
        if row is None:
            continue
        older = key != THREAD_KEYS[0]
        for draft in _key_rows(row, settled):
            if not repeats.first(draft) and older:
                continue
            if older:
                draft.origin = "secondary"
            yield draft


def _key_rows(row: vscode_db.KeyRow, settled: frozenset[str]) -> Iterator[Draft]:
    try:
        threads = row.json()
    except ValueError as exc:
        yield bad_record(row.locator(), f"{row.key} is not readable JSON: {exc}")
        return
    yield from thread_rows(threads, row.locator(), row.key, settled=settled)


def settings_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """One untimed ``parser: <key> cannot be read: …; <N> bytes`` row per settings key present, never its value."""
    for key in SETTINGS_KEYS:
        row = vscode_db.row_at_key(connection, key)
        if row is None:
            continue
        size = row.value.length if isinstance(row.value, Oversize) else len(row.value)
        yield Draft("system", f"parser: {key} cannot be read: {ENCRYPTED}; {size} bytes", row.locator(),
                    timestamp_source="none")


def _live_threads(ctx: ParseContext) -> frozenset[str]:
    """The thread ids of the live database beside this backup (none when it was not collected)."""
    live = ctx.sibling(ctx.source.name[:-len(vscode_db.BACKUP_SUFFIX)], "global_state")
    return _threads_of(ctx, live) if live is not None else frozenset()


def _threads_of(ctx: ParseContext, source: Source) -> frozenset[str]:
    """The thread ids the current key of another database of the bundle holds (cached per worker)."""
    def load() -> frozenset[str]:
        try:
            connection = ctx.sqlite(source)
        except sqlite3.Error:
            return frozenset()
        try:
            row = vscode_db.row_at_key(connection, THREAD_KEYS[0])
            threads = row.json() if row is not None else None
        except (sqlite3.Error, ValueError, MemoryError):
            return frozenset()
        finally:
            connection.close()
        if not isinstance(threads, dict):
            return frozenset()
        return frozenset(thread_session(key, thread) for key, thread in threads.items() if isinstance(thread, dict))

    return ctx.cached(("void-live-threads", source.member), load)  # type: ignore[return-value]
