"""Trae parsers and catalog, one rule of docs/agents/trae.md per test."""

from __future__ import annotations

import json
from pathlib import Path

from aitrail.collector import catalog
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import every_output
from tests.fixture_sqlite import sqlite_bytes
from tests.test_golden import frozen_copy

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "trae"
FOLDER = ".config/Trae/User/workspaceStorage/7d2e4f10a9b84c3d9e5f6a7b8c9d0e1f"
DB = f"{FOLDER}/state.vscdb"
MAP = {("trae.workspace_map", f"{FOLDER}/workspace.json"): b'{"folder": "file:///home/mei/src/shop"}'}
STORAGE, HISTORY = "memento/icube-ai-agent-storage", "icube-ai-agent-storage-input-history"


def database(**values) -> bytes:
    rows = ";".join(f"INSERT INTO ItemTable VALUES ('{key}', '{json.dumps(value).replace(chr(39), chr(39) * 2)}')"
                    for key, value in values.items())
    return sqlite_bytes(f"CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);{rows};")


def storage(*sessions, **top) -> bytes:
    return database(**{STORAGE: {"list": list(sessions), **top}})


def rows_of(data: bytes, parser: str = "trae.agent_storage.v1", store: str = "trae.workspace_state", files=None):
    return drafts(FakeBundle({**MAP, (store, DB): data, **(files or {})}), DB, parser)


def test_a_session_row_names_title_times_and_message_count_at_its_iso_created_at():
    rows = rows_of(storage({"sessionId": "s1", "title": "Fix CI", "createdAt": "2026-08-30T03:12:44.000Z",
                            "updatedAt": "2026-08-30T04:00:00.000Z", "messages": []}))
    assert rows[0].text == ("session: Fix CI (sessionId s1, createdAt 2026-08-30T03:12:44.000Z, updatedAt "
                            "2026-08-30T04:00:00.000Z, no messages kept locally)")
    assert rows[0].timestamp_ns == 1788059564 * 10 ** 9 and rows[0].timestamp_source == "record"
    assert rows[0].session_id == "s1" and rows[0].project_path == "/home/mei/src/shop"


def test_epoch_numbers_are_read_by_their_size_ms_or_seconds():
    rows = rows_of(storage({"sessionId": "a", "createdAt": 1788059564000, "messages": []},
                           {"sessionId": "b", "createdAt": 1788059564, "messages": []},
                           {"sessionId": "c", "createdAt": True, "messages": []}))
    assert [row.timestamp_ns for row in rows] == [1788059564 * 10 ** 9, 1788059564 * 10 ** 9, None]
    assert rows[2].timestamp_source == "none"


def test_roles_give_user_and_assistant_rows_and_other_roles_a_named_system_row():
    rows = rows_of(storage({"sessionId": "s", "createdAt": "2026-08-30T03:12:44Z", "messages": [
        {"role": "user", "content": "hi", "timestamp": "2026-08-30T03:13:00Z"},
        {"role": "assistant", "content": "hello"},
        {"role": "tool", "content": "ran"},
        {"role": "user", "content": ""}]}))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("user", "hi"), ("assistant", "hello"), ("system", "message (tool): ran")]


def test_a_message_without_a_time_takes_the_sessions_created_at_as_index():
    rows = rows_of(storage({"sessionId": "s", "createdAt": "2026-08-30T03:12:44Z", "messages": [
        {"role": "user", "content": "hi", "timestamp": "yesterday"}]}))
    assert rows[1].timestamp_ns == rows[0].timestamp_ns and rows[1].timestamp_source == "index"


def test_the_session_model_is_one_row_and_a_message_model_a_change_row():
    rows = rows_of(storage({"sessionId": "s", "createdAt": "2026-08-30T03:12:44Z", "model": "doubao-1.6",
                            "messages": [{"role": "assistant", "content": "a"},
                                         {"role": "assistant", "content": "b", "model": "claude-4"},
                                         {"role": "system", "content": "c"},
                                         {"role": "assistant", "content": "d"}]}))
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: doubao-1.6", "model: doubao-1.6 -> claude-4"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["doubao-1.6", "claude-4", "claude-4"]


def test_agent_task_content_is_a_system_row_as_written():
    rows = rows_of(storage({"sessionId": "s", "messages": [
        {"role": "assistant", "content": "", "agentTaskContent": {"proposal": "p"}}]}))
    assert rows[-1].text == 'agent task content: {"proposal":"p"}'


def test_damaged_entries_are_parser_rows_and_the_rest_is_read():
    rows = rows_of(storage("x", {"sessionId": "s", "messages": [7, {"role": "user", "content": "ok"}]},
                           {"sessionId": "t", "messages": "lost"}))
    texts = [row.text for row in rows]
    assert "parser: unparseable record (session entry is not an object): x" in texts
    assert "parser: unparseable record (message is not an object): 7" in texts
    assert "parser: unparseable record (messages is not a list): lost" in texts
    assert "ok" in texts
    assert [row.text for row in rows_of(database(**{STORAGE: [1, 2]}))] == [
        "parser: unparseable record (memento/icube-ai-agent-storage has no list of sessions): [1, 2]"]


