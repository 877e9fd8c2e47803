"""The Q CLI lineage's ``data.sqlite3``: conversations (live and earlier versions), shell history, migrations, state.

Tables, read in source at aws/amazon-q-developer-cli@15cc8f3cd1
(crates/chat-cli/src/database/sqlite_migrations/000-007, database/mod.rs):

* a conversation table (``conversations (key, value)``: key = absolute directory,
  value = ConversationState JSON; Kiro CLI's legacy engine keeps
  ``conversations_v2 (key, conversation_id, value, created_at, updated_at)`` [obs],
  ms), read by formats/q_conversation.py. The row is replaced whole after every
  turn (``INSERT OR REPLACE``, mod.rs:470-474), so its earlier versions survive
  only in the -wal: each earlier commit is read with the same code
  (formats/sqlite_history.py) and gives ``secondary`` rows, only those the newer
  versions lack (``VersionSeen``);
* ``history``: shell commands the retired shell integration logged
  (``start_time``/``end_time`` epoch seconds, ``duration`` ms:
  crates/fig_settings/src/history.rs:87-130 @5c621df6fd): ``shell history:`` rows;
* ``migrations`` (``migration_time`` = ``strftime('%s','now')``, mod.rs:446-451):
  ``database migration:`` rows, the database's creation and upgrade times;
* ``state`` (key, value BLOB): ``state:`` rows, untimed. Keys that hold
  credentials (``telemetry-cognito-credentials``: access key, secret key and
  session token, mod.rs:57, 239-252) or that are named like one are never
  selected, only counted;
* ``auth_kv`` (SSO and Builder ID tokens, mod.rs:157-175) is never named in a query.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import credential_key, settings_value
from aitrail.analyzer.formats.json_values import as_text
from aitrail.analyzer.formats.q_conversation import Place, VersionSeen, conversation_rows
from aitrail.analyzer.formats.sqlite_history import earlier_snapshots
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, ns_from_seconds

# state keys never selected: the telemetry Cognito credentials (database/mod.rs:57), and any key named
# like a credential (the idioms.credential_key rule, or these words anywhere in it)
CREDENTIAL_STATE_KEYS = frozenset({"telemetry-cognito-credentials"})
_CREDENTIAL_WORD = re.compile(r"(?i)credential|token|secret|passw|api[-_]?key|private[-_]?key")
HISTORY_FACTS = ("shell", "cwd", "exit_code", "duration", "hostname", "pid", "session_id")


@dataclass(frozen=True)
class ConversationTable:
    """A table of ConversationState rows: its name and the column (epoch ms) with each row's creation time."""

    name: str
    created_column: str = ""


Wrap = Callable[[str], str]  # a locator inside the database -> the row's locator (``wal:<n>/...`` for a snapshot)


def parse_q_database(ctx: ParseContext, tables: Iterable[ConversationTable]) -> Iterator[Draft]:
    """The database's rows (with its -wal applied), the rows only its earlier WAL commits hold, then transcripts.

    Two passes over the versions (the live database, then each earlier commit):
    the histories and tables first, then the conversations' transcripts, so a
    transcript line is given only where no version's history holds its turn.
    """
    tables, seen = tuple(tables), VersionSeen()
    for transcript in (False, True):
        seen.start()
        for row in each_database_row(ctx, lambda connection, part=transcript: database_rows(connection, tables, str,
                                                                                            None, part)):
            if seen.admit(row) or not transcript:  # the live history is always given; its transcript where new
                yield row
        yield from _earlier_versions(ctx, tables, seen, transcript)
    yield from seen.limit_row()


def _earlier_versions(ctx: ParseContext, tables: tuple, seen: VersionSeen, transcript: bool) -> Iterator[Draft]:
    for item in earlier_snapshots(ctx):
        if isinstance(item, Draft):  # a limit reached, a commit SQLite could not open
            if seen.admit(item):  # said once, not once per pass
                yield item
            continue
        seen.start()
        try:
            for row in database_rows(item.connection, tables, item.locator, "secondary", transcript):
                if seen.admit(row):
                    yield row
        except sqlite3.Error as exc:
            row = bad_record(item.locator("file"), f"cannot read this earlier version: {exc}")
            if seen.admit(row):
                yield row


