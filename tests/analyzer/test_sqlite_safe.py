"""SQLite as a weapon (issue 8, part A): views, generated columns, huge values, many rows.

Unit tests call analyzer/view/sqlite_safe.py directly with lowered limits; the
end-to-end tests build each hostile database on a home, collect it with the
real collector and run ``aitrail analyze`` in a child process, whose peak RSS
(VmHWM) is checked, and which must end (the recursive-CTE view hung before).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aitrail.analyzer.view import sqlite_safe
from tests.analyzer.fakes import FakeBundle, run
from tests.analyzer.hostile_tools import analyze_measured, collected

MIB = 1024 * 1024
VSCDB = ".config/PearAI/User/globalStorage/state.vscdb"
ROW = "PearAI.pearai-roo-cline"
INFINITE = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)"


def database(path: Path, schema: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.commit()
    connection.close()
    return path


@pytest.fixture
def guarded(tmp_path):
    def open_with(schema: str = "") -> sqlite_safe.GuardedConnection:
        return sqlite_safe.open_copy(str(database(tmp_path / "db.sqlite", schema)))
    return open_with


# -- the guard ------------------------------------------------------------------------------------------


def test_a_query_that_never_produces_a_row_is_stopped_and_named(guarded, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "STEP_BUDGET", 2_000_000)
    connection = guarded()
    with pytest.raises(sqlite_safe.QueryAborted, match="counting things: stopped after 2000000 SQLite instructions"):
        list(sqlite_safe.rows(connection, f"{INFINITE} SELECT count(*) FROM n", (), "counting things"))


def test_the_budget_is_per_row_so_a_long_table_streams_to_the_end(guarded, monkeypatch):
    connection = guarded("CREATE TABLE t (v); " + f"INSERT INTO t {INFINITE} SELECT x FROM n LIMIT 100000;")
    monkeypatch.setattr(sqlite_safe, "STEP_BUDGET", 20_000)  # far less than the whole scan takes
    assert sum(1 for _ in sqlite_safe.table_rows(connection, "t", "all rows")) == 100_000


def test_an_allocation_past_the_heap_limit_fails_as_a_named_query(guarded):
    connection = guarded()
    with pytest.raises(sqlite_safe.QueryAborted, match="big blob: stopped at SQLite's heap limit"):
        list(sqlite_safe.rows(connection, "SELECT zeroblob(900000000)", (), "big blob"))


def test_views_and_virtual_tables_are_not_real_tables(guarded):
    connection = guarded("CREATE TABLE t (a); CREATE VIEW v AS SELECT 1;"
                         " CREATE VIRTUAL TABLE r USING rtree(id, x0, x1);")
    assert sqlite_safe.is_real_table(connection, "t")
    assert not sqlite_safe.is_real_table(connection, "v")
    assert not sqlite_safe.is_real_table(connection, "r")
    assert not sqlite_safe.is_real_table(connection, "missing")


def test_generated_columns_are_never_read(guarded):
    connection = guarded("CREATE TABLE t (a, b AS (zeroblob(900000000)), c AS (a * 2) STORED);"
                         "INSERT INTO t (a) VALUES (1);")
    assert sqlite_safe.stored_columns(connection, "t") == ["a"]
    assert list(sqlite_safe.table_rows(connection, "t", "t rows")) == [{"_rowid": 1, "a": 1}]


def test_a_value_over_the_cap_comes_back_as_its_length(guarded, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "MAX_VALUE_BYTES", 10)
    connection = guarded("CREATE TABLE t (a, b); INSERT INTO t VALUES ('short', 'much longer than ten');")
    assert list(sqlite_safe.table_rows(connection, "t", "t rows")) == [
        {"_rowid": 1, "a": "short", "b": sqlite_safe.Oversize(20)}]


def test_a_without_rowid_table_is_read_with_no_rowid(guarded):
    connection = guarded("CREATE TABLE t (k PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO t VALUES ('a', 1);")
    assert list(sqlite_safe.table_rows(connection, "t", "t rows")) == [{"_rowid": None, "k": "a", "v": 1}]


# -- parsers use it ----------------------------------------------------------------------------------------


def vscdb(tmp_path: Path, schema: str) -> bytes:
    return database(tmp_path / "state.vscdb", schema).read_bytes()


def global_state(data: bytes) -> list[str]:
    return [row[8] for row in run(FakeBundle({("pearai.global_state", VSCDB): data}), VSCDB, "pearai.global_state.v1")]


def test_an_item_table_that_is_a_view_is_not_queried(tmp_path):
    data = vscdb(tmp_path, f"CREATE VIEW ItemTable AS {INFINITE} SELECT '{ROW}' AS key, x AS value FROM n WHERE x < 0;")
    assert global_state(data) == ["parser: unparseable file"
                                  " (state.vscdb: cannot query ItemTable: no such table: ItemTable)"]


def test_a_generated_value_column_is_not_read(tmp_path):
    data = vscdb(tmp_path, "CREATE TABLE ItemTable (key TEXT UNIQUE, value BLOB AS (zeroblob(900000000)));"
                           f"INSERT INTO ItemTable (key) VALUES ('{ROW}');")
    assert global_state(data) == ["parser: unparseable file"
                                  " (state.vscdb: cannot query ItemTable: no such column: value)"]


def test_an_item_value_over_the_cap_is_a_row(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "MAX_VALUE_BYTES", 100)
    data = vscdb(tmp_path, "CREATE TABLE ItemTable (key TEXT UNIQUE, value BLOB);"
                           f"INSERT INTO ItemTable VALUES ('{ROW}', '{{\"a\":\"{'x' * 200}\"}}');")
    assert global_state(data) == [f"parser: unparseable file (state.vscdb: row '{ROW}' is too large to read "
                                  "(208 long, limit 100))"]


def test_state_db_threads_as_a_view_is_no_threads_table(tmp_path):
    data = database(tmp_path / "s.sqlite", f"CREATE VIEW threads AS {INFINITE} SELECT x AS id FROM n;").read_bytes()
    path = ".codex/state_5.sqlite"
    rows = run(FakeBundle({("codex.state_db", path): data}), path, "codex.state_db.v1")
    assert [row[8] for row in rows] == ["parser: unparseable file (state_5.sqlite: no threads table)"]


def test_state_db_value_over_the_cap_is_a_row_and_the_thread_still_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_safe, "MAX_VALUE_BYTES", 50)
    data = database(tmp_path / "s.sqlite", "CREATE TABLE threads (id TEXT, title TEXT, first_user_message TEXT);"
                                           f"INSERT INTO threads VALUES ('t1', 'a title', '{'p' * 80}');").read_bytes()
    path = ".codex/state_5.sqlite"
    texts = [row[8] for row in run(FakeBundle({("codex.state_db", path): data}), path, "codex.state_db.v1")]
    assert "parser: unparseable record (value too long to read (80 long, limit 50))" in texts
    assert any(text.startswith("session: a title") for text in texts)


# -- end to end: collect, then analyze in a child with its peak memory measured ----------------------------------

@pytest.mark.parametrize("schema", [
    f"CREATE VIEW ItemTable AS {INFINITE} SELECT '{ROW}' AS key, x AS value FROM n WHERE x < 0;",
    f"CREATE VIEW ItemTable AS SELECT '{ROW}' AS key, zeroblob(900000000) AS value;",
    f"CREATE TABLE ItemTable (key TEXT UNIQUE, value BLOB AS (zeroblob(900000000))); "
    f"INSERT INTO ItemTable (key) VALUES ('{ROW}');",
], ids=["recursive-cte-view", "zeroblob-view", "generated-zeroblob-column"])
def test_a_weaponized_state_vscdb_ends_with_bounded_memory(cli, tmp_path, schema):
    bundle = collected(cli, tmp_path, lambda home: database(home / VSCDB, schema))
    peak, texts = analyze_measured(bundle, tmp_path / "t.csv")
    assert peak < 150 * 1024, f"analyze peak {peak / 1024:.0f} MiB"
    assert any(text.startswith("parser: unparseable file (state.vscdb: cannot query ItemTable") for text in texts)


def test_a_state_db_with_many_threads_is_streamed(cli, tmp_path):
    """60k threads, 180k rows: all fetched at once and every secondary row held, 3.5 times the memory."""
    def build(home: Path) -> None:
        path = home / ".codex/state_5.sqlite"
        database(path, "CREATE TABLE threads (id TEXT PRIMARY KEY, created_at INTEGER, model TEXT, cwd TEXT, "
                       "title TEXT, first_user_message TEXT);")
        connection = sqlite3.connect(path)
        connection.executemany("INSERT INTO threads VALUES (?,?,?,?,?,?)",
                               ((f"thread-{n:08d}", 1751447645 + n, "gpt-5", f"/src/p{n % 10}", f"title {n} " * 8,
                                 f"prompt {n} " * 20) for n in range(60_000)))
        connection.commit()
        connection.close()

    bundle = collected(cli, tmp_path, build)
    peak, texts = analyze_measured(bundle, tmp_path / "t.csv", timeout=300)
    assert len(texts) == 240_000  # 3 rows per thread, and its `integrity: session missing:` row (no rollout here)
    assert sum(text.startswith("integrity: session missing: codex.state_db names session thread-") for text in texts) \
        == 60_000
    assert peak < PEAK_MANY_THREADS_KIB, f"analyze peak {peak / 1024:.0f} MiB"


# measured: 94 MiB streamed with every row merged from run files (a 16 MB run buffer), 169 MiB since the
# finished timeline (180k rows, under runs.MEMORY_BYTES) is ordered in memory; fetched at once: 325 MiB
# with run files, about 400 with the timeline in memory. The limit still fails the fetch-at-once reader.
PEAK_MANY_THREADS_KIB = 250 * 1024
