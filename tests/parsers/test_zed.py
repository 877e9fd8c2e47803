"""Zed agent panel parsers, one rule per test (docs/agents/zed.md)."""

from __future__ import annotations

import csv
import json
import random
import shutil
import struct

import pytest
import zstandard

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, every_output
from tests.fixture_sqlite import sqlite_bytes

DB = ".local/share/zed/threads/threads.db"
MDB = ".local/share/zed/threads/threads-db.1.mdb/data.mdb"
SETTINGS = ".config/zed/settings.json"
SCHEMA = ("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL, "
          "data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT, folder_paths_order TEXT, "
          "created_at TEXT);")
CREATED, UPDATED = "2026-08-30T11:58:00+00:00", "2026-08-30T12:04:05+00:00"


def blob(document: dict) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_content_size=False).compress(json.dumps(document).encode())


def database(*threads: tuple) -> bytes:
    """A threads.db of (id, data_type, data bytes) rows."""
    rows = "".join(f"INSERT INTO threads VALUES ('{thread}', 'T', '{UPDATED}', '{kind}', X'{data.hex()}', NULL, "
                   f"'/p', '0', '{CREATED}');" for thread, kind, data in threads)
    return sqlite_bytes(SCHEMA + rows)


def thread_rows(*threads: tuple):
    return drafts(FakeBundle({("zed.threads_db", DB): database(*threads)}), DB, "zed.threads_db.v1")


def v3(*messages, **extra) -> dict:
    return {"version": "0.3.0", "title": "T", "updated_at": "2026-08-30T12:04:05Z", "messages": list(messages),
            **extra}


def agent(content, results=None) -> dict:
    return {"Agent": {"content": content, "tool_results": results or {}, "reasoning_details": None}}


def use(call_id: str, name: str = "terminal") -> dict:
    return {"ToolUse": {"id": call_id, "name": name, "raw_input": "{}", "input": {"command": "ls"},
                        "is_input_complete": True}}


def result(call_id: str, content, name: str = "terminal", error: bool = False) -> dict:
    return {call_id: {"tool_use_id": call_id, "tool_name": name, "is_error": error, "content": content,
                      "output": None}}


# -- threads.db ----------------------------------------------------------------------------------


def test_a_call_joins_the_result_keyed_by_its_id_in_the_same_message():
    rows = thread_rows(("t1", "zstd", blob(v3(agent([use("c1"), use("c2", "grep")],
                                                     {**result("c2", [{"Text": "b"}], "grep"),
                                                      **result("c1", "a")})))))
    pairs = [(row.turn_type, row.tool_use_id, row.tool_name, row.text) for row in rows
             if row.turn_type in ("tool_use", "tool_result")]
    assert pairs[2:] == [("tool_result", "c2", "grep", "b"), ("tool_result", "c1", "terminal", "a")]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_call_without_its_result_and_a_result_without_its_call_each_get_one_parser_row():
    rows = thread_rows(("t1", "zstd", blob(v3(agent([use("c1")], result("c9", "x"))))))
    assert sorted(row.text for row in rows if row.text.startswith("parser:")) == [
        "parser: no result recorded for tool call c1 (terminal)",
        "parser: tool result for terminal with no tool call before it"]


def test_messages_have_no_time_of_their_own_and_carry_the_threads_created_at_as_index():
    rows = thread_rows(("t1", "zstd", blob(v3({"User": {"id": "u", "content": [{"Text": "hi"}]}},
                                              agent([{"Text": "hello"}])))))
    user, assistant = [row for row in rows if row.turn_type in ("user", "assistant")]
    assert (user.timestamp_ns, user.timestamp_source) == (1788091080 * 10**9, "index")
    assert (assistant.timestamp_ns, assistant.timestamp_source) == (1788091080 * 10**9, "index")
    assert user.locator < assistant.locator  # the locator orders them: messages/0 before messages/1
    assert rows[0].text.startswith("session: T (") and rows[0].timestamp_source == "record"


def test_plain_json_rows_are_read_like_zstd_rows():
    document = v3({"User": {"id": "u", "content": [{"Text": "same prompt"}]}})
    zstd_rows = thread_rows(("t1", "zstd", blob(document)))
    json_rows = thread_rows(("t1", "json", json.dumps(document).encode()))
    assert [row.text for row in zstd_rows if row.turn_type == "user"] == ["same prompt"]
    assert [row.text for row in json_rows if row.turn_type == "user"] == ["same prompt"]


def test_an_unreadable_data_value_is_a_parser_row_and_the_thread_is_still_named():
    rows = thread_rows(("t1", "xz", b"\xfd7zXZ"), ("t2", "zstd", b"garbage"))
    texts = [row.text for row in rows]
    assert texts.count("parser: unparseable record (data_type 'xz' is neither 'json' nor 'zstd')") == 1
    assert any(text.startswith("parser: unparseable record (not a valid zstd stream") for text in texts)
    assert sum(text.startswith("session: T (") and "the thread's data was not read" in text for text in texts) == 2