def database_rows(connection: sqlite3.Connection, tables: tuple, wrap: Wrap, origin: str | None,
                  transcript: bool = False) -> Iterator[Draft]:
    """The rows one version of the database gives: conversations, shell history, migrations, state; or transcripts."""
    known = [table.name for table in tables] + ["history", "migrations", "state"]
    if not any(sqlite_safe.is_real_table(connection, name) for name in known):
        yield bad_file(f"no {', '.join(known)} table")
        return
    for table in tables:
        if sqlite_safe.is_real_table(connection, table.name):
            yield from _conversations(connection, table, wrap, origin, transcript)
    if transcript:
        return
    for producer in (_history, _migrations, _state):
        for row in producer(connection, wrap):
            yield replace(row, origin=origin) if origin else row


def _cleaned(row: dict, locator: str) -> Iterator[Draft]:
    """A ``parser:`` row per value too long to read; the value is left out."""
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            row[column] = None


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else as_text(value)


def _conversations(connection, table: ConversationTable, wrap: Wrap, origin: str | None,
                   transcript: bool) -> Iterator[Draft]:
    for row in sqlite_safe.table_rows(connection, table.name, f"{table.name} rows", where="1 ORDER BY rowid"):
        locator = wrap(f"sqlite:{table.name}:{row.get('_rowid')}")
        for problem in _cleaned(row, locator):
            yield replace(problem, origin=origin) if origin else problem
        if row.get("value") is None:
            continue
        created = ns_from_ms(row.get(table.created_column)) if table.created_column else None
        place = Place(locator, _text(row.get("key")), origin, created)
        yield from conversation_rows(_text(row["value"]), place, transcript)


def _history(connection, wrap: Wrap) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "history"):
        return
    for row in sqlite_safe.table_rows(connection, "history", "history rows", where="1 ORDER BY rowid"):
        locator = wrap(f"sqlite:history:{row.get('_rowid')}")
        yield from _cleaned(row, locator)
        facts = ", ".join(f"{key}={_text(row[key])}" for key in HISTORY_FACTS if row.get(key) not in (None, ""))
        moment = ns_from_seconds(row.get("start_time"))
        yield Draft("system", f"shell history: {_text(row.get('command'))} ({facts})", locator, moment,
                    "record" if moment is not None else "none", project_path=_text(row.get("cwd")))


def _migrations(connection, wrap: Wrap) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "migrations"):
        return
    for row in sqlite_safe.table_rows(connection, "migrations", "migrations rows", where="1 ORDER BY rowid"):
        moment = ns_from_seconds(row.get("migration_time"))
        yield Draft("system", f"database migration: version {_text(row.get('version'))} applied",
                    wrap(f"sqlite:migrations:{row.get('_rowid')}"), moment, "record" if moment is not None else "none")


def secret_state_key(key: str) -> bool:
    """True for a ``state`` key whose value is never selected."""
    return key in CREDENTIAL_STATE_KEYS or credential_key(key) or bool(_CREDENTIAL_WORD.search(key))


def _state(connection, wrap: Wrap) -> Iterator[Draft]:
    """``state: <key>=<value>`` per key; a credential's key is named, its value never selected."""
    if not sqlite_safe.is_real_table(connection, "state"):
        return
    withheld = []
    for row in sqlite_safe.table_rows(connection, "state", "state keys", ("key",), where="1 ORDER BY rowid"):
        key, locator = _text(row.get("key")), wrap(f"sqlite:state:{row.get('_rowid')}")
        if secret_state_key(key):
            withheld.append(key)
            continue
        for found in sqlite_safe.table_rows(connection, "state", "state value", ("value",), where="rowid = ?",
                                            parameters=(row.get("_rowid"),)):
            value = found.get("value")
            if isinstance(value, sqlite_safe.Oversize):
                yield bad_record(locator, f"value too long to read ({value.describe()})")
                continue
            yield Draft("system", f"state: {key}={_state_value(value, key)}", locator, timestamp_source="none")
    if withheld:
        yield Draft("system", f"state: {len(withheld)} credential key(s) not read: {', '.join(withheld)}",
                    wrap("sqlite:state"), timestamp_source="none")


def _state_value(value, key: str) -> str:
    """A state value as written (JSON values decoded), a credential-keyed part withheld."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return f"<{len(value)} bytes, not UTF-8>"
    if isinstance(value, str):
        try:
            value = decode_json(value)
        except ValueError:
            pass  # a plain string value (set_entry writes strings as they are)
    return settings_value(value, key)