def test_a_file_that_is_not_a_database_or_has_no_item_table_is_one_row_per_parser():
    for parser in ("trae.agent_storage.v1", "trae.wal_history.v1", "trae.input_history.v1"):
        assert [row.text for row in rows_of(b"not sqlite at all", parser)] == [
            "parser: unparseable file (state.vscdb: cannot read: file is not a database)"]
        assert [row.text for row in rows_of(sqlite_bytes("CREATE TABLE t(x);"), parser)] == [
            "parser: unparseable file (cannot query ItemTable: no such table: ItemTable)"]


def test_input_history_gives_untimed_user_rows_and_names_damaged_entries():
    rows = rows_of(database(**{HISTORY: [{"inputText": "first"}, {"text": "x"}, {"inputText": "  "}]}),
                   "trae.input_history.v1", "trae.input_history")
    assert [(row.turn_type, row.text, row.timestamp_source, row.session_id) for row in rows] == [
        ("user", "first", "none", ""),
        ("system", 'parser: unparseable record (input history entry without inputText): {"text":"x"}', "none", "")]
    assert rows[0].project_path == "/home/mei/src/shop"


def test_without_workspace_json_rows_have_no_project():
    rows = drafts(FakeBundle({("trae.workspace_state", DB): storage({"sessionId": "s", "messages": []})}), DB,
                  "trae.agent_storage.v1")
    assert rows[0].project_path == ""


def test_secret_rows_are_never_read():
    data = database(**{STORAGE: {"list": []}, 'secret://{"extensionId":"x","key":"k"}': {"list": [
        {"sessionId": "PLANTED", "messages": [{"role": "user", "content": "PLANTED"}]}]}})
    assert not [row for row in rows_of(data) if "PLANTED" in row.text]


def test_the_wal_history_fixture_gives_the_turns_a_rewrite_removed_once(cli, tmp_path):
    from tests.test_golden import timeline

    rows = timeline(cli, CASES / "wal-rewrites", tmp_path).decode()
    assert rows.count("Paginate GET /orders with a cursor") == 1  # in the live list and in WAL commit 1: once
    assert "wal:1/sqlite:ItemTable:1/list/0/messages/2/content" in rows  # a3, removed by the rewind
    assert "Also return a next link header" in rows


def _bundle(cli, tmp_path: Path, case: str) -> Path:
    home = frozen_copy(CASES / case / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    return bundle


def test_the_encrypted_database_is_opaque_in_the_summary_and_one_timeline_row_per_file(cli, tmp_path):
    bundle = _bundle(cli, tmp_path, "encrypted-database")
    summary, out = tmp_path / "s.json", tmp_path / "t.jsonl"
    result = cli("analyze", bundle, "-o", out, "--format", "jsonl", "--summary", summary, "--quiet")
    assert result.exit_code == 0, result.stderr
    entries = {item["path"].rsplit("/", 1)[-1]: item for item in json.loads(summary.read_text())["not_parsed"]}
    for name, size in (("database.db", 16384), ("database.db-wal", 4128)):
        entry = entries[name]
        assert entry["opaque"] is True and entry["size"] == size and entry["store"] == "trae.agent_database"
        assert "SQLCipher" in entry["reason"] and entry["modified_utc"] == "2025-10-03T00:00:00.000Z"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    opaque = sorted(row["text"] for row in rows if row["store"] == "trae.agent_database")
    assert len(opaque) == 2 and all(text.startswith("integrity: not parsed: cannot be read: SQLCipher-encrypted")
                                    for text in opaque)
    assert f"; 16384 bytes, SHA-256 {entries['database.db']['sha256']}" in " ".join(opaque)


def test_no_planted_credential_of_the_global_database_reaches_any_output(cli, tmp_path):
    outputs = every_output(cli, _bundle(cli, tmp_path, "agent-storage"), tmp_path)
    for planted in (b"PLANTED", b"user-PLANTED-4471", b"trae-token-PLANTED-9c2e", b"v10PLANTED"):
        assert not [output for output in outputs if planted in output]
    assert b"Add a dark mode toggle to the navbar" in outputs[0]


def test_the_catalog_covers_both_products_on_three_systems_and_the_agent_database_is_opaque():
    trae = catalog.load().agent("trae")
    paths = set(trae.roots[0].paths)
    for product in ("Trae", "Trae CN"):
        assert {f".config/{product}", f"Library/Application Support/{product}",
                f"AppData/Roaming/{product}"} <= paths
    stores = {store.id: store for store in trae.stores}
    assert stores["agent_database"].opaque and "SQLCipher" in stores["agent_database"].opaque
    assert stores["agent_database"].parser is None and stores["agent_database"].format == "sqlite"
    assert {stores[name].origin for name in ("workspace_state_wal", "workspace_state_backup", "input_history")} == {
        "secondary"}
