"""state.vscdb reading: exact key, key prefix, cursorDiskKV, secrets excluded, hostile schemas, backup pairing."""

from __future__ import annotations

import sqlite3

import pytest

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, ITEM_TABLE, KeyRow
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.sqlite_safe import Oversize
from tests.analyzer.fakes import FakeBundle

SECRET = 'secret://{"extensionId":"saoudrizwan.claude-dev","key":"apiKey"}'
SECRET_VALUE = b'{"type":"Buffer","data":[118,49,48,0,0,0]}'


def make_db(path, tables=(ITEM_TABLE, CURSOR_TABLE), rows=()) -> str:
    connection = sqlite3.connect(path)
    for table in tables:
        connection.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for table, key, value in rows:
        connection.execute(f"INSERT INTO {table} VALUES (?, ?)", (key, value))
    connection.commit()
    connection.close()
    return str(path)


def connect(path) -> sqlite3.Connection:
    return sqlite_safe.open_copy(str(path))


CURSOR_ROWS = [
    (CURSOR_TABLE, "composerData:c1", '{"_v":10,"composerId":"c1"}'),
    (CURSOR_TABLE, "bubbleId:c1:b1", '{"type":1,"text":"hi"}'),
    (CURSOR_TABLE, "bubbleId:c1:b2", '{"type":2,"text":"hello"}'),
    (CURSOR_TABLE, "bubbleId:c10:b1", '{"type":1,"text":"other composer"}'),
    (CURSOR_TABLE, "BUBBLEID:c1:b3", '{"type":1}'),
    (ITEM_TABLE, "saoudrizwan.claude-dev", '{"taskHistory":[]}'),
    (ITEM_TABLE, SECRET, SECRET_VALUE),
    (CURSOR_TABLE, "secret://cursorAuth/openAIKey", "sk-do-not-read"),
]