def test_decompressed_content_over_the_thread_limit_is_one_parser_row(monkeypatch):
    from aitrail.analyzer.parsers.zed import blobs

    monkeypatch.setattr(blobs, "MAX_THREAD_BYTES", 200)
    big = v3({"User": {"id": "u", "content": [{"Text": "x" * 5000}]}})
    rows = thread_rows(("t1", "zstd", blob(big)))
    parser = [row.text for row in rows if row.text.startswith("parser:")]
    assert parser == ["parser: thread data over the limit (200 bytes); more than 200 bytes of content, the limit of "
                      "one thread; this thread was not read"]
    assert not [row for row in rows if "xxxxx" in row.text]


def test_past_the_database_budget_later_threads_are_counted_not_decompressed(monkeypatch):
    from aitrail.analyzer.parsers.zed import blobs

    document = blob(v3({"User": {"id": "u", "content": [{"Text": "p" * 300}]}}))
    monkeypatch.setattr(blobs, "MAX_DATABASE_BYTES", 600)
    rows = thread_rows(("t1", "zstd", document), ("t2", "zstd", document), ("t3", "zstd", document))
    assert [row.session_id for row in rows if row.turn_type == "user"] == ["t1"]
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: decompressed thread data of this database over the limit (600 bytes); the threads from here on "
        "were not read (2 in all)"]


