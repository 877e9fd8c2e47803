"""Factory Droid parsers, one rule per test (docs/agents/factory-droid.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records
from tests.test_golden import frozen_copy, timeline

CASES = FIXTURES / "factory-droid"
SESSION = "2a4c6e80-1b3d-4f5a-9c7e-0d2f4a6c8e1b"
TRANSCRIPT = f".factory/sessions/-home-kim-app/{SESSION}.jsonl"
START = {"type": "session_start", "id": SESSION, "title": "Add rate limiting", "owner": "kim@example.org",
         "version": 2, "cwd": "/home/kim/app"}
PLANTED = ("PLANTED", "encrypted-token-", "key-PLANTED", "legacy-encrypted-", "fac-at-", "fac-rt-", "byok-",
           "sshkey-", "OPENSSH", "env-PLANTED", "ghp-")


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def message(role: str, content, when: str = "2026-07-10T12:00:05.000Z", **extra) -> dict:
    return {"type": "message", "id": "m", "timestamp": when, "message": {"role": role, "content": content, **extra}}


def session_rows(*records):
    return drafts(FakeBundle({("factory-droid.sessions", TRANSCRIPT): jsonl(START, *records)}), TRANSCRIPT,
                  "factory_droid.session.v1")


def golden(case: str) -> list[dict]:
    with open(CASES / case / "expected.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# -- transcripts ------------------------------------------------------------------------------------------


def test_the_session_start_line_gives_the_session_id_and_project_of_every_row():
    rows = session_rows(message("user", "hi"))
    assert [(row.session_id, row.project_path) for row in rows] == [(SESSION, "/home/kim/app")] * 2
    assert rows[0].text.startswith("session metadata: Add rate limiting (owner=kim@example.org")
    assert rows[0].timestamp_source == "none" and rows[1].timestamp_source == "record"


def test_a_tool_result_is_never_a_user_row_and_joins_its_call_by_id():
    rows = session_rows(
        message("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
                              {"type": "tool_use", "id": "t2", "name": "LS", "input": {}}]),
        message("user", [{"type": "tool_result", "tool_use_id": "t2", "content": "a b"},
                         {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x"}]}]))
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows if row.tool_use_id] == [
        ("tool_use", "Read", "t1", '{"file_path":"a"}'), ("tool_use", "LS", "t2", "{}"),
        ("tool_result", "LS", "t2", "a b"), ("tool_result", "Read", "t1", "x")]
    assert not [row for row in rows if row.turn_type == "user"]


def test_a_call_without_its_result_and_a_result_without_its_call_each_get_one_parser_row():
    rows = session_rows(message("assistant", [{"type": "tool_use", "id": "t1", "name": "Execute", "input": {}}]),
                        message("user", [{"type": "tool_result", "tool_use_id": "t9", "content": "?"}]))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: tool result for t9 with no tool call before it",
        "parser: no result recorded for tool call t1 (Execute)"]


def test_injected_hook_and_automated_text_are_system_rows_not_prompts():
    rows = session_rows(message("user", "reminder", visibility="llm_only"),
                        message("user", "hook said", hookEventName="SessionStart"),
                        message("user", "shown", visibility="user_only"),
                        message("user", "nightly run", userMessageSource="automation"),
                        message("user", "typed", userMessageSource="cli_tui"))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("system", "injected context (llm_only): reminder"), ("system", "hook SessionStart: hook said"),
        ("system", "shown to the user only: shown"), ("system", "automated prompt (automation): nightly run"),
        ("user", "typed")]


def test_thinking_is_a_thinking_row_and_no_signature_or_redacted_data_is_shown():
    rows = session_rows(message("assistant", [{"type": "thinking", "thinking": "plan", "signature": "SIGSECRET"},
                                              {"type": "redacted_thinking", "data": "BLOBSECRET"}]))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("thinking", "plan"), ("thinking", "(redacted thinking: encrypted by the provider, not shown)")]


def test_the_model_column_comes_from_model_id_and_a_change_is_a_model_row():
    rows = session_rows(message("assistant", "a", modelId="m1"), message("assistant", "b", modelId="m1"),
                        message("assistant", "c", modelId="m2"))
    assert [row.text for row in rows if row.text.startswith("model:")] == ["model: m1", "model: m1 -> m2"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["m1", "m1", "m2"]


def test_results_that_record_a_permission_decision_say_which():
    texts = {"c1": "Tool execution cancelled by user",
             "c2": "Exec ended early: insufficient permission to proceed. Re-run with --auto high.",
             "c3": "Error: Tool cancelled: Spec mode is active - file edits and other state mutations are not allowed",
             "c4": "Sandbox: network access was denied to: example.org",
             "c5": "Tool execution was interrupted", "c6": "Command completed with exit code 2"}
    rows = session_rows(
        message("assistant", [{"type": "tool_use", "id": key, "name": "Execute", "input": {}} for key in texts]),
        message("user", [{"type": "tool_result", "tool_use_id": key, "content": text, "is_error": True}
                         for key, text in texts.items()]))
    assert [(row.tool_use_id, row.text) for row in rows if row.text.startswith("permission decision:")] == [
        ("c1", "permission decision: cancelled by the user (refused at the prompt, or interrupted)"),
        ("c2", "permission decision: denied by the autonomy level (not asked)"),
        ("c3", "permission decision: denied by spec mode (not asked)"),
        ("c4", "permission decision: denied by the sandbox policy (not asked)")]


def test_every_todo_of_a_todo_state_is_a_task_row_at_its_time():
    rows = session_rows({"type": "todo_state", "id": "t", "timestamp": "2026-07-10T12:00:20.004Z",
                         "todos": [{"id": "1", "content": "a", "status": "completed"},
                                   {"id": "2", "content": "b", "status": "pending", "priority": "low"}]})
    assert [row.text for row in rows[1:]] == ["task: a | status=completed", "task: b | status=pending priority=low"]
    assert rows[1].timestamp_ns == 1783684820004000000


def test_a_sub_agent_session_names_its_parent_and_the_call_that_started_it():
    rows = golden("subagent")
    [child] = [row for row in rows if row["text"].startswith("session metadata: Profile the build")]
    assert ("parent (sub-agent of)=5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d, called by tool call toolu_1Task in session "
            "5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d") in child["text"]
    assert {row["session_id"] for row in rows} == {"5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d",
                                                   "6f8b0d2c-4e6a-4b8d-8f2c-4e6a8b0d2c4e",
                                                   "7a9c1e3d-5f7b-4c9e-9a3d-5f7b9c1e3d5f"}


# -- settings and history ------------------------------------------------------------------------------------


def test_session_settings_give_model_autonomy_and_token_rows_in_their_session():
    path = f".factory/sessions/-home-kim-app/{SESSION}.settings.json"
    data = json.dumps({"model": "m1", "autonomyMode": "auto-high", "tokenUsage": {"inputTokens": 5, "outputTokens": 1},
                       "apiKey": "SHOULDNOTSHOW"}).encode()
    rows = drafts(FakeBundle({("factory-droid.session_settings", path): data}), path,
                  "factory_droid.session_settings.v1")
    assert [row.text.split(" (from")[0] for row in rows] == [
        "model: m1 (session setting)", 'permission setting: autonomyMode="auto-high"',
        "tokens generated: model=m1 inputTokens=5 outputTokens=1 (session total)"]
    assert {row.session_id for row in rows} == {SESSION} and not [row for row in rows if "SHOULDNOT" in row.text]


def test_settings_command_lists_are_permission_settings_and_custom_models_and_env_are_never_read():
    rows = golden("settings-history")
    texts = [row["text"] for row in rows]
    assert any(text.startswith('permission setting: commandDenylist=["rm -rf /","git push --force"]') for text in texts)
    assert any(text.startswith('permission setting: maxAutonomyLevel="medium"') for text in texts)
    assert not [text for text in texts if "customModels" in text or "PLANTED" in text or "OPENAI_API_KEY" in text]


def test_a_deleted_sessions_prompt_stays_in_the_history_and_a_kept_one_is_one_row():
    rows = golden("settings-history")
    prompts = [(row["text"], row["origin"]) for row in rows if row["turn_type"] == "user"]
    assert prompts == [("Summarise yesterday's incident notes", "secondary"),
                       ("Add rate limiting to /login", "primary")]


def test_a_settings_file_whose_transcript_is_gone_names_a_missing_session():
    rows = golden("settings-history")
    [missing] = [row for row in rows if row["text"].startswith("integrity: session missing:")]
    assert missing["session_id"] == "d4e6f8a0-2b4c-4d6e-8f0a-2b4c6d8e0f1a"
    assert "factory-droid.session_settings names session d4e6f8a0" in missing["text"]
    assert "no file of factory-droid.sessions in the bundle holds a row of it" in missing["text"]


# -- credentials on the output bytes ----------------------------------------------------------------------------


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    for case in ("credentials-present", "settings-history"):
        work = tmp_path / case
        csv_bytes = timeline(cli, CASES / case, work)
        bundle, jsonl_out, report = work / "case.tar.zst", work / "t.jsonl", work / "r.html"
        assert cli("analyze", bundle, "-o", jsonl_out, "--format", "jsonl", "--quiet").exit_code == 0
        assert cli("report", bundle, "-o", report, "--jobs", "1").exit_code == 0
        outputs = {"csv": csv_bytes, "jsonl": jsonl_out.read_bytes(), "report": report.read_bytes()}
        for name, produced in outputs.items():
            leaked = [value for value in PLANTED if value.encode() in produced]
            assert not leaked, (case, name, leaked)
        assert b"session metadata:" in csv_bytes


def test_the_credential_files_are_never_collected(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    home = frozen_copy(CASES / "credentials-present" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
    records = {record["path"]: record for record in bundle_records(bundle) if record.get("agent") == "factory-droid"}
    for never in ("auth.v2.file", "auth.v2.key", "auth.encrypted", "auth.json", "config.json", ".ssh/id_ed25519",
                  ".ssh/known_hosts"):
        assert records[f".factory/{never}"]["outcome"] == "never_collect", never
