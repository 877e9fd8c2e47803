"""Void parsers, one rule per test (docs/agents/void.md)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, every_output
from tests.fixture_sqlite import build, sqlite_bytes
from tests.test_golden import timeline

CASES = FIXTURES / "void"
STATE = ".config/Void/User/globalStorage/state.vscdb"
KEY = "void.chatThreadStorageII"
HEADER = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);\n"
CREATED = "2026-08-29T09:00:00.000Z"
PLANTED = ("sk-ant-api03-FAKE-void-planted-0d9c", "lin_api_FAKEplanted0123", "PLANTED-IN-CIPHERTEXT")


def quoted(value: object) -> str:
    return (value if isinstance(value, str) else json.dumps(value)).replace("'", "''")


def row_sql(key: str, value: object) -> str:
    return f"INSERT INTO ItemTable VALUES ('{quoted(key)}', '{quoted(value)}');\n"


def thread(tid: str, messages: list, **times) -> dict:
    return {"id": tid, "createdAt": times.get("created", CREATED), "lastModified": times.get("modified", CREATED),
            "messages": messages, "state": {}, "filesWithUserChanges": {}}


def tool(kind: str, content: str = "out", name: str = "run_command", call_id: str = "call_1", **extra) -> dict:
    return {"role": "tool", "type": kind, "name": name, "id": call_id, "params": {"command": "ls"},
            "rawParams": {"command": "ls"}, "result": None, "content": content, "mcpServerName": None, **extra}


def state_rows(threads: dict, *more: str, path: str = STATE, store: str = "void.global_state"):
    bundle = FakeBundle({(store, path): sqlite_bytes(HEADER + row_sql(KEY, threads) + "".join(more))})
    return drafts(bundle, path, "void.thread_storage.v1")


def wal_db(tmp_path: Path, versions: list[dict]) -> tuple[bytes, bytes]:
    sql = tmp_path / "state.sql"
    updates = "".join(f"UPDATE ItemTable SET value = '{quoted(value)}' WHERE key = '{KEY}';\n"
                      for value in versions[1:])
    sql.write_text("-- target: unused\n" + HEADER + row_sql(KEY, versions[0]) + "-- wal\n" + updates)
    build(sql, tmp_path / "state.vscdb")
    return (tmp_path / "state.vscdb").read_bytes(), (tmp_path / "state.vscdb-wal").read_bytes()


def test_messages_take_their_threads_time_as_index_and_the_thread_row_its_own():
    rows = state_rows({"t1": thread("t1", [{"role": "user", "content": "sent", "displayContent": "typed"},
                                           {"role": "assistant", "displayContent": "answer", "reasoning": "why"}],
                                    modified="2026-08-29T09:03:12.000Z")})
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows] == [
        ("system", f"thread: created {CREATED}, last modified 2026-08-29T09:03:12.000Z, 2 messages (key {KEY})",
         "record"),
        ("user", "typed", "index"), ("thinking", "why", "index"), ("assistant", "answer", "index")]
    assert len({row.timestamp_ns for row in rows}) == 1 and rows[0].timestamp_ns is not None
    assert [row.locator for row in rows[1:]] == ["sqlite:ItemTable:1/t1/messages/0/displayContent",
                                                 "sqlite:ItemTable:1/t1/messages/1/reasoning",
                                                 "sqlite:ItemTable:1/t1/messages/1/displayContent"]


def test_a_thread_without_times_is_untimed_never_given_one():
    rows = state_rows({"t1": {"id": "t1", "messages": [{"role": "user", "displayContent": "hello"}]}})
    assert {(row.timestamp_ns, row.timestamp_source) for row in rows} == {(None, "none")}
    assert rows[0].text.startswith("thread: created (not recorded), last modified (not recorded)")


def test_a_tool_message_is_its_call_and_its_result_joined_by_its_own_id():
    rows = state_rows({"t1": thread("t1", [tool("success", "file.txt", name="ls_dir", call_id="call_v1")])})
    calls = [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows[1:]]
    assert calls == [("tool_use", "ls_dir", "call_v1", '{"command":"ls"}'),
                     ("tool_result", "ls_dir", "call_v1", "file.txt")]


def test_only_the_users_rejection_is_a_denial():
    rows = state_rows({"t1": thread("t1", [tool("rejected", "Tool call was rejected by the user.", call_id="a"),
                                           tool("rejected", "interrupted...", call_id="b")])})
    assert [(row.tool_use_id, row.text) for row in rows if row.text.startswith("permission decision")] == [
        ("a", "permission decision: denied")]


def test_errors_invalid_params_pending_calls_and_interrupted_streams():
    rows = state_rows({"t1": thread("t1", [
        tool("tool_error", "EACCES", call_id="e"), tool("invalid_params", "bad command", call_id="i"),
        tool("tool_request", "(Awaiting user permission...)", call_id="r"),
        tool("running_now", "(value not received yet...)", call_id="n"),
        {"role": "interrupted_streaming_tool", "name": "edit_file", "mcpServerName": None}])})
    texts = [(row.turn_type, row.text) for row in rows[1:] if row.turn_type != "tool_use"]
    assert texts == [("tool_result", "error: EACCES"), ("tool_result", "invalid params: bad command"),
                     ("system", "parser: no result recorded for tool call r (run_command)"),
                     ("system", "parser: no result recorded for tool call n (run_command)"),
                     ("system", "interrupted: tool call edit_file cut off while it streamed")]


def test_an_mcp_call_names_its_server_and_uris_are_paths():
    uri = {"$mid": 1, "fsPath": "/home/jo/a.ts", "path": "/home/jo/a.ts", "scheme": "file"}
    rows = state_rows({"t1": thread("t1", [
        tool("success", "[]", name="k3x9qa_list_issues", mcpServerName="github"),
        {**tool("success", "ok", name="read_file"), "params": {"uri": uri}},
        {"role": "user", "displayContent": "x", "selections": [{"type": "CodeSelection", "range": [3, 9], "uri": uri}]},
        {"role": "checkpoint", "type": "user_edit",
         "voidFileSnapshotOfURI": {"/home/jo/a.ts": {"entireFileCode": "S"}}}])})
    texts = [row.text for row in rows]
    assert 'MCP server github: {"command":"ls"}' in texts and '{"uri":"/home/jo/a.ts"}' in texts
    assert "attachment: CodeSelection /home/jo/a.ts lines 3-9" in texts
    assert "checkpoint (user_edit): /home/jo/a.ts" in texts and not [text for text in texts if "S" == text]


def test_the_encrypted_settings_are_one_untimed_row_with_their_size_never_their_bytes():
    cipher = json.dumps({"type": "Buffer", "data": list(b"v11PLANTED-IN-CIPHERTEXT")})
    rows = state_rows({}, row_sql("void.settingsServiceStorageII", cipher))
    assert len(rows) == 1
    row = rows[0]
    assert row.text.startswith("parser: void.settingsServiceStorageII cannot be read: encrypted by Void's "
                               "IEncryptionService with Electron safeStorage")
    assert "auto-approve settings" in row.text and row.text.endswith(f"; {len(cipher)} bytes")
    assert (row.timestamp_ns, row.timestamp_source) == (None, "none")
    assert "PLANTED" not in row.text and "118" not in row.text


def test_a_thread_deleted_since_is_recovered_from_a_wal_commit_once_and_a_settled_call_is_quiet(tmp_path: Path):
    kept = thread("kept", [{"role": "user", "displayContent": "go"}, tool("tool_request", call_id="p")])
    done = thread("kept", [{"role": "user", "displayContent": "go"}, tool("success", "fine", call_id="p")])
    gone = thread("gone", [{"role": "user", "displayContent": "print the password"}])
    # the fake bundle opens the main file without its -wal: the file holds the last version, as after a checkpoint
    database, wal = wal_db(tmp_path, [{"kept": done}, {"kept": kept, "gone": gone}, {"kept": kept, "gone": gone},
                                      {"kept": done}])
    bundle = FakeBundle({("void.global_state", STATE): database, ("void.global_state", STATE + "-wal"): wal})
    rows = drafts(bundle, STATE, "void.thread_storage.v1")
    secondary = [(row.locator.split("/")[0], row.session_id, row.text) for row in rows if row.origin == "secondary"]
    assert secondary == [("wal:1", "gone", f"thread: created {CREATED}, last modified {CREATED}, 1 messages "
                                           f"(key {KEY})"),
                         ("wal:1", "gone", "print the password")]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_the_backup_keeps_a_pending_call_quiet_only_for_threads_the_live_database_holds():
    live = thread("kept", [tool("success", "fine", call_id="p")])
    old = {"kept": thread("kept", [tool("tool_request", call_id="p")]),
           "gone": thread("gone", [tool("tool_request", call_id="q")])}
    bundle = FakeBundle({("void.global_state", STATE): sqlite_bytes(HEADER + row_sql(KEY, {"kept": live})),
                         ("void.global_state_backup", STATE + ".backup"): sqlite_bytes(HEADER + row_sql(KEY, old))})
    texts = [row.text for row in drafts(bundle, STATE + ".backup", "void.thread_storage.v1")]
    assert [text for text in texts if text.startswith("parser:")] == [
        "parser: no result recorded for tool call q (run_command)"]


def test_an_older_key_gives_only_what_the_current_key_lacks_as_secondary():
    current = {"t1": thread("t1", [{"role": "user", "displayContent": "same"}])}
    older = {"t1": thread("t1", [{"role": "user", "displayContent": "same"}, {"role": "user", "displayContent": "x"}])}
    rows = state_rows(current, row_sql("void.chatThreadStorageI", older))
    assert [(row.origin, row.text) for row in rows if row.turn_type == "user"] == [(None, "same"), ("secondary", "x")]


def test_damaged_values_are_parser_rows_never_a_raise():
    odd = [5, None, "s", ["x"], {"a": 1}]
    threads = {"a": "not an object", "b": {"id": 7, "createdAt": 5, "messages": {"no": "list"}},
               "c": thread("c", [*odd, {"role": 5}, {"role": "robot"}, tool("weird"),
                                 {"role": "tool", "type": "success", "name": ["x"], "id": None, "params": odd},
                                 {"role": "user", "selections": odd}, {"role": "assistant", "anthropicReasoning": odd},
                                 {"role": "checkpoint", "voidFileSnapshotOfURI": odd}])}
    rows = state_rows(threads)
    assert rows and all(isinstance(row.text, str) for row in rows)
    assert len([row for row in rows if row.text.startswith("parser: unparseable record")]) == 10
    assert state_rows("not an object of threads")[0].text.startswith("parser: unparseable record")
    for data in (b"no database here" * 20, sqlite_bytes("CREATE TABLE other (x);"),
                 sqlite_bytes(HEADER + f"INSERT INTO ItemTable VALUES ('{KEY}', '{{broken');")):
        rows = drafts(FakeBundle({("void.global_state", STATE): data}), STATE, "void.thread_storage.v1")
        assert len(rows) == 1 and rows[0].text.startswith("parser: "), rows


def test_mcp_json_names_servers_without_their_secrets():
    path = ".void-editor/mcp.json"
    bundle = FakeBundle({("void.mcp_config", path): json.dumps({"mcpServers": {"linear": {
        "command": "npx", "env": {"LINEAR_API_KEY": "lin_api_FAKEplanted0123"}}}}).encode()})
    texts = [row.text for row in drafts(bundle, path, "void.mcp_config.v1")]
    assert texts == ['permission setting: mcpServers[linear]={"command":"npx","env":["LINEAR_API_KEY"]} '
                     "(from mcp.json, file mtime)"]


def test_the_threads_wal_case_recovers_one_thread_from_the_wal_and_one_from_the_backup(cli, tmp_path: Path):
    rows = list(csv.DictReader(io.StringIO(timeline(cli, CASES / "threads-wal", tmp_path).decode())))
    users = {(row["session_id"][-2:], row["origin"], row["store"], row["locator"].split("/")[0]) for row in rows
             if row["turn_type"] == "user"}
    assert users == {("a1", "primary", "void.global_state", "sqlite:ItemTable:1"),
                     ("b2", "secondary", "void.global_state", "wal:0"),
                     ("c3", "secondary", "void.global_state_backup", "sqlite:ItemTable:1")}
    assert not [row for row in rows if row["text"].startswith("parser: no result")]


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    timeline(cli, CASES / "threads-wal", tmp_path)
    outputs = every_output(cli, tmp_path / "case.tar.zst", tmp_path)
    assert b"rename foo to bar" in outputs[0] and b"void.settingsServiceStorageII cannot be read" in outputs[0]
    for produced in outputs:
        assert not [value for value in PLANTED if value.encode() in produced]
