"""OpenHands CLI parsers, one rule per test (docs/agents/openhands.md)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import all_decompressed, bundle_records, every_output

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "openhands"
CONV = "9c1e4b7a2f6d4e8a9b0c1d2e3f4a5b6c"
ROOT = f".openhands/conversations/{CONV}"
EVENTS = f"{ROOT}/events"
STATE = f"{ROOT}/base_state.json"
WORK_DIR = "/home/ren/fxdesk"
HISTORY = f".openhands/projects/{hashlib.sha256(WORK_DIR.encode()).hexdigest()}/prompt_history.json"
MTIME = 1_700_000_000_000_000_000  # FakeBundle's mtime of every file


def dump(record) -> bytes:
    return json.dumps(record).encode()


def event(index: int, kind: str, **fields) -> tuple[tuple[str, str], bytes]:
    event_id = f"0000000{index}-0000-4000-8000-00000000000{index}"
    record = {"kind": kind, "id": event_id, "timestamp": f"2026-05-03T14:2{index}:00.123456", "source": "agent",
              **fields}
    return ("openhands.conversation_events", f"{EVENTS}/event-{index:05d}-{event_id}.json"), dump(record)


def action(index: int, call_id: str, tool: str = "terminal", response: str = "resp_1", **fields):
    return event(index, "ActionEvent", thought=[], tool_name=tool, tool_call_id=call_id,
                 tool_call={"id": call_id, "name": tool, "arguments": '{"command": "ls"}', "origin": "completion"},
                 llm_response_id=response, **fields)


def observation(index: int, call_id: str, tool: str = "terminal", **fields):
    return event(index, "ObservationEvent", source="environment", tool_name=tool, tool_call_id=call_id,
                 action_id="x", observation={"kind": "TerminalObservation",
                                             "content": [{"type": "text", "text": "out"}], **fields})


def user(index: int, text: str):
    return event(index, "MessageEvent", source="user",
                 llm_message={"role": "user", "content": [{"type": "text", "text": text}]})


def state(**fields) -> tuple[tuple[str, str], bytes]:
    record = {"id": CONV, "agent": {"kind": "Agent", "llm": {"model": "gpt-5", "api_key": "**********"}},
              "workspace": {"kind": "LocalWorkspace", "working_dir": WORK_DIR},
              "confirmation_policy": {"kind": "NeverConfirm"}, **fields}
    return ("openhands.conversation_state", STATE), dump(record)


def rows_of(files: list, path: str, parser: str = "openhands.event.v1"):
    return drafts(FakeBundle(dict(files)), path, parser)


def path_of(item) -> str:
    return item[0][1]


# -- events -------------------------------------------------------------------------------------


def test_a_result_in_another_file_joins_its_call_by_tool_call_id_and_is_never_a_user_row():
    files = [action(1, "call_a"), observation(2, "call_a"), state()]
    call = rows_of(files, path_of(files[0]))
    result = rows_of(files, path_of(files[1]))
    assert [(row.turn_type, row.tool_use_id, row.tool_name) for row in call] == [("tool_use", "call_a", "terminal")]
    assert [(row.turn_type, row.tool_use_id, row.text) for row in result] == [("tool_result", "call_a", "out")]


def test_a_call_no_file_answers_gets_one_no_result_row():
    files = [action(1, "call_a"), state()]
    texts = [row.text for row in rows_of(files, path_of(files[0])) if row.text.startswith("parser:")]
    assert texts == ["parser: no result recorded for tool call call_a (terminal)"]


def test_a_result_whose_call_comes_later_or_nowhere_says_so():
    files = [observation(1, "call_a"), action(2, "call_a"), state()]
    texts = [row.text for row in rows_of(files, path_of(files[0])) if row.text.startswith("parser:")]
    assert texts == ["parser: tool result for terminal with no tool call before it"]


def test_rows_are_timed_by_the_event_file_never_by_its_local_timestamp():
    files = [user(1, "hello"), action(2, "call_a"), observation(3, "call_a"), state()]
    for item in files[:3]:
        for row in rows_of(files, path_of(item)):
            assert (row.timestamp_ns, row.timestamp_source) == (MTIME, "file-mtime"), row


def test_the_session_row_quotes_the_local_times_as_written_and_names_no_zone():
    files = [user(1, "why is it flaky?"), action(2, "call_a"), state()]
    session = rows_of(files, STATE, "openhands.base_state.v1")[0]
    assert session.text.startswith("session: why is it flaky? (conversation ")
    assert "local times 2026-05-03T14:21:00.123456 .. 2026-05-03T14:22:00.123456, no zone" in session.text
    assert session.timestamp_source == "file-mtime"


def test_project_and_model_come_from_base_state():
    usages = {"agent": {"model_name": "m", "token_usages": [{"model": "claude-x", "response_id": "resp_1"}]}}
    files = [action(1, "call_a"), observation(2, "call_a"), state(stats={"usage_to_metrics": usages})]
    call = rows_of(files, path_of(files[0]))[0]
    assert (call.project_path, call.model, call.session_id) == (WORK_DIR, "claude-x", CONV)


def test_a_subagent_prompt_is_not_a_user_row_and_carries_the_parent_session():
    sub = f"{ROOT}/subagents/3f0a9b8c7d6e4f5a8b9c0d1e2f3a4b5c/events/event-00000-11111111-2222.json"
    files = [(("openhands.subagent_events", sub), dump({
        "kind": "MessageEvent", "id": "1", "timestamp": "2026-05-03T14:00:00", "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "list TTL users"}]}}))]
    rows = rows_of(files, sub)
    assert [(row.turn_type, row.text, row.session_id) for row in rows] == [
        ("system", "subagent prompt: list TTL users", CONV)]


def test_rejections_give_the_result_and_a_permission_decision_joined_to_the_call():
    def reject(index, call_id, reason, source):
        return event(index, "UserRejectObservation", source="environment", tool_name="terminal",
                     tool_call_id=call_id, rejection_reason=reason, rejection_source=source, action_id="x")
    files = [action(1, "a"), action(2, "b"), action(3, "c"), reject(4, "a", "User rejected the action", "user"),
             reject(5, "b", "not on main", "user"), reject(6, "c", "pipe to shell", "hook"), state()]
    decisions = [(row.tool_use_id, row.text) for item in files[3:6] for row in rows_of(files, path_of(item))
                 if row.text.startswith("permission decision:")]
    assert decisions == [("a", "permission decision: denied"),
                         ("b", "permission decision: denied with feedback: not on main"),
                         ("c", "permission decision: denied by a hook: pipe to shell")]
    result = rows_of(files, path_of(files[3]))[0]
    assert (result.turn_type, result.text) == ("tool_result", "Action rejected: User rejected the action")


def test_an_agent_error_answers_its_call():
    files = [action(1, "bad"), event(2, "AgentErrorEvent", tool_name="terminal", tool_call_id="bad",
                                     error="Error validating args"), state()]
    assert not [row for row in rows_of(files, path_of(files[0])) if row.text.startswith("parser:")]
    assert [(row.turn_type, row.text) for row in rows_of(files, path_of(files[1]))] == [
        ("tool_result", "Error validating args")]


def test_an_observation_shows_the_error_header_and_its_exit_code():
    files = [action(1, "a"), observation(2, "a", is_error=True, exit_code=2), state()]
    assert rows_of(files, path_of(files[1]))[0].text == "[An error occurred during execution.]\nout\n[exit code 2]"


def test_reasoning_is_thinking_and_redacted_thinking_is_never_shown():
    files = [action(1, "a", reasoning_content="because", thinking_blocks=[
        {"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"}]), observation(2, "a"), state()]
    rows = rows_of(files, path_of(files[0]))
    assert [(row.turn_type, row.text) for row in rows if row.turn_type == "thinking"] == [
        ("thinking", "because"), ("thinking", "(redacted thinking; content not recorded in clear)")]
    assert all("ENCRYPTED-BLOB" not in row.text for row in rows)


def test_a_plan_call_gives_task_rows_that_read_as_tasks_json():
    tasks = [{"title": "fix cache", "notes": "", "status": "todo"}]
    files = [action(1, "p", "task_tracker", action={"kind": "TaskTrackerAction", "command": "plan",
                                                    "task_list": tasks}),
             observation(2, "p", "task_tracker"), state(),
             (("openhands.task_list", f"{ROOT}/TASKS.json"), dump(tasks))]
    from_call = [row.text for row in rows_of(files, path_of(files[0])) if row.text.startswith("task:")]
    from_file = [row.text for row in rows_of(files, f"{ROOT}/TASKS.json", "openhands.tasks.v1")]
    assert from_call == from_file == ["task: fix cache | status=todo"]


def test_a_state_update_never_shows_the_agent_settings_or_the_secret_registry():
    files = [event(1, "ConversationStateUpdateEvent", key="full_state", value={
        "execution_status": "running", "agent": {"llm": {"model": "gpt-5", "api_key": "sk-REAL-LOOKING"}},
        "secret_registry": {"secret_sources": {"TOKEN": {"value": "plain-secret-value"}}}}),
        event(2, "ConversationStateUpdateEvent", key="secret_registry", value={"x": {"value": "plain-2"}}), state()]
    texts = [row.text for item in files[:2] for row in rows_of(files, path_of(item))]
    assert texts == ['state update: full_state={"execution_status":"running","model":"gpt-5"}',
                     "state update: secret_registry=(not shown: secret_registry can hold credentials)"]


def test_an_unknown_event_kind_is_named_not_dropped():
    files = [event(1, "FutureEvent", note="n"), state()]
    assert rows_of(files, path_of(files[0]))[0].text.startswith("event FutureEvent: ")


def test_a_file_that_is_not_an_event_object_is_one_parser_row():
    files = [(("openhands.conversation_events", f"{EVENTS}/event-00001-aaaaaaaa.json"), b"[1, 2]")]
    assert [row.text for row in rows_of(files, path_of(files[0]))] == [
        "parser: unparseable file (event file is a JSON list, not an object)"]


# -- base_state.json ------------------------------------------------------------------------------


def test_base_state_gives_model_policy_and_token_rows_and_never_the_key():
    usages = {"agent": {"model_name": "gpt-5", "accumulated_cost": 0.5,
                        "accumulated_token_usage": {"prompt_tokens": 10, "completion_tokens": 2},
                        "costs": [{"model": "gpt-5", "cost": 0.5, "timestamp": 1752652810.482}]}}
    files = [state(confirmation_policy={"kind": "ConfirmRisky", "threshold": "HIGH", "confirm_unknown": True},
                   stats={"usage_to_metrics": usages})]
    rows = rows_of(files, STATE, "openhands.base_state.v1")
    texts = [row.text for row in rows]
    assert "model: gpt-5 (the conversation's current model, from base_state.json)" in texts
    assert ('permission setting: confirmation_policy={"kind":"ConfirmRisky","threshold":"HIGH",'
            '"confirm_unknown":true} (from base_state.json)') in texts
    tokens = next(row for row in rows if row.text.startswith("tokens generated:"))
    assert tokens.text.startswith("tokens generated: model=gpt-5 prompt_tokens=10 completion_tokens=2 "
                                  "accumulated_cost=0.5 (usage_id=agent")
    assert (tokens.timestamp_ns, tokens.timestamp_source) == (1_752_652_810_482_000_000, "record")
    assert all("**********" not in text for text in texts)


# -- prompt history -------------------------------------------------------------------------------


def test_prompt_history_prompts_read_as_the_conversation_and_keep_their_local_times():
    entries = [{"text": "first", "timestamp": "2026-05-02T09:10:11.000417"},
               {"text": "second", "timestamp": "2026-05-03T14:21:58.112034"}]
    files = [(("openhands.prompt_history", HISTORY), dump(entries)), state()]
    rows = rows_of(files, HISTORY, "openhands.prompt_history.v1")
    users = [(row.text, row.project_path, row.timestamp_source) for row in rows if row.turn_type == "user"]
    assert users == [("first", WORK_DIR, "none"), ("second", WORK_DIR, "file-mtime")]
    assert rows[-1].text == (f"prompt history: 2 prompts for {WORK_DIR} (local times as written, no zone; oldest "
                             "first: [0] 2026-05-02T09:10:11.000417; [1] 2026-05-03T14:21:58.112034)")


def test_prompt_history_of_an_unknown_project_is_named_by_its_hash():
    entries = [{"text": "hi", "timestamp": "2026-05-02T09:10:11"}]
    rows = rows_of([(("openhands.prompt_history", HISTORY), dump(entries))], HISTORY, "openhands.prompt_history.v1")
    assert rows[0].project_path == "" and HISTORY.split("/")[2] in rows[-1].text


# -- credentials on the output bytes ---------------------------------------------------------------

FAKE_SECRETS = (b"sk-ant-FAKE-oh-agent-settings-0001", b"ohc-FAKE-cloud-key-0002", b"sk-FAKE-legacy-settings-0003",
                b"ghp_FAKElegacysecrets0004", b"sk-FAKE-legacy-init-0005", b"tok-FAKE-mcp-env-0006",
                b"aws-FAKE-0007", b"ghp_FAKEstateupdate0008", b"gAAAAABoFAKEfernetTokenForTheTest0009",
                b"gAAAAABoFAKEsecretvalue0010")
NEVER_COLLECTED = {".openhands/agent_settings.json", ".openhands/cloud/api_key.txt", ".openhands/settings.json",
                   ".openhands/secrets.json", ".openhands/sessions/1f2e3d4c5b6a/init.json"}
IN_BUNDLE_ONLY = (b"tok-FAKE-mcp-env-0006", b"aws-FAKE-0007", b"ghp_FAKEstateupdate0008",
                  b"gAAAAABoFAKEfernetTokenForTheTest0009", b"gAAAAABoFAKEsecretvalue0010")


def test_credential_files_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    home = shutil.copytree(CASES / "credentials-and-legacy" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == NEVER_COLLECTED
    payload = all_decompressed(bundle)
    for secret in FAKE_SECRETS:  # collected files (the evidence) hold some; the credential files none
        assert (secret in payload) == (secret in IN_BUNDLE_ONLY), secret
    outputs = every_output(cli, bundle, tmp_path)
    assert b"state update: full_state=" in outputs[0] and b"what model are you?" in outputs[1]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret
