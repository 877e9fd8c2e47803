"""Continue parsers, one rule per test (docs/agents/continue.md)."""

from __future__ import annotations

import csv
import io
import json

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, all_decompressed
from tests.fixture_sqlite import dump
from tests.test_golden import timeline

SESSIONS = ".continue/sessions/"
INDEX_PATH = SESSIONS + "sessions.json"
D2 = ".continue/dev_data/0.2.0/"


def rows_of(store: str, path: str, data: bytes, parser: str, more: dict | None = None):
    files = {(f"continue.{store}", path): data, **(more or {})}
    return drafts(FakeBundle(files), path, f"continue.{parser}.v1")


def session_rows(history: list, index: list | None = None):
    more = {("continue.session_index", INDEX_PATH): json.dumps(index).encode()} if index is not None else {}
    data = json.dumps({"sessionId": "s1", "workspaceDirectory": "file:///home/alice/w", "history": history}).encode()
    return rows_of("sessions", SESSIONS + "s1.json", data, "session", more)


CALL = {"id": "call_1", "type": "function",
        "function": {"name": "run_terminal_command", "arguments": '{"command":"ls"}'}}


def test_a_tool_result_is_never_a_user_row():
    history = [{"message": {"role": "user", "content": "list files"}},
               {"message": {"role": "assistant", "content": "", "toolCalls": [CALL]},
                "toolCallStates": [{"toolCallId": "call_1", "toolCall": CALL, "status": "done"}]},
               {"message": {"role": "tool", "content": "a.py\nb.py", "toolCallId": "call_1"}}]
    rows = session_rows(history)
    assert [row.text for row in rows if row.turn_type == "user"] == ["list files"]
    (result,) = [row for row in rows if row.turn_type == "tool_result"]
    assert (result.tool_use_id, result.tool_name, result.text) == ("call_1", "run_terminal_command", "a.py\nb.py")


def test_every_tool_use_with_an_id_has_its_result_or_the_no_result_row():
    history = [{"message": {"role": "assistant", "content": "", "toolCalls": [CALL]},
                "toolCallState": {"toolCallId": "call_1", "toolCall": CALL, "status": "calling"}}]
    rows = session_rows(history)
    assert [row.text for row in rows][-1] == "parser: no result recorded for tool call call_1 (run_terminal_command)"


def test_a_rejected_call_is_denied_with_its_tool_use_id():
    history = [{"message": {"role": "assistant", "content": "pushing", "toolCalls": [CALL]},
                "toolCallStates": [{"toolCallId": "call_1", "toolCall": CALL, "status": "canceled"}]},
               {"message": {"role": "tool", "content": "The user skipped the tool call.", "toolCallId": "call_1"}}]
    rows = session_rows(history)
    (denied,) = [row for row in rows if row.text == "permission decision: denied"]
    assert denied.tool_use_id == "call_1" and denied.locator == "json:/history/0/toolCallStates/0/status"


def test_an_image_part_is_the_shared_placeholder_never_its_base64():
    pasted = {"type": "imageUrl", "imageUrl": {"url": "data:image/jpeg;base64," + "QUJD" * 300}}
    linked = {"type": "imageUrl", "imageUrl": {"url": "https://example.com/diagram.png"}}
    history = [{"message": {"role": "user", "content": [{"type": "text", "text": "why this error?"}, pasted, linked]}}]
    rows = session_rows(history)
    assert [row.text for row in rows if row.turn_type == "user"] == [
        "why this error?\n[image image/jpeg, 900 bytes]\n[image https://example.com/diagram.png]"]
    assert not [row for row in rows if "QUJD" in row.text]


def test_rows_take_the_index_time_and_an_unlisted_session_none():
    history = [{"message": {"role": "user", "content": "hi"}}]
    listed = session_rows(history, [{"sessionId": "s1", "dateCreated": "1763474530000"}])
    assert (listed[0].timestamp_ns, listed[0].timestamp_source) == (1763474530000 * 10**6, "index")
    assert session_rows(history, [])[0].timestamp_ns is None
    assert listed[0].project_path == "/home/alice/w"


