"""Kimi CLI parsers, one rule per test (docs/agents/kimi-cli.md)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import bundle_records, every_output

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "kimi-cli"
WORK = "/home/ren/shop"
BUCKET = hashlib.md5(WORK.encode()).hexdigest()
SESSION = "6b1f0e2a-9c4d-4e8f-a1b2-c3d4e5f60718"
SDIR = f".kimi/sessions/{BUCKET}/{SESSION}"
WIRE, CONTEXT, STATE = f"{SDIR}/wire.jsonl", f"{SDIR}/context.jsonl", f"{SDIR}/state.json"
INDEX = {("kimi-cli.work_dirs", ".kimi/kimi.json"): json.dumps(
    {"work_dirs": [{"path": WORK, "kaos": "local", "last_session_id": SESSION}]}).encode()}


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def w(seconds, kind: str, payload: dict) -> dict:
    return {"timestamp": seconds, "message": {"type": kind, "payload": payload}}


def call(call_id: str, name: str = "Shell", arguments: str = '{"command": "ls"}') -> dict:
    return w(1752652814.907, "ToolCall", {"type": "function", "id": call_id,
                                          "function": {"name": name, "arguments": arguments}})


def result(call_id: str, output="out", message="", is_error=False) -> dict:
    return w(1752652815.1, "ToolResult", {"tool_call_id": call_id, "return_value": {
        "is_error": is_error, "output": output, "message": message, "display": []}})


def rows(store: str, path: str, data: bytes, parser: str, extra: dict | None = None):
    return drafts(FakeBundle({**INDEX, (store, path): data, **(extra or {})}), path, parser)


def wire_rows(*records, path: str = WIRE, store: str = "kimi-cli.wire"):
    return rows(store, path, jsonl(*records), "kimi_cli.wire.v1")


def context_rows(*records, path: str = CONTEXT, store: str = "kimi-cli.context"):
    return rows(store, path, jsonl(*records), "kimi_cli.context.v1")


# -- wire.jsonl -------------------------------------------------------------------------------------


def test_float_seconds_are_the_time_as_written():
    row = wire_rows(w(1752652810.482, "TurnBegin", {"user_input": "hi"}))[0]
    assert (row.timestamp_ns, row.timestamp_source) == (1_752_652_810_482_000_000, "record")


def test_a_record_without_a_numeric_time_is_untimed_and_says_so():
    found = wire_rows(w("yesterday", "TextPart", {"type": "text", "text": "x"}))
    assert [(row.turn_type, row.timestamp_source) for row in found] == [("system", "none"), ("assistant", "none")]
    assert found[0].text.startswith("parser: unparseable record (timestamp is not Unix seconds: yesterday)")


def test_the_session_and_project_come_from_the_path_and_kimi_json():
    row = wire_rows(w(1.7e9, "TurnBegin", {"user_input": "hi"}))[0]
    assert (row.session_id, row.project_path) == (SESSION, WORK)


def test_a_tool_result_joins_its_call_by_id_and_is_never_a_user_row():
    found = wire_rows(call("Shell:0"), call("ReadFile:1", "ReadFile"), result("ReadFile:1"), result("Shell:0"))
    assert [(row.turn_type, row.tool_name, row.tool_use_id) for row in found] == [
        ("tool_use", "Shell", "Shell:0"), ("tool_use", "ReadFile", "ReadFile:1"),
        ("tool_result", "ReadFile", "ReadFile:1"), ("tool_result", "Shell", "Shell:0")]


def test_a_call_without_result_and_a_result_without_call_each_get_their_row():
    texts = [row.text for row in wire_rows(call("Shell:0"), result("Shell:9")) if row.text.startswith("parser:")]
    assert texts == ["parser: tool result for Shell:9 with no tool call before it",
                     "parser: no result recorded for tool call Shell:0 (Shell)"]


def test_a_result_reads_as_the_context_holds_it():
    found = wire_rows(call("a"), result("a", "", "rejected by the user", True), call("b"), result("b", "", ""),
                      call("c"), result("c", "listing", "3 lines read."))
    assert [row.text for row in found if row.turn_type == "tool_result"] == [
        "<system>ERROR: rejected by the user</system>", "<system>Tool output is empty.</system>",
        "<system>3 lines read.</system>\nlisting"]


def test_approvals_join_their_call_through_the_request_id():
    found = wire_rows(call("Shell:0"), w(2e9, "ApprovalRequest", {
        "id": "r1", "tool_call_id": "Shell:0", "sender": "Shell", "action": "run command", "description": "Run `ls`"}),
        w(2e9, "ApprovalResponse", {"request_id": "r1", "response": "reject", "feedback": "not here"}),
        w(2e9, "ApprovalRequestResolved", {"request_id": "r9", "response": "approve"}), result("Shell:0"))
    system = [(row.text, row.tool_use_id, row.tool_name) for row in found if row.turn_type == "system"]
    assert system == [("permission request: run command: Run `ls`", "Shell:0", "Shell"),
                      ("permission decision: denied with feedback: not here", "Shell:0", "Shell"),
                      ("permission decision: approved (request r9; the request is not in this file)", "", "")]


def test_think_parts_are_thinking_and_their_encrypted_signature_is_never_shown():
    found = wire_rows(w(2e9, "ThinkPart", {"type": "think", "think": "", "encrypted": "SIG-SECRET"}))
    assert [(row.turn_type, row.text) for row in found] == [
        ("thinking", "(encrypted thinking only; no text recorded)")]


def test_a_subagents_events_have_their_own_stream_and_prompt_row():
    def sub(kind, payload):
        return w(2e9, "SubagentEvent", {"parent_tool_call_id": "Agent:0", "agent_id": "a1", "subagent_type": "explore",
                                        "event": {"type": kind, "payload": payload}})
    found = wire_rows(call("Shell:0"), sub("TurnBegin", {"user_input": "find it"}),
                      sub("ToolCall", {"type": "function", "id": "Shell:0", "function": {"name": "Shell",
                                                                                        "arguments": "{}"}}),
                      sub("ToolResult", {"tool_call_id": "Shell:0", "return_value": {"is_error": False,
                                                                                     "output": "sub out"}}),
                      result("Shell:0"))
    assert [(row.turn_type, row.locator) for row in found] == [
        ("tool_use", "line:1"), ("system", "line:2/event"), ("tool_use", "line:3/event"),
        ("tool_result", "line:4/event"), ("tool_result", "line:5")]
    assert found[1].text == "subagent prompt: find it"


def test_a_subagents_own_wire_reads_its_prompt_as_the_parents_log_does():
    path = f"{SDIR}/subagents/a1/wire.jsonl"
    found = wire_rows(w(2e9, "TurnBegin", {"user_input": "find it"}), path=path, store="kimi-cli.subagent_wire")
    assert [(row.text, row.session_id) for row in found] == [("subagent prompt: find it", SESSION)]


def test_token_usage_and_plan_mode_are_their_own_rows():
    found = wire_rows(w(2e9, "StatusUpdate", {"token_usage": {"input_other": 5, "output": 2}, "plan_mode": True}))
    assert [row.text for row in found] == ["tokens generated: input_other=5 output=2",
                                           "permission setting: plan_mode=true (from wire.jsonl StatusUpdate)"]


def test_an_unknown_type_is_named_not_dropped():
    assert wire_rows(w(2e9, "FutureEvent", {"x": 1}))[0].text == 'wire FutureEvent: {"x":1}'


# -- context.jsonl ----------------------------------------------------------------------------------


def test_context_rows_are_untimed_and_read_as_the_wires():
    context = context_rows({"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "think", "think": "hmm"}, {"type": "text", "text": "hello"}], "tool_calls": [
        {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": "{}"}}]},
        {"role": "tool", "content": [{"type": "text", "text": "<system>ERROR: x</system>"},
                                     {"type": "text", "text": "out"}], "tool_call_id": "Shell:0"})
    wire = wire_rows(w(2e9, "TurnBegin", {"user_input": "hi"}), w(2e9, "ThinkPart", {"type": "think", "think": "hmm"}),
                     w(2e9, "TextPart", {"type": "text", "text": "hello"}),
                     w(2e9, "ToolCall", {"type": "function", "id": "Shell:0", "function": {"name": "Shell",
                                                                                           "arguments": "{}"}}),
                     result("Shell:0", "out", "x", True))
    key = [(row.turn_type, row.tool_use_id, row.text) for row in context]
    assert key == [(row.turn_type, row.tool_use_id, row.text) for row in wire]
    assert {row.timestamp_source for row in context} == {"none"}


def test_messages_kimi_wrote_in_the_user_role_are_never_user_rows():
    found = context_rows({"role": "user", "content": "<system>CHECKPOINT 1</system>"},
                         {"role": "user", "content": "<system-reminder>\nplan mode\n</system-reminder>"})
    assert [row.turn_type for row in found] == ["system", "system"]
    assert all(row.text.startswith("injected context: ") for row in found)


def test_control_records_and_a_partial_message():
    found = context_rows({"role": "_system_prompt", "content": "You are Kimi"}, {"role": "_checkpoint", "id": 3},
                         {"role": "_usage", "token_count": 812},
                         {"role": "assistant", "content": "cut", "partial": True})
    assert [row.text for row in found] == ["system prompt: You are Kimi", "checkpoint: 3",
                                           "context tokens: token_count=812", "partial: cut"]


def test_the_first_layout_names_its_session_by_the_file_name():
    path = f".kimi/sessions/{BUCKET}/11111111-2222.jsonl"
    found = context_rows({"role": "user", "content": "hi"}, path=path, store="kimi-cli.legacy_context")
    assert [(row.session_id, row.project_path) for row in found] == [("11111111-2222", WORK)]


# -- small files ------------------------------------------------------------------------------------


def test_state_json_gives_the_approval_flags_and_todos():
    data = json.dumps({"approval": {"yolo": True, "afk": False, "auto_approve_actions": ["run command"]},
                       "custom_title": "t", "todos": [{"title": "a", "status": "done"}]}).encode()
    texts = [row.text for row in rows("kimi-cli.session_state", STATE, data, "kimi_cli.session_state.v1")]
    assert texts == ["session: t", "permission setting: yolo=true (from state.json)",
                     "permission setting: afk=false (from state.json)",
                     'permission setting: auto_approve_actions=["run command"] (from state.json)',
                     "task: a | status=done"]


def test_kimi_json_names_the_last_session_of_each_work_directory():
    found = drafts(FakeBundle(INDEX), ".kimi/kimi.json", "kimi_cli.work_dirs.v1")
    assert [(row.session_id, row.project_path) for row in found] == [(SESSION, WORK)]
    assert BUCKET in found[0].text


def test_a_subagent_meta_gives_its_model_at_its_creation_time():
    path = f"{SDIR}/subagents/a1/meta.json"
    data = json.dumps({"agent_id": "a1", "subagent_type": "explore", "status": "completed", "description": "d",
                       "created_at": 1760000001.4, "launch_spec": {"effective_model": "kimi-k2",
                                                                  "model_override": None}}).encode()
    found = rows("kimi-cli.subagent_meta", path, data, "kimi_cli.subagent_meta.v1")
    assert [(row.model, row.timestamp_ns) for row in found][-1] == ("kimi-k2", 1_760_000_001_400_000_000)


def test_user_history_lines_are_untimed_user_rows_of_the_work_directory():
    path = f".kimi/user-history/{BUCKET}.jsonl"
    found = rows("kimi-cli.user_history", path, jsonl({"content": "hi"}), "kimi_cli.user_history.v1")
    assert [(row.turn_type, row.text, row.project_path, row.timestamp_source) for row in found] == [
        ("user", "hi", WORK, "none")]


# -- credentials on the output bytes ------------------------------------------------------------------

FAKE_SECRETS = (b"sk-FAKE-kimi-config-0001", b"kat-FAKE-oauth-0002", b"krt-FAKE-oauth-0003",
                b"lin-FAKE-mcp-oauth-0004", b"lin-FAKE-header-0005", b"sk-FAKE-hook-input-0006")
NEVER_COLLECTED = {".kimi/config.toml", ".kimi/credentials/kimi-code.json", ".kimi/credentials/kimi-code.json.lock",
                   ".kimi/mcp-oauth/linear.json"}


def test_credential_files_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    home = shutil.copytree(CASES / "credentials-present" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == NEVER_COLLECTED
    outputs = every_output(cli, bundle, tmp_path)
    assert b"hook request: Stop" in outputs[0] and b"which provider am I on?" in outputs[1]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret
