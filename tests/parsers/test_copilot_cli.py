"""GitHub Copilot CLI parsers, one rule per test (docs/agents/copilot-cli.md)."""

from __future__ import annotations

import json
import shutil

from aitrail.analyzer.report.outcomes import DECIDED_RULE, DECIDED_USER, read_decision
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records, every_output
from tests.fixture_sqlite import sqlite_bytes

SESSION = "5e3b9c1d-7a42-4f0e-b6d8-2c9a1e4f7b10"
DIR = f".copilot/session-state/{SESSION}"
EVENTS = f"{DIR}/events.jsonl"
STORE = ".copilot/session-store.db"
CASES = FIXTURES / "copilot-cli"


def event(kind: str, data: dict, when: str = "2026-06-20T09:15:02.118+02:00", **extra) -> dict:
    return {"type": kind, "id": f"id-{kind}", "timestamp": when, "parentId": None, **extra, "data": data}


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def event_rows(*records, files: dict | None = None):
    bundle = FakeBundle({("copilot-cli.events", EVENTS): jsonl(*records), **(files or {})})
    return drafts(bundle, EVENTS, "copilot_cli.events.v1")


def call(call_id: str, name: str = "bash", arguments: dict | None = None) -> dict:
    return event("assistant.message", {"messageId": "m", "model": "gpt-5", "content": "",
                                       "toolRequests": [{"toolCallId": call_id, "name": name,
                                                         "arguments": arguments or {"command": "ls"}}]})


def texts(rows) -> list[str]:
    return [row.text for row in rows]


# -- events.jsonl ---------------------------------------------------------------------------------


def test_the_event_time_with_its_offset_is_converted_to_utc():
    rows = event_rows(event("user.message", {"content": "hi"}, "2026-06-20T09:15:02.118+02:00"))
    assert rows[0].timestamp_ns == 1781939702118000000 and rows[0].timestamp_source == "record"


def test_a_time_without_a_zone_is_not_a_time():
    rows = event_rows(event("user.message", {"content": "hi"}, "2026-06-20T09:15:02.118"))
    assert (rows[0].timestamp_ns, rows[0].timestamp_source) == (None, "none")