def test_prefix_reads_cursor_disk_kv_case_sensitively_and_without_neighbours(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    rows = list(vscode_db.rows_by_prefix(connection, "bubbleId:c1:", CURSOR_TABLE))
    assert [(row.key, row.json()["text"]) for row in rows] == [("bubbleId:c1:b1", "hi"), ("bubbleId:c1:b2", "hello")]
    assert [row.locator() for row in rows] == ["sqlite:cursorDiskKV:2", "sqlite:cursorDiskKV:3"]


def nocase_database(tmp_path):
    """A cursorDiskKV whose key column is declared NOCASE, with two keys that differ only in case."""
    path = tmp_path / "state.vscdb"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE cursorDiskKV (key TEXT COLLATE NOCASE UNIQUE, value BLOB)")
    connection.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", [("bubbleId:a", "1"), ("BUBBLEID:b", "2")])
    connection.commit()
    connection.close()
    return path


def test_case_sensitive_even_when_the_schema_declares_nocase(tmp_path):
    path = nocase_database(tmp_path)
    assert [row.key for row in vscode_db.rows_by_prefix(connect(path), "bubbleId:", CURSOR_TABLE)] == ["bubbleId:a"]
    assert [row.key for row in vscode_db.rows_by_key(connect(path), "bubbleid:a", CURSOR_TABLE)] == []


def test_exact_key_in_item_table(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    rows = list(vscode_db.rows_by_key(connection, "saoudrizwan.claude-dev"))
    assert rows == [KeyRow(ITEM_TABLE, 1, "saoudrizwan.claude-dev", b'{"taskHistory":[]}')]
    assert rows[0].locator("taskHistory", 0) == "sqlite:ItemTable:1/taskHistory/0"
    assert KeyRow(ITEM_TABLE, 4, "k", b"").locator("a/b", "c~d") == "sqlite:ItemTable:4/a~1b/c~0d"


@pytest.mark.parametrize("ask", ["", "s", "secret:", "secret://", 'secret://{"extensionId"'])
def test_secret_rows_are_never_returned_by_any_prefix(tmp_path, ask):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    for table in (ITEM_TABLE, CURSOR_TABLE):
        for row in vscode_db.rows_by_prefix(connection, ask, table):
            assert not row.key.startswith("secret://")
            assert b"sk-do-not-read" not in row.value and row.value != SECRET_VALUE


def test_secret_rows_are_never_returned_by_exact_key(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    assert list(vscode_db.rows_by_key(connection, SECRET)) == []
    assert list(vscode_db.rows_by_key(connection, "secret://cursorAuth/openAIKey", CURSOR_TABLE)) == []


def test_empty_prefix_gives_every_row_but_secrets(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    assert len(list(vscode_db.rows_by_prefix(connection, "", CURSOR_TABLE))) == 5
    assert [row.key for row in vscode_db.rows_by_prefix(connection, "", ITEM_TABLE)] == ["saoudrizwan.claude-dev"]


def test_a_view_named_item_table_is_not_read(tmp_path):
    path = tmp_path / "state.vscdb"
    connection = sqlite3.connect(path)
    connection.execute("CREATE VIEW ItemTable AS WITH RECURSIVE r(key, value) AS (SELECT 'a', 'b' UNION ALL "
                       "SELECT key, value FROM r) SELECT key, value FROM r")
    connection.commit()
    connection.close()
    guarded = connect(path)
    assert not vscode_db.has_table(guarded, ITEM_TABLE)
    assert vscode_db.missing_table(ITEM_TABLE) == "cannot query ItemTable: no such table: ItemTable"
    assert list(vscode_db.rows_by_prefix(guarded, "")) == []
    assert list(vscode_db.rows_by_key(guarded, "a")) == []


def test_missing_table_and_missing_value_column_yield_nothing(tmp_path):
    guarded = connect(make_db(tmp_path / "a.vscdb", tables=(ITEM_TABLE,)))
    assert not vscode_db.has_table(guarded, CURSOR_TABLE)
    assert list(vscode_db.rows_by_prefix(guarded, "composerData:", CURSOR_TABLE)) == []
    path = tmp_path / "b.vscdb"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE ItemTable (key TEXT, value BLOB GENERATED ALWAYS AS (zeroblob(10)))")
    connection.execute("INSERT INTO ItemTable (key) VALUES ('k')")
    connection.commit()
    connection.close()
    assert not vscode_db.has_table(connect(path), ITEM_TABLE)


def test_virtual_table_is_not_read(tmp_path):
    path = tmp_path / "state.vscdb"
    connection = sqlite3.connect(path)
    try:
        connection.execute("CREATE VIRTUAL TABLE ItemTable USING fts5(key, value)")
    except sqlite3.OperationalError:
        pytest.skip("no fts5 in this SQLite")
    connection.commit()
    connection.close()
    assert not vscode_db.has_table(connect(path), ITEM_TABLE)


def test_oversize_value_is_reported_and_the_stream_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "MAX_VALUE_BYTES", 20)
    connection = connect(make_db(tmp_path / "state.vscdb", rows=[
        (CURSOR_TABLE, "bubbleId:c:1", "x" * 50), (CURSOR_TABLE, "bubbleId:c:2", "{}"),
        (CURSOR_TABLE, "bubbleId:c:" + "k" * 40, "{}")]))
    rows = list(vscode_db.rows_by_prefix(connection, "bubbleId:c:", CURSOR_TABLE))
    assert rows[0].value == Oversize(50) and rows[1].value == b"{}"
    assert (rows[2].key, rows[2].value, rows[2].locator()) == ("bubbleId:c:", Oversize(51), "sqlite:cursorDiskKV:3")
    with pytest.raises(ValueError, match="too long"):
        rows[0].json()
    with pytest.raises(ValueError, match="too long"):
        rows[0].text()


def test_invalid_utf8_and_non_text_values_do_not_stop_the_stream(tmp_path):
    path = tmp_path / "state.vscdb"
    make_db(path)
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO ItemTable VALUES ('a', CAST(X'FF7B' AS TEXT))")
    connection.execute("INSERT INTO ItemTable VALUES ('b', 42)")
    connection.execute("INSERT INTO ItemTable VALUES ('c', NULL)")
    connection.commit()
    connection.close()
    guarded = connect(path)
    rows = list(vscode_db.rows_by_prefix(guarded, ""))
    assert [row.value for row in rows] == [b"\xff{", b"42", b""]
    assert rows[0].text() == "\ufffd{"
    with pytest.raises(ValueError, match="not UTF-8"):
        rows[0].json()
    assert guarded.text_factory is str  # restored after the stream


def test_deep_json_value_is_a_value_error(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=[(ITEM_TABLE, "k", "[" * 5000 + "]" * 5000)]))
    with pytest.raises(ValueError):
        next(vscode_db.rows_by_key(connection, "k")).json()


def test_budget_is_enforced_per_query(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "STEP_BUDGET", 2000)
    connection = connect(make_db(tmp_path / "state.vscdb", rows=[(ITEM_TABLE, f"k{n}", "v") for n in range(5000)]))
    with pytest.raises(sqlite_safe.QueryAborted, match="ItemTable rows 'zzz'"):
        list(vscode_db.rows_by_prefix(connection, "zzz"))


def _bundle(tmp_path, with_backup: bool) -> FakeBundle:
    live = make_db(tmp_path / "live.vscdb", rows=[(ITEM_TABLE, "composer.composerData", "{}")])
    files = {("cursor-ide.state", "User/globalStorage/state.vscdb"): open(live, "rb").read()}
    if with_backup:
        backup = make_db(tmp_path / "backup.vscdb", rows=[(ITEM_TABLE, "composer.composerData", "{}"),
                                                          (ITEM_TABLE, "composer.deleted", "{}")])
        files[("cursor-ide.state", "User/globalStorage/state.vscdb.backup")] = open(backup, "rb").read()
    return FakeBundle(files)


def test_backup_and_live_find_each_other(tmp_path):
    bundle = _bundle(tmp_path, with_backup=True)
    live = ParseContext(bundle, bundle.source("User/globalStorage/state.vscdb"), {})
    backup = ParseContext(bundle, bundle.source("User/globalStorage/state.vscdb.backup"), {})
    assert vscode_db.backup_of(live).path.endswith(".backup") and vscode_db.live_of(live) is None
    assert vscode_db.live_of(backup).path.endswith("state.vscdb") and vscode_db.backup_of(backup) is None
    assert vscode_db.is_backup(backup.source) and not vscode_db.is_backup(live.source)
    assert vscode_db.keys_in(backup, vscode_db.live_of(backup), "composer.") == {"composer.composerData"}
    assert [row.key for row in vscode_db.read_prefix(backup, "composer.")] == ["composer.composerData",
                                                                               "composer.deleted"]
    assert vscode_db.read_key(live, "composer.composerData").rowid == 1
    assert vscode_db.read_key(live, "absent") is None


def test_no_backup_collected(tmp_path):
    bundle = _bundle(tmp_path, with_backup=False)
    assert vscode_db.backup_of(ParseContext(bundle, bundle.source("User/globalStorage/state.vscdb"), {})) is None


def test_unreadable_other_copy_gives_no_keys(tmp_path):
    bundle = FakeBundle({("s.state", "state.vscdb"): b"not a database" * 100,
                         ("s.state", "state.vscdb.backup"): b"x"})
    backup = ParseContext(bundle, bundle.source("state.vscdb.backup"), {})
    assert vscode_db.keys_in(backup, vscode_db.live_of(backup), "") == set()


def test_rows_only_in_the_wal_are_read(tmp_path):
    import shutil

    live = tmp_path / "live"
    live.mkdir()
    writer = sqlite3.connect(live / "state.vscdb")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute("INSERT INTO cursorDiskKV VALUES ('bubbleId:c:newest', '{}')")
    writer.commit()  # in the -wal only: the writer stays open, so nothing is checkpointed
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy(live / f"state.vscdb{suffix}", copy / f"state.vscdb{suffix}")
    writer.close()
    assert [row.key for row in vscode_db.rows_by_prefix(connect(copy / "state.vscdb"), "bubbleId:c:",
                                                         CURSOR_TABLE)] == ["bubbleId:c:newest"]


def test_scan_prefix_reads_one_key_range_exactly_through_the_index(tmp_path):
    connection = connect(make_db(tmp_path / "state.vscdb", rows=CURSOR_ROWS))
    rows = list(vscode_db.scan_prefix(connection, "bubbleId:c1:", CURSOR_TABLE))
    assert [(row.key, row.json()["text"]) for row in rows] == [("bubbleId:c1:b1", "hi"), ("bubbleId:c1:b2", "hello")]
    keys = list(vscode_db.scan_prefix(connection, "bubbleId:", CURSOR_TABLE, keys_only=True))
    assert [row.key for row in keys] == ["bubbleId:c10:b1", "bubbleId:c1:b1", "bubbleId:c1:b2"]  # key order
    assert {row.value for row in keys} == {b""}
    assert not list(vscode_db.scan_prefix(connection, "secret://", CURSOR_TABLE))
    plan = " ".join(str(step) for step in connection.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM cursorDiskKV WHERE key >= ? AND key < ?", ("a", "b")))
    assert "INDEX" in plan  # the range the function asks for is an index search, not a table scan


def test_prefix_end_is_the_least_text_above_the_prefix():
    assert vscode_db._prefix_end("bubbleId:c1:") == "bubbleId:c1;"
    assert vscode_db._prefix_end("a\U0010ffff") == "b"
    assert vscode_db._prefix_end("\U0010ffff") == ""


def test_scan_prefix_with_nocase_schema_is_still_exact(tmp_path):
    path = nocase_database(tmp_path)
    assert [row.key for row in vscode_db.scan_prefix(connect(path), "bubbleId:", CURSOR_TABLE)] == ["bubbleId:a"]


def test_extension_row_by_id_exact_first_then_any_case(tmp_path):
    rows = [(ITEM_TABLE, "GitHub.copilot-chat", '{"a":1}'), (ITEM_TABLE, "github.copilot-chat", '{"a":2}'),
            (ITEM_TABLE, "RooVeterinaryInc.roo-cline", '{"b":1}'), (ITEM_TABLE, SECRET, SECRET_VALUE)]
    connection = connect(make_db(tmp_path / "state.vscdb", rows=rows))
    assert vscode_db.extension_row(connection, "GitHub.copilot-chat").json() == {"a": 1}
    assert vscode_db.extension_row(connection, "rooveterinaryinc.roo-cline").key == "RooVeterinaryInc.roo-cline"
    assert vscode_db.extension_row(connection, "absent.extension") is None
    assert vscode_db.extension_row(connection, SECRET) is None
    assert vscode_db.extension_row(connection, SECRET.upper()) is None