def test_an_index_entry_whose_file_is_gone_with_and_without_message_count():
    index = [{"sessionId": "gone", "title": "Old", "dateCreated": "1763474530000", "messageCount": 2},
             {"sessionId": "gone2", "title": "Older", "dateCreated": "1763474520000"}]
    rows = rows_of("session_index", INDEX_PATH, json.dumps(index).encode(), "session_index")
    assert [row.text for row in rows] == [
        "session: Old (listed in sessions.json with messageCount 2; its session file is not in the bundle)",
        "session: Older (listed in sessions.json; its session file is not in the bundle)"]


def interaction(**fields) -> bytes:
    record = {"eventName": "chatInteraction", "schema": "0.2.0", "timestamp": "2025-11-19T09:30:12.000Z",
              "userId": "alice@example.com", "userAgent": "Visual Studio Code/1.106.1 (Continue/1.2.10)",
              "selectedProfileId": "local", "modelTitle": "GPT-5", "sessionId": "gone",
              "prompt": "<user>\nwrite the notes", "completion": "## Notes", **fields}
    return json.dumps(record).encode() + b"\n"


def test_chat_interaction_recovers_a_deleted_sessions_turns_at_their_own_time():
    rows = rows_of("dev_data_chat_interaction", D2 + "chatInteraction.jsonl", interaction(),
                   "dev_data_chat_interaction")
    assert [(row.turn_type, row.text, row.session_id, row.timestamp_source) for row in rows] == [
        ("user", "write the notes", "gone", "record"), ("assistant", "## Notes", "gone", "record")]


def test_a_torn_last_dev_data_line_is_one_parser_row_and_the_complete_lines_are_read():
    data = interaction() + interaction()[:60]
    rows = rows_of("dev_data_chat_interaction", D2 + "chatInteraction.jsonl", data, "dev_data_chat_interaction")
    assert [row.turn_type for row in rows] == ["user", "assistant", "system"]
    assert rows[-1].text.startswith("parser: unparseable line (torn last line") and rows[-1].locator == "line:2"


def test_no_account_identity_in_any_dev_data_row():
    usage = {"eventName": "toolUsage", "timestamp": "2025-11-19T09:30:40.000Z", "userId": "alice@example.com",
             "selectedProfileId": "local", "toolCallId": "c1", "functionName": "ls", "toolCallArgs": "{}",
             "accepted": True, "output": []}
    rows = rows_of("dev_data_chat_interaction", D2 + "chatInteraction.jsonl", interaction(),
                   "dev_data_chat_interaction")
    rows += rows_of("dev_data_tool_usage", D2 + "toolUsage.jsonl", json.dumps(usage).encode() + b"\n",
                    "dev_data_tool_usage")
    assert rows and not any("alice@example.com" in row.text for row in rows)


def test_permissions_yaml_gives_one_setting_row_per_pattern_and_bad_keys_are_parser_rows():
    data = b"allow:\n  - Read\n  - Bash(npm test)\nask: []\nexclude:\n  - Fetch\ndeny:\n  - Write\n"
    rows = rows_of("cli_permissions", ".continue/permissions.yaml", data, "permissions")
    assert [row.text for row in rows][:3] == [
        'permission setting: allow="Read" (from permissions.yaml, file mtime)',
        'permission setting: allow="Bash(npm test)" (from permissions.yaml, file mtime)',
        'permission setting: exclude="Fetch" (from permissions.yaml, file mtime)']
    assert rows[3].text.startswith("parser: unparseable record (key 'deny'") and rows[3].locator == "yaml:/deny"
    assert {row.timestamp_source for row in rows[:3]} == {"file-mtime"}


def test_permissions_yaml_that_is_not_yaml_or_nests_too_deep_is_one_parser_row():
    for data in (b"allow: [Read\n", b"allow: " + b"[" * 5000 + b"]" * 5000 + b"\n", b"# only a comment\n"):
        rows = rows_of("cli_permissions", ".continue/permissions.yaml", data, "permissions")
        assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file"), data[:20]


def test_input_history_prompts_are_user_rows_at_their_own_time():
    data = json.dumps([{"text": "/clear", "timestamp": 1763650805000}, {"text": "run the tests", "timestamp": "x"}])
    rows = rows_of("cli_input_history", ".continue/input_history.json", data.encode(), "cli_input_history")
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows] == [
        ("user", "/clear", "record"), ("user", "run the tests", "none")]