def test_a_result_is_never_a_user_row_and_joins_its_request_by_tool_call_id():
    rows = event_rows(call("c1", "view"), call("c2", "bash"),
                      event("tool.execution_complete", {"toolCallId": "c2", "success": True,
                                                         "result": {"content": "out\n<exited with exit code 3>"}}),
                      event("tool.execution_complete", {"toolCallId": "c1", "success": True,
                                                         "result": {"content": "file"}}))
    results = [(row.tool_use_id, row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("c2", "bash", "out\n<exited with exit code 3>"), ("c1", "view", "file")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_execution_start_of_a_requested_call_is_no_second_tool_use():
    rows = event_rows(call("c1"), event("tool.execution_start", {"toolCallId": "c1", "toolName": "bash"}),
                      event("tool.execution_start", {"toolCallId": "c9", "toolName": "grep", "arguments": {"p": 1}}),
                      event("tool.execution_complete", {"toolCallId": "c1", "result": {"content": ""}}),
                      event("tool.execution_complete", {"toolCallId": "c9", "result": {"content": ""}}))
    assert [row.tool_use_id for row in rows if row.turn_type == "tool_use"] == ["c1", "c9"]
    assert "tool started: bash (c1)" in texts(rows)


def test_a_call_never_answered_gets_one_no_result_row_and_an_answer_without_call_says_so():
    rows = event_rows(call("c1"), event("tool.execution_complete", {"toolCallId": "zz", "result": {"content": "x"}}))
    assert [text for text in texts(rows) if text.startswith("parser:")] == [
        "parser: tool result for zz with no tool call before it", "parser: no result recorded for tool call c1 (bash)"]


def test_a_failed_call_is_an_error_result_and_the_detailed_diff_follows_the_short_result():
    rows = event_rows(call("c1"), call("c2", "edit"),
                      event("tool.execution_complete", {"toolCallId": "c1", "success": False,
                                                         "error": {"message": "boom", "code": "failure"}}),
                      event("tool.execution_complete", {"toolCallId": "c2", "success": True, "result": {
                          "content": "updated", "detailedContent": "diff --git a b"}}))
    assert [row.text for row in rows if row.turn_type == "tool_result"] == [
        "error: [failure] boom", "updated\n[detailed result]\ndiff --git a b"]


def test_permission_decisions_are_read_as_the_report_reads_them():
    kinds = [({"kind": "approved"}, 0), ({"kind": "denied-interactively-by-user"}, DECIDED_USER),
             ({"kind": "denied-interactively-by-user", "feedback": "no"}, DECIDED_USER),
             ({"kind": "denied-by-rules", "rules": [{"kind": "shell", "argument": "rm"}]}, DECIDED_RULE),
             ({"kind": "denied-no-approval-rule-and-could-not-request-from-user"}, DECIDED_RULE),
             ({"kind": "denied-by-permission-request-hook", "message": "policy"}, DECIDED_RULE)]
    for result, expected in kinds:
        rows = event_rows(call("c1"),
                          event("permission.requested", {"requestId": "r1", "permissionRequest": {
                              "kind": "shell", "toolCallId": "c1", "fullCommandText": "rm -rf build"}}),
                          event("permission.completed", {"requestId": "r1", "result": result}))
        decision = next(row for row in rows if row.text.startswith("permission decision: "))
        assert read_decision(decision.text) == expected, decision.text
        assert (decision.tool_use_id, decision.tool_name) == ("c1", "bash")
        assert decision.text.endswith("(shell: rm -rf build)")


def test_a_user_denial_keeps_its_feedback():
    rows = event_rows(event("permission.completed", {"requestId": "r1", "toolCallId": "c1", "result": {
        "kind": "denied-interactively-by-user", "feedback": "open a PR instead"}}))
    assert rows[0].text == "permission decision: denied with feedback: open a PR instead"


def test_yolo_and_mode_changes_are_permission_settings():
    rows = event_rows(event("session.permissions_changed", {"previousAllowAllPermissions": False,
                                                            "allowAllPermissions": True}),
                      event("session.mode_changed", {"previousMode": "interactive", "newMode": "autopilot"}))
    assert texts(rows) == [
        "permission setting: allowAllPermissions=true (was false; session.permissions_changed)",
        "permission setting: mode=autopilot (was interactive; session.mode_changed)"]


def test_only_a_typed_prompt_is_a_user_row():
    rows = event_rows(event("user.message", {"content": "typed"}),
                      event("user.message", {"content": "typed too", "source": "user"}),
                      event("user.message", {"content": "go on", "isAutopilotContinuation": True}),
                      event("user.message", {"content": "<system_notification>", "source": "system"}))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("user", "typed"), ("user", "typed too"), ("system", "injected prompt (autopilot continuation): go on"),
        ("system", "injected prompt (system): <system_notification>")]


def test_an_inline_blob_attachment_is_a_placeholder_never_its_base64():
    rows = event_rows(event("user.message", {"content": "see", "attachments": [
        {"type": "blob", "data": "QUJD" * 50, "mimeType": "image/png", "displayName": "shot.png"}]}))
    assert rows[1].text == "attachment: blob [image image/png, 150 bytes] shot.png"
    assert "QUJD" not in " ".join(texts(rows))


def test_reasoning_is_thinking_once_and_opaque_reasoning_is_never_shown():
    rows = event_rows(event("assistant.reasoning", {"reasoningId": "r", "content": "think"}),
                      event("assistant.message", {"content": "done", "reasoningText": "think",
                                                  "reasoningOpaque": "SECRET-BLOB", "encryptedContent": "ENC"}))
    assert [(row.turn_type, row.text) for row in rows] == [("thinking", "think"), ("assistant", "done")]


def test_model_rows_follow_the_session_model_and_a_subagent_model_gives_none():
    rows = event_rows(event("session.start", {"selectedModel": "m1", "context": {"cwd": "/p", "branch": "b"}}),
                      event("assistant.message", {"model": "m2", "content": "x"}, agentId="sub-1"),
                      event("assistant.message", {"model": "m1", "content": "y"}),
                      event("session.model_change", {"previousModel": "m1", "newModel": "m3", "cause": "x"}))
    assert [text for text in texts(rows) if text.startswith("model:")] == ["model: m1", "model: m1 -> m3 (cause=x)"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["m2", "m1"]


def test_the_context_gives_project_and_branch_to_the_rows_after_it():
    rows = event_rows(event("user.message", {"content": "a"}),
                      event("session.start", {"context": {"cwd": "/home/u/p", "branch": "main"}}),
                      event("user.message", {"content": "b"}),
                      event("session.context_changed", {"cwd": "/home/u/q", "branch": "dev"}),
                      event("user.message", {"content": "c"}))
    assert [(row.project_path, row.git_branch) for row in rows if row.turn_type == "user"] == [
        ("", ""), ("/home/u/p", "main"), ("/home/u/q", "dev")]
    assert {row.session_id for row in rows} == {SESSION}


def test_compaction_rows_and_the_start_of_one_is_not_a_compaction_row():
    rows = event_rows(event("session.compaction_start", {"systemTokens": 1}),
                      event("session.compaction_complete", {"success": True, "summaryContent": "S",
                                                            "messagesRemoved": 3}),
                      event("session.truncation", {"performedBy": "BasicTruncator",
                                                   "messagesRemovedDuringTruncation": 2}))
    assert texts(rows) == ["compaction started: systemTokens=1", "compaction: (messagesRemoved=3): S",
                           "compaction: truncated by BasicTruncator (messagesRemovedDuringTruncation=2)"]


def test_shutdown_gives_a_token_row_per_model():
    rows = event_rows(event("session.shutdown", {"shutdownType": "routine", "modelMetrics": {
        "gpt-5": {"requests": {"count": 2}, "usage": {"inputTokens": 10, "outputTokens": 3, "cacheReadTokens": 0,
                                                      "cacheWriteTokens": 0}}}}))
    assert rows[1].text == ("tokens generated: model=gpt-5 input_tokens=10 output_tokens=3 cache_read_tokens=0 "
                            "cache_write_tokens=0 requests=2 (session.shutdown totals)")
    assert rows[1].model == "gpt-5"


def test_an_ephemeral_or_unknown_event_is_one_row_naming_it():
    rows = event_rows(event("session.idle", {"aborted": False}, ephemeral=True), event("future.kind", {"x": 1}))
    assert [text.split(":")[0] for text in texts(rows)] == ["event session.idle", "event future.kind"]


def test_subagent_rows_sit_on_the_parent_call():
    rows = event_rows(call("t1", "task", {"prompt": "look"}),
                      event("subagent.started", {"toolCallId": "t1", "agentName": "explore", "model": "h"}),
                      event("subagent.failed", {"toolCallId": "t1", "agentName": "explore", "error": "timeout"}))
    subagents = [row for row in rows if row.text.startswith("subagent:")]
    assert [(row.tool_use_id, row.tool_name) for row in subagents] == [("t1", "task"), ("t1", "task")]
    assert subagents[1].text.endswith(": timeout")


# -- side files -----------------------------------------------------------------------------------


def test_workspace_title_row_is_the_text_the_session_store_writes():
    from aitrail.analyzer.parsers.copilot_cli.workspace import session_row_text

    path = f"{DIR}/workspace.yaml"
    data = b"id: s1\ncwd: /w\nrepository: a/b\nbranch: main\nname: Fix it\nupdated_at: 2026-06-20T07:16:52.400Z\n"
    rows = drafts(FakeBundle({("copilot-cli.workspace", path): data}), path, "copilot_cli.workspace.v1")
    assert rows[0].text == session_row_text("Fix it", "/w", "a/b", "main")
    assert (rows[0].session_id, rows[0].project_path, rows[0].git_branch) == ("s1", "/w", "main")


def test_a_yaml_alias_is_never_expanded_into_a_row():
    path = f"{DIR}/workspace.yaml"
    data = b"a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nname: *c\ncwd: /w\n"
    rows = drafts(FakeBundle({("copilot-cli.workspace", path): data}), path, "copilot_cli.workspace.v1")
    assert [row.text for row in rows] == ["session metadata:  (workspace.yaml)"]


def test_session_db_todos_name_their_prerequisites():
    path = f"{DIR}/session.db"
    rows = drafts(FakeBundle({("copilot-cli.session_todos", path): _database(
        "CREATE TABLE todos (id TEXT, title TEXT, description TEXT, status TEXT, created_at TEXT, updated_at TEXT);"
        "CREATE TABLE todo_deps (todo_id TEXT, depends_on TEXT);"
        "INSERT INTO todos VALUES ('b', 'Second', NULL, 'blocked', '2026-01-01 10:00:00', '2026-01-01 10:05:00');"
        "INSERT INTO todo_deps VALUES ('b', 'a');")}), path, "copilot_cli.session_todos.v1")
    assert rows[0].text == "task: Second | status=blocked | depends_on=a | id=b"
    assert rows[0].timestamp_ns == 1767261900 * 10**9 and rows[0].session_id == SESSION


def _database(sql: str) -> bytes:
    return sqlite_bytes(sql)


STORE_SQL = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT, branch TEXT, summary TEXT,"
    " created_at TEXT, updated_at TEXT);"
    "CREATE TABLE turns (id INTEGER PRIMARY KEY, session_id TEXT, turn_index INTEGER, user_message TEXT,"
    " assistant_response TEXT, timestamp TEXT);"
    "CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, session_id TEXT, checkpoint_number INTEGER, title TEXT,"
    " overview TEXT, history TEXT, work_done TEXT, technical_details TEXT, important_files TEXT, next_steps TEXT,"
    " created_at TEXT);"
    "INSERT INTO sessions VALUES ('kept', '/p', 'o/r', 'github', 'main', 'Kept', '2026-01-01 10:00:00',"
    " '2026-01-01 10:00:00');"
    "INSERT INTO sessions VALUES ('gone', '/q', NULL, NULL, 'dev', 'Gone', '2026-01-02T10:00:00',"
    " '2026-01-02T10:00:00');"
    "INSERT INTO turns VALUES (1, 'gone', 0, 'do it', 'done', '2026-01-02T10:00:05.000Z');"
    "INSERT INTO checkpoints (session_id, checkpoint_number, title, overview) VALUES ('kept', 1, 'K', 'o');"
    "INSERT INTO checkpoints (session_id, checkpoint_number, title, overview) VALUES ('gone', 1, 'G', 'o');")


def test_session_store_times_and_which_checkpoints_it_repeats():
    kept_events = ".copilot/session-state/kept/events.jsonl"
    bundle = FakeBundle({("copilot-cli.session_store", STORE): _database(STORE_SQL),
                         ("copilot-cli.events", kept_events): b""})
    rows = drafts(bundle, STORE, "copilot_cli.session_store.v1")
    sessions = [row for row in rows if row.text.startswith("session: ")]
    # SQLite's datetime('now') text is UTC; an ISO text without a zone is not a time
    assert [(row.session_id, row.timestamp_ns) for row in sessions] == [("kept", 1767261600 * 10**9), ("gone", None)]
    turns = [(row.turn_type, row.text, row.project_path, row.git_branch) for row in rows if row.turn_type != "system"]
    assert turns == [("user", "do it", "/q", "dev"), ("assistant", "done", "/q", "dev")]
    checkpoints = [row.session_id for row in rows if row.text.startswith("compaction: ")]
    assert checkpoints == ["gone"], "a checkpoint is repeated only for a session whose events.jsonl is not there"


def test_the_committed_wal_rows_of_the_session_store_are_read(tmp_path):
    case = CASES / "session-store-wal"
    with open(case / "expected.csv", encoding="utf-8") as handle:
        golden = handle.read()
    assert "Also remove the backup copy in /srv/backups." in golden  # a turn only in session-store.db-wal
    assert (case / "home/.copilot/session-store.db-wal").is_file()


def test_command_history_is_untimed_prompts_and_a_bad_entry_is_a_parser_row():
    path = ".copilot/command-history-state.json"
    rows = drafts(FakeBundle({("copilot-cli.command_history", path): b'{"commandHistory":["a",1,"b"]}'}), path,
                  "copilot_cli.command_history.v1")
    assert [(row.turn_type, row.timestamp_source) for row in rows] == [("user", "none"), ("system", "none"),
                                                                       ("user", "none")]
    assert rows[1].text.startswith("parser: unparseable record")


def test_a_legacy_file_reads_its_timeline_and_its_chat_messages_only_without_one():
    path = ".copilot/history-session-state/session_abc_1759400000000.json"
    doc = {"chatMessages": [{"role": "user", "content": "from chat"}],
           "timeline": [{"id": "1", "timestamp": "2025-10-02T10:13:31.250Z", "type": "user", "text": "from timeline"}]}
    rows = drafts(FakeBundle({("copilot-cli.legacy_sessions", path): json.dumps(doc).encode()}), path,
                  "copilot_cli.legacy_session.v1")
    assert [row.text for row in rows if row.turn_type == "user"] == ["from timeline"]
    assert rows[0].session_id == "abc" and rows[0].timestamp_ns == 1759400000000 * 10**6
    doc["timeline"] = []
    rows = drafts(FakeBundle({("copilot-cli.legacy_sessions", path): json.dumps(doc).encode()}), path,
                  "copilot_cli.legacy_session.v1")
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.text, user.timestamp_source) == ("from chat", "index")


