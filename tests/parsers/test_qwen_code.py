"""Qwen Code parsers, one rule per test (docs/agents/qwen-code.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from aitrail.analyzer.formats import call_budget
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import all_decompressed, bundle_records, every_output

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "qwen-code"
SESSION = "3b8f6a4e-51c2-4d7e-9f00-2a1b3c4d5e6f"
CHAT = f".qwen/projects/-home-mei-proj-etl/chats/{SESSION}.jsonl"
SUBAGENT = f".qwen/projects/-home-mei-proj-etl/subagents/{SESSION}/agent-explore-1.jsonl"
TMP = ".qwen/tmp/b69be1967881fe20a4dc4a62989f0106a55ff8f68f43eda71e898779039e3fa7"


def record(kind: str, number: int, **fields) -> dict:
    base = {"uuid": f"u{number}", "parentUuid": f"u{number - 1}" if number > 1 else None, "sessionId": SESSION,
            "timestamp": f"2026-08-02T06:40:{number:02d}.000Z", "type": kind, "cwd": "/home/mei/proj/etl",
            "version": "0.24.4", "gitBranch": "main"}
    return {**base, **fields}


def parts(role: str, *items) -> dict:
    return {"role": role, "parts": list(items)}


def call(call_id: str, name: str, **args) -> dict:
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


def response(call_id: str, name: str, **body) -> dict:
    return {"functionResponse": {"id": call_id, "name": name, "response": body}}


def telemetry(number: int, call_id: str, name: str, decision: str | None) -> dict:
    event = {"event.name": "qwen-code.tool_call", "call_id": call_id, "function_name": name, "status": "success"}
    if decision is not None:
        event["decision"] = decision
    return record("system", number, subtype="ui_telemetry", systemPayload={"uiEvent": event})


def jsonl(*records) -> bytes:
    return b"".join((item if isinstance(item, bytes) else json.dumps(item).encode()) + b"\n" for item in records)


def chat(*records, path: str = CHAT):
    store = "qwen-code.subagent_chats" if "/subagents/" in path else "qwen-code.chats"
    return drafts(FakeBundle({(store, path): jsonl(*records)}), path, "qwen_code.chat.v1")


def parser_rows(rows) -> list[str]:
    return [row.text for row in rows if row.text.startswith("parser:")]


# -- transcripts ----------------------------------------------------------------------------------------


def test_every_row_takes_session_cwd_branch_and_time_from_its_record():
    [row] = chat(record("user", 3, message=parts("user", {"text": "hi"})))
    assert (row.turn_type, row.session_id, row.project_path, row.git_branch) == ("user", SESSION,
                                                                                   "/home/mei/proj/etl", "main")
    assert (row.timestamp_ns, row.timestamp_source) == (1_785_652_803_000_000_000, "record")


def test_a_call_is_joined_to_its_result_by_id_and_a_result_is_never_a_user_row():
    rows = chat(record("assistant", 1, model="qwen3-coder-plus",
                       message=parts("model", call("c1", "read_file", path="a"), call("c2", "glob", pattern="*"))),
                record("tool_result", 2, message=parts("user", response("c2", "glob", output="a.py"))),
                record("tool_result", 3, message=parts("user", response("c1", "read_file", output="text"))))
    results = [(row.tool_use_id, row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("c2", "glob", "a.py"), ("c1", "read_file", "text")]
    assert not [row for row in rows if row.turn_type == "user"] and not parser_rows(rows)


def test_a_call_never_answered_and_a_result_without_a_call_each_get_one_parser_row():
    rows = chat(record("assistant", 1, message=parts("model", call("c1", "run_shell_command", command="ls"))),
                record("tool_result", 2, message=parts("user", response("c9", "read_file", output="x"))))
    assert parser_rows(rows) == ["parser: tool result for read_file with no tool call before it",
                                 "parser: no result recorded for tool call c1 (run_shell_command)"]


def test_thought_parts_are_thinking_rows_and_text_parts_one_assistant_row():
    rows = chat(record("assistant", 1, model="m", message=parts("model", {"text": "plan", "thought": True},
                                                                {"text": "Hello "}, {"text": "there"})))
    assert [(row.turn_type, row.text, row.locator) for row in rows if row.turn_type != "system"] == [
        ("thinking", "plan", "line:1/message/parts/0"), ("assistant", "Hello there", "line:1")]


def test_model_rows_at_the_first_model_and_each_change_from_assistant_and_session_model_records():
    rows = chat(record("system", 1, subtype="session_model", systemPayload={"modelId": "a", "authType": "openai"}),
                record("assistant", 2, model="a", message=parts("model", {"text": "x"})),
                record("assistant", 3, model="b", message=parts("model", {"text": "y"})))
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: a (session_model record: authType=openai)", "model: a -> b"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["a", "b"]


def test_usage_metadata_is_a_tokens_generated_row():
    rows = chat(record("assistant", 1, model="m", message=parts("model", {"text": "x"}),
                       usageMetadata={"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}))
    assert rows[-1].text == "tokens generated: model=m promptTokenCount=10 candidatesTokenCount=2 totalTokenCount=12"


def test_the_typed_text_is_the_user_row_and_hook_context_a_system_row():
    rows = chat(record("user", 1, message=parts("user", {"text": "@a.py fix it\n--- Content ---\nbody"}),
                       systemPayload={"displayText": "@a.py fix it", "hookContext": "policy"}))
    assert [(row.turn_type, row.text) for row in rows] == [("user", "@a.py fix it"),
                                                           ("system", "injected context (hook): policy")]


def test_notifications_cron_and_goal_prompts_are_written_by_the_cli_not_typed():
    rows = chat(*(record("user", number, subtype=subtype, message=parts("user", {"text": "t"}))
                  for number, subtype in enumerate(("notification", "cron", "goal_runtime"), 1)))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "notification: t"), ("system", "cron prompt: t"), ("system", "goal runtime: t")]


def test_a_sub_agent_user_record_is_the_prompt_its_parent_sent():
    [row] = chat(record("user", 1, isSidechain=True, agentId="explore-1", message=parts("user", {"text": "find x"})),
                 path=SUBAGENT)
    assert (row.turn_type, row.text) == ("system", "subagent prompt: find x")


def test_a_recorded_refusal_is_one_denied_row_and_the_result_text_adds_none():
    rows = chat(record("assistant", 1, message=parts("model", call("c1", "run_shell_command", command="rm -rf x"))),
                telemetry(2, "c1", "run_shell_command", "reject"),
                record("tool_result", 3, message=parts("user", response(
                    "c1", "run_shell_command", error="[Operation Cancelled] Reason: User did not allow tool call"))))
    assert [(row.text, row.tool_use_id) for row in rows if row.text.startswith("permission decision")] == [
        ("permission decision: denied", "c1")]


def test_the_denial_text_alone_still_gives_the_denied_row():
    rows = chat(record("assistant", 1, message=parts("model", call("c1", "edit", file_path="a"))),
                record("tool_result", 2, message=parts("user", response(
                    "c1", "edit", error="[Operation Cancelled] Reason: User did not allow tool call"))))
    assert [row.text for row in rows if row.text.startswith("permission decision")] == ["permission decision: denied"]


def test_each_recorded_decision_has_its_row_and_no_decision_is_said_so():
    rows = chat(*(telemetry(number, f"c{number}", "edit", decision)
                  for number, decision in enumerate(("accept", "auto_accept", "modify", None), 1)))
    assert [row.text for row in rows] == [
        "permission decision: approved", "permission decision: approved, always allowed",
        "permission decision: approved with edits", "telemetry tool_call: status=success (no decision recorded)"]


def test_a_call_refused_by_a_rule_says_so():
    rows = chat(record("assistant", 1, message=parts("model", call("c1", "run_shell_command", command="git push"))),
                record("tool_result", 2, message=parts("user", response("c1", "run_shell_command", error="denied")),
                       toolCallResult={"callId": "c1", "status": "error", "errorType": "execution_denied"}))
    assert rows[-1].text == "permission decision: denied by a rule (execution_denied)" and rows[-1].tool_name == \
        "run_shell_command"


def test_compaction_title_slash_commands_and_rewind_have_their_rows():
    rows = chat(record("system", 1, subtype="slash_command", systemPayload={"phase": "invocation",
                                                                          "rawCommand": "/compress"}),
                record("system", 2, subtype="chat_compression", systemPayload={
                    "info": {"originalTokenCount": 900}, "compressedHistory": [parts("user", {"text": "summary"})]}),
                record("system", 3, subtype="custom_title", systemPayload={"customTitle": "T"}),
                record("system", 4, subtype="rewind", systemPayload={"truncatedCount": 2}))
    assert [(row.turn_type, row.text.split(";")[0]) for row in rows] == [
        ("user", "/compress"), ("system", "compaction: history compressed (originalTokenCount=900)"),
        ("system", "title: T (titleSource=not recorded: manual)"), ("system", "rewind: 2 history items cut back")]
    assert rows[1].text.endswith("First turn: summary")


def test_an_unknown_subtype_and_an_unknown_type_are_named_and_an_empty_record_said_empty():
    rows = chat(record("system", 1, subtype="goal_state", systemPayload={"g": 1}), record("checkpoint", 2),
                record("assistant", 3))
    assert [row.text.split(":")[0] for row in rows] == ["system goal_state", 'record "checkpoint"',
                                                        "record assistant with no text, thoughts or tool calls"]


def test_a_forked_session_says_where_it_came_from_once():
    fork = {"forkedFrom": {"sessionId": "p1", "messageUuid": "m1"}}
    rows = chat(record("user", 1, message=parts("user", {"text": "a"}), **fork),
                record("user", 2, message=parts("user", {"text": "b"}), **fork))
    assert [row.text for row in rows if row.text.startswith("forked from:")] == [
        "forked from: session p1 at message m1 (/branch copy)"]


def test_torn_last_line_and_a_non_object_line_are_parser_rows_and_the_rest_is_read():
    data = jsonl(record("user", 1, message=parts("user", {"text": "a"})), b"[1, 2]") + b'{"type":"user","mess'
    rows = drafts(FakeBundle({("qwen-code.chats", CHAT): data}), CHAT, "qwen_code.chat.v1")
    assert [row.locator for row in rows] == ["line:1", "line:2", "line:3"]
    assert rows[2].text.startswith("parser: unparseable line (torn last line")


def test_past_the_call_budget_calls_are_written_not_held(monkeypatch):
    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    rows = chat(record("assistant", 1, message=parts("model", call("c1", "a"), call("c2", "b"))))
    over = [text for text in parser_rows(rows) if "over the limit" in text]
    assert len([row for row in rows if row.turn_type == "tool_use"]) == 2 and len(over) == 1


# -- side files -----------------------------------------------------------------------------------------


def test_sub_agent_meta_joins_the_parent_call_and_records_the_approval_mode():
    path = f".qwen/projects/-home-mei-proj-etl/subagents/{SESSION}/agent-explore-1.meta.json"
    meta = {"agentId": "explore-1", "agentType": "explore", "description": "find", "parentSessionId": SESSION,
            "toolUseId": "call_ag1", "createdAt": "2026-08-02T06:40:01.000Z", "status": "completed",
            "resolvedApprovalMode": "yolo"}
    rows = drafts(FakeBundle({("qwen-code.subagent_meta", path): json.dumps(meta).encode()}), path,
                  "qwen_code.subagent_meta.v1")
    assert [(row.text.split(" (")[0], row.tool_use_id, row.session_id) for row in rows] == [
        ("subagent: explore: find", "call_ag1", SESSION), ('permission setting: approvalMode="yolo"', "call_ag1",
                                                            SESSION)]


def test_todos_are_task_rows_and_an_item_without_content_a_parser_row():
    path = f".qwen/todos/{SESSION}.json"
    data = json.dumps({"todos": [{"id": "1", "content": "Read", "status": "completed"}, {"id": "2"}],
                       "sessionId": SESSION}).encode()
    rows = drafts(FakeBundle({("qwen-code.todos", path): data}), path, "qwen_code.todos.v1")
    assert [row.text for row in rows] == ["task: Read | status=completed id=1",
                                          'parser: unparseable record (todo item without content): {"id":"2"}']
    assert rows[0].session_id == SESSION and rows[0].timestamp_source == "file-mtime"


def test_the_prompt_log_gives_user_rows_with_their_session_and_a_cut_array_keeps_the_entries_before():
    path = f"{TMP}/logs.json"
    data = b'[{"sessionId":"s1","messageId":0,"type":"user","message":"hi","timestamp":"2026-08-02T06:40:01.000Z"},{"se'
    rows = drafts(FakeBundle({("qwen-code.prompt_log", path): data}), path, "qwen_code.logs_json.v1")
    assert [(row.turn_type, row.text[:30], row.session_id) for row in rows] == [
        ("user", "hi", "s1"), ("system", "parser: unparseable record (th", "")]


def test_shell_history_json_array_and_line_format_the_last_command_timed():
    path = f"{TMP}/shell_history"
    for data in (b'["ls", "git status"]', b"ls\ngit \\\nstatus\n"):
        rows = drafts(FakeBundle({("qwen-code.shell_history", path): data}), path, "qwen_code.shell_history.v1")
        assert [row.text for row in rows] in (["ls", "git status"], ["ls", "git  status"])
        assert [row.timestamp_source for row in rows] == ["none", "file-mtime"]


def test_a_usage_record_names_and_times_a_session_in_unix_milliseconds():
    path = ".qwen/usage_record.jsonl"
    data = jsonl({"sessionId": "s9", "timestamp": 1785600300000, "startTime": 1785600160000, "project": "/p",
                  "durationMs": 140000, "models": {"m1": {"requests": 3, "inputTokens": 10}},
                  "tools": {"totalCalls": 2}})
    rows = drafts(FakeBundle({("qwen-code.usage_history", path): data}), path, "qwen_code.usage.v1")
    assert [row.text.split(" (")[0] for row in rows] == [
        "session usage: 2026-08-01T16:02:40.000Z to 2026-08-01T16:05:00.000Z",
        "tokens generated: model=m1 requests=3 inputTokens=10"]
    assert {(row.session_id, row.project_path, row.timestamp_ns) for row in rows} == {
        ("s9", "/p", 1_785_600_300_000_000_000)}


def test_settings_rows_name_rules_and_approval_mode_and_never_a_credential():
    settings = b"""// comment
    {"permissions": {"deny": ["Bash(rm *)"]}, "tools": {"approvalMode": "yolo"}, "approvalMode": "auto-edit",
     "security": {"auth": {"apiKey": "sk-FAKE-1"}}, "mcpServers": {"m": {"trust": true, "env": {"T": "FAKE-2"}}}}"""
    rows = drafts(FakeBundle({("qwen-code.user_settings", ".qwen/settings.json"): settings}), ".qwen/settings.json",
                  "qwen_code.settings.v1")
    texts = [row.text.split(" (from")[0] for row in rows]
    assert texts == ['permission setting: permissions.deny=["Bash(rm *)"]',
                     'permission setting: tools.approvalMode="yolo"', 'permission setting: approvalMode="auto-edit"',
                     "permission setting: mcpServers.m.trust=true"]
    assert not [row for row in rows if "FAKE" in row.text]


def test_fake_credentials_never_reach_the_bundle_the_timeline_or_the_report(cli, tmp_path):
    home = shutil.copytree(CASES / "jsonl-session" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == {".qwen/oauth_creds.json", ".qwen/.env"}
    outputs = [all_decompressed(bundle)]
    outputs += every_output(cli, bundle, tmp_path)
    assert b"permissions.deny" in outputs[1] and b"permission decision: denied" in outputs[2]
    for secret in (b"FAKE-QWEN-OAUTH", b"sk-FAKE-DASHSCOPE", b"sk-FAKE-QWEN-SETTINGS-KEY", b"FAKE-JIRA-TOKEN"):
        for data in outputs[1:]:
            assert secret not in data, secret
    for secret in (b"FAKE-QWEN-OAUTH", b"sk-FAKE-DASHSCOPE"):  # the files themselves are never collected
        assert secret not in outputs[0]