def test_the_devdata_rows_only_in_the_wal_are_read(cli, tmp_path):
    case = FIXTURES / "continue" / "databases"
    database = case / "home" / ".continue" / "dev_data" / "devdata.sqlite"
    assert not any("3105" in statement for statement in dump(database, with_wal=False))
    rows = list(csv.DictReader(io.StringIO(timeline(cli, case, tmp_path).decode())))
    newest = [row for row in rows if "promptTokens=3105" in row["text"]]
    assert len(newest) == 1 and newest[0]["timestamp_utc"] == "2025-11-19T14:00:09.000Z"
    assert newest[0]["origin"] == "secondary"


SECRETS = (b"CONTINUEFIXTURESECRET", b"CONTINUEFIXTUREENV", b"CONTINUEFIXTUREACCESS", b"CONTINUEFIXTUREBIN")


def test_credentials_are_never_collected_nor_in_any_row(cli, tmp_path):
    case = FIXTURES / "continue" / "cli"
    bundle = tmp_path / "b.tar.zst"
    collected = cli("collect", "--home", case / "home", "-o", bundle, "--quiet")
    assert collected.exit_code == 0, collected.output
    payload = all_decompressed(bundle)
    assert b"Bash(npm test)" in payload, "permissions.yaml is collected"
    leaked = [secret for secret in SECRETS if secret in payload]
    assert leaked == [], "config.yaml, .env, auth.json and the .bin secrets are never collected"
    timeline_text = timeline(cli, case, tmp_path / "t").decode()
    assert "CONTINUEFIXTURE" not in timeline_text and "alice@example.com" not in timeline_text


def test_continue_global_dir_moves_the_root_and_its_sessions_are_read(cli, tmp_path):
    home = tmp_path / "me"
    moved = home / "work" / "continue-data" / "sessions"
    moved.mkdir(parents=True)
    history = [{"message": {"role": "user", "content": "where is the root?"}, "contextItems": []}]
    (moved / "s1.json").write_text(json.dumps({"sessionId": "s1", "workspaceDirectory": "/home/alice/w",
                                               "history": history}))
    (moved / "sessions.json").write_text(json.dumps([{"sessionId": "s1", "dateCreated": "1763474530000"}]))
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    env = {"HOME": str(home), "CONTINUE_GLOBAL_DIR": str(home / "work" / "continue-data")}
    collected = cli("collect", "--agent", "continue", "-o", bundle, "--quiet", env=env)
    assert collected.exit_code in (0, 3), collected.stderr
    assert cli("analyze", bundle, "-o", out, "--quiet").exit_code == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(row["turn_type"], row["text"], row["timestamp_source"]) for row in rows] == [
        ("user", "where is the root?", "index")]


def test_session_calls_past_the_call_budget_are_written_and_counted_not_held(monkeypatch):
    """A session's calls are joined to tool items anywhere later, so each id was held to the end of the file."""
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    second = {**CALL, "id": "call_2"}
    history = [{"message": {"role": "assistant", "content": "", "toolCalls": [CALL, second]}},
               {"message": {"role": "tool", "content": "a.py", "toolCallId": "call_2"}},
               {"message": {"role": "assistant", "content": "Done."}}]
    rows = session_rows(history)
    assert [(row.turn_type, row.tool_use_id) for row in rows if row.turn_type.startswith("tool")] == [
        ("tool_use", "call_1"), ("tool_use", "call_2"), ("tool_result", "call_2")]
    notes = [(row.text, row.locator) for row in rows if row.text.startswith("parser:")]
    assert notes[0] == ("parser: tool result for call_2 with no tool call before it", "json:/history/1/message/content")
    assert notes[1][0] == "parser: no result recorded for tool call call_1 (run_terminal_command)"
    assert notes[2][0].startswith("parser: tool calls over the limit (1 call ids") and "(1 in all)" in notes[2][0]
    assert notes[2][1] == "json:/history/0/message/toolCalls/1" and len(notes) == 3
    assert "Done." in [row.text for row in rows]