# -- credentials ----------------------------------------------------------------------------------

FAKE_SECRETS = (b"gho_FAKECOPILOTTOKEN", b"lin_oauth_FAKE_MCP_TOKEN", b"lin_refresh_FAKE", b"gho_FAKESHAREDHOSTS",
                b"ghu_FAKEAPPSTOKEN", b"ghp_FAKESETTINGSTOKEN", b"lin_api_FAKE_URL_TOKEN", b"lin_api_FAKE_HEADER",
                b"FAKE_PG_PASSWORD", b"FAKE_PG_ENV_PASSWORD")


def test_credential_files_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    home = shutil.copytree(CASES / "credentials-present" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == {".copilot/config.json", ".copilot/mcp-oauth-config/linear.json",
                     ".config/github-copilot/hosts.json", ".config/github-copilot/apps.json"}
    outputs = every_output(cli, bundle, tmp_path)
    assert b"allowedUrls" in outputs[0] and b"mcpServers[postgres]" in outputs[1]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret


def test_a_raw_line_separator_inside_a_prompt_is_not_a_line_break():
    """U+2028 in a prompt (github/copilot-cli#2012) stays inside its event: lines end at a newline only."""
    rows = event_rows(event("user.message", {"content": "before\u2028after"}))
    assert [(row.turn_type, row.text) for row in rows] == [("user", "before\u2028after")]
