"""Mistral Vibe parsers, one rule per test (docs/agents/mistral-vibe.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from aitrail.analyzer.formats import call_budget
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import all_decompressed, bundle_records, every_output

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "mistral-vibe"
SESSION = "7c1d2e3f-8a9b-4c0d-b1e2-a3b4c5d6e7f8"
FOLDER = f".vibe/logs/session/session_20260621_091500_{SESSION[:8]}"
MESSAGES = f"{FOLDER}/messages.jsonl"
META = {"session_id": SESSION, "start_time": "2026-06-21T09:15:00.412+00:00",
        "end_time": "2026-06-21T09:16:02.930+00:00", "git_branch": "main",
        "environment": {"working_directory": "/home/sam/lib"}, "title": "T"}


def jsonl(*records) -> bytes:
    return b"".join((item if isinstance(item, bytes) else json.dumps(item).encode()) + b"\n" for item in records)


def call(call_id: str, name: str, arguments: str = "{}") -> dict:
    return {"id": call_id, "index": 0, "type": "function", "function": {"name": name, "arguments": arguments}}


def messages(*records, meta: dict | None = META, folder: str = FOLDER, store: str = "sessions", extra=None):
    files = {(f"mistral-vibe.{store}", f"{folder}/messages.jsonl"): jsonl(*records)}
    if meta is not None:
        meta_store = "subagent_meta" if store == "subagent_sessions" else "session_meta"
        files[(f"mistral-vibe.{meta_store}", f"{folder}/meta.json")] = json.dumps(meta).encode()
    files.update(extra or {})
    return drafts(FakeBundle(files), f"{folder}/messages.jsonl", "mistral_vibe.messages.v1")


def parser_rows(rows) -> list[str]:
    return [row.text for row in rows if row.text.startswith("parser:")]


# -- messages.jsonl ---------------------------------------------------------------------------------------


def test_rows_take_session_project_branch_and_the_start_time_of_meta_json_as_an_index_time():
    [row] = messages({"role": "user", "content": "hi"})
    assert (row.session_id, row.project_path, row.git_branch) == (SESSION, "/home/sam/lib", "main")
    assert (row.timestamp_ns, row.timestamp_source) == (1_782_033_300_412_000_000, "index")


def test_without_meta_json_the_folder_name_gives_the_utc_time_and_the_short_id():
    [row] = messages({"role": "user", "content": "hi"}, meta=None)
    assert (row.session_id, row.timestamp_ns, row.timestamp_source) == (SESSION[:8], 1_782_033_300_000_000_000,
                                                                        "log-dir")


def test_a_start_time_without_a_zone_is_not_a_time():
    [row] = messages({"role": "user", "content": "hi"}, meta={**META, "start_time": "2026-06-21T09:15:00"})
    assert row.timestamp_source == "log-dir"


def test_calls_join_results_by_id_and_reasoning_is_thinking():
    rows = messages({"role": "assistant", "content": "", "reasoning_content": "plan",
                     "tool_calls": [call("c1", "read_file"), call("c2", "grep")]},
                    {"role": "tool", "content": "b", "name": "grep", "tool_call_id": "c2"},
                    {"role": "tool", "content": "a", "name": "read_file", "tool_call_id": "c1"})
    assert [(row.turn_type, row.tool_use_id) for row in rows] == [
        ("thinking", ""), ("tool_use", "c1"), ("tool_use", "c2"), ("tool_result", "c2"), ("tool_result", "c1")]
    assert not parser_rows(rows)


def test_a_call_never_answered_and_a_result_without_its_call_each_get_a_parser_row():
    rows = messages({"role": "assistant", "tool_calls": [call("c1", "bash")]},
                    {"role": "tool", "content": "x", "name": "read_file", "tool_call_id": "c9"})
    assert parser_rows(rows) == ["parser: tool result for read_file with no tool call before it",
                                 "parser: no result recorded for tool call c1 (bash)"]


def test_refusals_rules_and_interruptions_are_told_apart():
    texts = ("<user_cancellation>User cancelled the operation.</user_cancellation>",
             "Command denied: 'rm x' matches denylist pattern 'rm *'. Do not attempt to run this command.",
             "Tool 'bash' is permanently disabled",
             "<user_cancellation>Tool execution interrupted by user.</user_cancellation>",
             "<tool_error>bash failed: boom</tool_error>")
    records = [{"role": "assistant", "tool_calls": [call(f"c{index}", "bash") for index in range(len(texts))]}]
    records += [{"role": "tool", "content": text, "name": "bash", "tool_call_id": f"c{index}"}
                for index, text in enumerate(texts)]
    rows = messages(*records)
    assert [(row.text, row.tool_use_id) for row in rows if row.turn_type == "system"] == [
        ("permission decision: denied", "c0"), ("permission decision: denied by a rule", "c1"),
        ("permission decision: denied by a rule", "c2"), ("interrupted: Tool execution interrupted by user.", "c3")]


def test_injected_messages_are_never_user_rows_and_a_compaction_says_so():
    rows = messages({"role": "user", "content": "You are continuing a trajectory after a context compaction. x",
                     "injected": True}, {"role": "user", "content": "reminder", "injected": True})
    assert [(row.turn_type, row.text.split(":")[0]) for row in rows] == [("system", "compaction"),
                                                                         ("system", "injected context")]


def test_a_sub_agent_prompt_is_what_its_parent_sent():
    folder = f"{FOLDER}/agents/explore_20260621_091510_e1f2a3b4"
    [row] = messages({"role": "user", "content": "find x"}, folder=folder, store="subagent_sessions",
                     meta={**META, "session_id": "e1f2a3b4-0000"})
    assert (row.turn_type, row.text, row.session_id) == ("system", "subagent prompt: find x", "e1f2a3b4-0000")


def test_messages_the_parent_session_holds_are_copies_not_second_prompts():
    parent_id = "a0b1c2d3-0000-4000-8000-0e1f2a3b4c5d"
    parent_folder = f".vibe/logs/session/session_20260621_090000_{parent_id[:8]}"
    first = {"role": "user", "content": "first", "message_id": "m1"}
    reply = {"role": "assistant", "tool_calls": [call("k1", "bash")], "message_id": "m2"}
    result = {"role": "tool", "content": "ok", "name": "bash", "tool_call_id": "k1"}
    parent = {("mistral-vibe.sessions", f"{parent_folder}/messages.jsonl"): jsonl(first, reply, result),
              ("mistral-vibe.session_meta", f"{parent_folder}/meta.json"): json.dumps(
                  {**META, "session_id": parent_id}).encode()}
    rows = messages(first, reply, result, {"role": "user", "content": "new", "message_id": "m3"},
                    meta={**META, "parent_session_id": parent_id}, extra=parent)
    assert [row.turn_type for row in rows] == ["system", "system", "system", "user"]
    assert rows[0].text == f"copied from session {parent_id} (rewind or fork): user: first"
    assert not parser_rows(rows)


def test_an_image_attachment_is_a_placeholder_never_its_bytes():
    [row] = messages({"role": "user", "content": "see", "images": [
        {"source": {"kind": "inline", "data": "iVBORw0KGgoAAAA"}, "alias": "image-1", "mime_type": "image/png"}]})
    assert row.text == "see\n[image image-1 image/png]"


def test_torn_last_line_and_an_unknown_role_are_rows_and_the_rest_is_read():
    data = jsonl({"role": "user", "content": "a"}, {"role": "narrator"}) + b'{"role": "user", "con'
    rows = drafts(FakeBundle({("mistral-vibe.sessions", MESSAGES): data}), MESSAGES, "mistral_vibe.messages.v1")
    assert [row.text.split(" (")[0] for row in rows] == ["a", "message", "parser: unparseable line"]


def test_past_the_call_budget_calls_are_written_not_held(monkeypatch):
    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    rows = messages({"role": "assistant", "tool_calls": [call("c1", "a"), call("c2", "b")]})
    assert len([text for text in parser_rows(rows) if "over the limit" in text]) == 1


# -- meta.json and the legacy file -----------------------------------------------------------------------


def meta_rows(meta: dict, path: str = f"{FOLDER}/meta.json", store: str = "session_meta"):
    return drafts(FakeBundle({(f"mistral-vibe.{store}", path): json.dumps(meta).encode()}), path,
                  "mistral_vibe.meta.v1")


def test_meta_gives_the_session_row_at_start_and_model_permissions_and_totals_at_end():
    meta = {**META, "config": {"active_model": "devstral-2", "bypass_tool_permissions": True,
                               "tools": {"bash": {"allowlist": ["git *"]}}},
            "agent_profile": {"name": "auto-approve", "overrides": {"bypass_tool_permissions": True}},
            "stats": {"steps": 2, "session_prompt_tokens": 10, "session_completion_tokens": 3}}
    rows = meta_rows(meta)
    assert [row.text.split(" (")[0] for row in rows] == [
        "session: T", "model: devstral-2", "permission setting: bypass_tool_permissions=true",
        'permission setting: tools.bash.allowlist=["git *"]', 'permission setting: agent_profile="auto-approve" '
        'overrides={"bypass_tool_permissions":true}', "tokens generated: model=devstral-2 session_prompt_tokens=10 "
        "session_completion_tokens=3", "session stats: steps=2"]
    assert [row.timestamp_ns for row in rows[:2]] == [1_782_033_300_412_000_000, 1_782_033_362_930_000_000]


def test_a_credential_in_the_config_snapshot_is_withheld():
    rows = meta_rows({**META, "config": {"bypass_tool_permissions": False, "enabled_tools": ["bash"]},
                      "agent_profile": {"name": "x", "overrides": {"api_key": "FAKE-VIBE-KEY"}}})
    assert not [row for row in rows if "FAKE-VIBE-KEY" in row.text]


def test_a_sub_agent_meta_names_the_session_whose_task_tool_ran_it():
    folder = f"{FOLDER}/agents/explore_20260621_091510_e1f2a3b4"
    sub = json.dumps({**META, "session_id": "sub-1"}).encode()
    files = {("mistral-vibe.subagent_meta", f"{folder}/meta.json"): sub,
             ("mistral-vibe.session_meta", f"{FOLDER}/meta.json"): json.dumps(META).encode()}
    rows = drafts(FakeBundle(files), f"{folder}/meta.json", "mistral_vibe.meta.v1")
    assert rows[1].text == f"subagent: explore (session sub-1, run by the task tool of session {SESSION})"


def test_a_scheduled_loop_is_a_task_at_its_creation_in_unix_seconds():
    loop = {"id": "l1", "interval_seconds": 60, "prompt": "p", "created_at": 1782033600.5}
    rows = meta_rows({**META, "loops": [loop]})
    assert (rows[-1].text, rows[-1].timestamp_ns) == ("task: loop l1 every 60 s: p", 1_782_033_600_500_000_000)


def test_the_legacy_file_gives_its_metadata_rows_then_its_messages():
    path = ".vibe/logs/session/session_20250510_171500_f0e1d2c3.json"
    data = json.dumps({"metadata": META, "messages": [{"role": "user", "content": "old"}, 7]}).encode()
    rows = drafts(FakeBundle({("mistral-vibe.legacy_sessions", path): data}), path, "mistral_vibe.legacy_session.v1")
    assert [(row.text.split(" (")[0], row.locator) for row in rows] == [
        ("session: T", "json:/metadata"), ("old", "json:/messages/0"), ("parser: unparseable record",
                                                                         "json:/messages/1")]


# -- side files -------------------------------------------------------------------------------------------


def test_vibehistory_prompts_are_json_strings_or_the_line_itself_and_only_the_last_is_timed():
    path = ".vibe/vibehistory"
    rows = drafts(FakeBundle({("mistral-vibe.prompt_history", path): b'"a"\nplain b\n"c"\n'}), path,
                  "mistral_vibe.history.v1")
    assert [(row.text, row.timestamp_source) for row in rows] == [("a", "none"), ("plain b", "none"),
                                                                  ("c", "file-mtime")]


def test_config_rows_name_tool_permissions_lists_and_the_bypass():
    path = ".vibe/config.toml"
    data = b'bypass_tool_permissions = true\napi_key = "FAKE"\n[tools.bash]\npermission = "never"\ndenylist = ["rm*"]\n'
    rows = drafts(FakeBundle({("mistral-vibe.config", path): data}), path, "mistral_vibe.config.v1")
    assert [row.text.split(" (from")[0] for row in rows] == [
        "permission setting: bypass_tool_permissions=true", 'permission setting: tools.bash.permission="never"',
        'permission setting: tools.bash.denylist=["rm*"]']


def test_trusted_folders_one_row_per_folder_with_the_folder_as_project():
    path = ".vibe/trusted_folders.toml"
    rows = drafts(FakeBundle({("mistral-vibe.trusted_folders", path): b'trusted = ["/a"]\nuntrusted = ["/b"]\n'}),
                  path, "mistral_vibe.trusted_folders.v1")
    assert [(row.text.split(" (from")[0], row.project_path) for row in rows] == [
        ('permission setting: trusted[0]="/a"', "/a"), ('permission setting: untrusted[0]="/b"', "/b")]


def test_the_env_file_is_never_collected_and_its_key_reaches_no_output(cli, tmp_path):
    home = shutil.copytree(CASES / "session-folder" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"} == {
        ".vibe/.env"}
    outputs = [all_decompressed(bundle)]
    outputs += every_output(cli, bundle, tmp_path)
    assert b"permission decision: denied by a rule" in outputs[1]
    for data in outputs:
        assert b"FAKE-MISTRAL-KEY" not in data