def test_a_remote_url_token_and_an_image_never_reach_a_row():
    snapshot = {"worktree_snapshots": [{"worktree_path": "/p", "git_state": {
        "remote_url": "https://eli:ghp_SECRETTOKEN@github.com/e/l.git", "head_sha": "abc", "current_branch": "dev",
        "diff": "+x"}}], "unsaved_buffer_paths": [], "timestamp": "2026-08-30T11:58:00Z"}
    image = {"Image": {"source": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", "size": {"width": 3, "height": 4}}}
    rows = thread_rows(("t1", "zstd", blob(v3({"User": {"id": "u", "content": [{"Text": "see"}, image]}},
                                              initial_project_snapshot=snapshot))))
    assert not [row for row in rows if "ghp_SECRETTOKEN" in row.text or "QUJDREVG" in row.text]
    assert {row.git_branch for row in rows} == {"dev"}
    assert [row.text for row in rows if row.turn_type == "user"] == ["see\n[image 3x4, 26 bytes]"]


def test_a_working_tree_diff_longer_than_the_bound_is_cut_and_says_so(monkeypatch):
    from aitrail.analyzer.parsers.zed import thread

    monkeypatch.setattr(thread, "DIFF_CHARS", 10)
    snapshot = {"worktree_snapshots": [{"worktree_path": "/p", "git_state": {"diff": "0123456789ABCDEF"}}],
                "timestamp": "2026-08-30T11:58:00Z"}
    rows = thread_rows(("t1", "zstd", blob(v3(initial_project_snapshot=snapshot))))
    diff = next(row.text for row in rows if row.text.startswith("project snapshot diff:"))
    assert diff == ("project snapshot diff: /p (16 characters; the first 10 shown, the rest is in the thread's "
                    "JSON):\n0123456789")


def test_version_0_1_0_results_on_the_next_user_message_join_their_call():
    document = {"version": "0.1.0", "summary": "S", "updated_at": "2025-04-11T15:00:00Z", "messages": [
        {"id": 1, "role": "assistant", "segments": [], "tool_uses": [{"id": "c1", "name": "edit_file", "input": {}}]},
        {"id": 2, "role": "user", "segments": [], "tool_results": [
            {"tool_use_id": "c1", "is_error": False, "content": {"Text": "done"}, "output": None}]}]}
    rows = thread_rows(("t1", "json", json.dumps(document).encode()))
    assert [(row.turn_type, row.tool_name, row.text) for row in rows if row.tool_use_id == "c1"] == [
        ("tool_use", "edit_file", "{}"), ("tool_result", "edit_file", "done")]
    assert not [row for row in rows if row.turn_type == "user"]


def test_folder_paths_are_given_in_their_original_order():
    from aitrail.analyzer.parsers.zed.threads_db import folder_list

    assert folder_list("/a\n/b\n/c", "2,0,1") == ["/b", "/c", "/a"]
    assert folder_list("/a\n/b", "9,9") == ["/a", "/b"]  # an order that does not fit: the sorted paths


def test_an_edited_away_turn_and_a_deleted_thread_are_secondary_once_in_the_golden():
    with open(FIXTURES / "zed" / "threads-wal" / "expected.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    texts = [row["text"] for row in rows]
    assert [row["origin"] for row in rows if row["text"] == "Store prices as floats"] == ["secondary"]
    assert [row["origin"] for row in rows if row["text"] == "Store prices as Decimal, never floats"] == ["primary"]
    assert [row["locator"] for row in rows if row["text"] == "Delete data/test.db and forget this chat"] == [
        "wal:0/sqlite:threads:2/data/messages/0/User"]
    assert texts.count("Write a README for the shop") == 1  # the -wal-only thread, live: primary
    deleted = [row for row in rows if row["text"].startswith("session deleted: Delete the test database")]
    assert len(deleted) == 1 and deleted[0]["timestamp_source"] == "none"


# -- legacy LMDB ---------------------------------------------------------------------------------


def test_the_lmdb_reader_gives_what_the_lmdb_library_wrote(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    from aitrail.analyzer.formats.lmdb import Entry, LmdbFile

    generator = random.Random(7)
    environment = lmdb.open(str(tmp_path / "env"), max_dbs=2, map_size=1 << 24)
    named = environment.open_db(b"threads")
    with environment.begin(write=True) as txn:
        for index in range(400):
            txn.put(struct.pack(">I", index), bytes([index % 251]) * generator.randint(0, 9000), db=named)
    with environment.begin() as txn:
        expected = [(bytes(key), bytes(value)) for key, value in txn.cursor(db=named)]
    environment.close()
    reader = LmdbFile((tmp_path / "env" / "data.mdb").read_bytes())
    found = [(item.key, item.value) for item in reader.walk(reader.named_root(b"threads"))]
    assert found == expected
    assert all(isinstance(item, Entry) for item in reader.walk(reader.named_root(b"threads")))


def test_a_hostile_lmdb_file_gives_problems_not_exceptions():
    from aitrail.analyzer.formats.lmdb import LmdbFile, Problem

    data = bytearray((FIXTURES / "zed" / "legacy-lmdb" / "home" / MDB).read_bytes())
    reader = LmdbFile(bytes(data))
    root = reader.named_root(b"threads")
    for page in range(2, len(data) // 4096):  # every node offset and every child pointer turned to garbage
        struct.pack_into("<HH", data, page * 4096 + 16, 0xFFF0, 0xFFF0)
    items = list(LmdbFile(bytes(data)).walk(root))
    assert items and all(isinstance(item, Problem) for item in items)
    looped = bytearray((FIXTURES / "zed" / "legacy-lmdb" / "home" / MDB).read_bytes())
    struct.pack_into("<H", looped, root * 4096 + 10, 0x01)  # the leaf made a branch: children are garbage pages
    assert list(LmdbFile(bytes(looped)).walk(root))


def test_a_legacy_thread_key_is_the_bincode_thread_id():
    from aitrail.analyzer.parsers.zed.legacy import thread_id

    assert thread_id(struct.pack("<Q", 3) + b"abc") == "abc"
    assert thread_id(b"plain") == "plain"


def test_the_legacy_store_is_secondary_and_repeats_of_the_migrated_thread_are_dropped():
    with open(FIXTURES / "zed" / "legacy-lmdb" / "expected.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["origin"] for row in rows if row["text"] == "Summarise CHANGELOG.md"] == ["primary"]
    assert {row["origin"] for row in rows if row["session_id"].startswith("e1e1")} == {"secondary"}
    assert any(row["text"].startswith("warning: unused variable `x0`") and row["text"].endswith("src/main.rs:159")
               for row in rows)  # the value on overflow pages, whole


# -- settings.json -------------------------------------------------------------------------------


def settings_rows(document: str):
    return drafts(FakeBundle({("zed.settings", SETTINGS): document.encode()}), SETTINGS, "zed.settings.v1")


def test_every_permission_pattern_is_its_own_row_with_its_tool():
    rows = settings_rows('{"agent": {"tool_permissions": {"default": "allow", "tools": {"terminal": {'
                         '"always_deny": [{"pattern": "a"}, {"pattern": "b"}]}}}}} // comment')
    assert [(row.tool_name, row.text.split(" (from")[0]) for row in rows] == [
        ("", 'permission setting: agent.tool_permissions.default="allow"'),
        ("terminal", 'permission setting: agent.tool_permissions.tools.terminal.always_deny={"pattern":"a"}'),
        ("terminal", 'permission setting: agent.tool_permissions.tools.terminal.always_deny={"pattern":"b"}')]
    assert {row.timestamp_source for row in rows} == {"file-mtime"}


def test_the_pre_0_224_switch_and_the_default_model_are_read():
    rows = settings_rows('{"assistant": {"always_allow_tool_actions": true, '
                         '"default_model": {"provider": "openai", "model": "gpt-5"}}}')
    assert rows[0].text.startswith("permission setting: assistant.always_allow_tool_actions=true")
    assert (rows[1].text.split(" (")[0], rows[1].model) == ("model: gpt-5", "gpt-5")


def test_no_planted_secret_of_the_fixture_reaches_any_output(cli, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "zed" / "threads-current" / "home", home)
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    outputs = every_output(cli, bundle, tmp_path)
    assert all(b"claude-sonnet-4-5" in output for output in outputs[:2])  # the settings and threads were read
    for planted in (b"sk-FAKEzedSETTINGSkey", b"ghp_FAKEzedMCPtoken", b"ghp_FAKEzedTOKEN"):
        assert not [output for output in outputs if planted in output]
