"""Codex parsers, one rule per test (docs/agents/codex.md)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from pathlib import Path

import zstandard
from hypothesis import given
from hypothesis import strategies as st

from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import REGISTRY, FakeBundle, drafts, run

THREAD = "0198e2a4-7b1c-7d3e-8f40-5a6b7c8d9e01"
ROLLOUT = f".codex/sessions/2026/07/02/rollout-2026-07-02T11-14-05-{THREAD}.jsonl"
STAMP = "2026-07-02T09:14:05.{:03d}Z"


def tagged(*payloads: tuple[str, dict]) -> bytes:
    """Tagged rollout lines, one millisecond apart."""
    lines = [{"timestamp": STAMP.format(number), "type": kind, "payload": payload}
             for number, (kind, payload) in enumerate(payloads)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def rollout_rows(data: bytes, path: str = ROLLOUT, store: str = "codex.rollouts"):
    return drafts(FakeBundle({(store, path): data}), path, "codex.rollout.v1")


def message(role: str, text: str) -> tuple[str, dict]:
    kind = "output_text" if role == "assistant" else "input_text"
    return "response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def call(name: str, arguments: dict, call_id: str) -> tuple[str, dict]:
    return "response_item", {"type": "function_call", "name": name, "arguments": json.dumps(arguments),
                             "call_id": call_id}


def output(call_id: str, text: str) -> tuple[str, dict]:
    return "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}


# -- rollouts ----------------------------------------------------------------------------------


def test_a_function_call_output_is_never_a_user_row():
    rows = rollout_rows(tagged(call("shell_command", {"command": "ls"}, "call_1"), output("call_1", "a.py\n")))
    assert [row.turn_type for row in rows] == ["tool_use", "tool_result"]
    assert rows[1].text == "a.py\n"


def test_injected_context_in_a_user_message_is_a_system_row():
    rows = rollout_rows(tagged(message("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
                               message("user", "# AGENTS.md instructions for /w\n\n"
                                               "<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>")))
    assert [row.turn_type for row in rows] == ["system", "system"]
    assert rows[0].text.startswith("context (user): <environment_context>")


def test_every_call_id_is_joined_to_its_result_whatever_the_order():
    rows = rollout_rows(tagged(call("shell_command", {"command": "a"}, "call_a"),
                               ("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                                  "input": "*** Begin Patch", "call_id": "call_b"}),
                               ("response_item", {"type": "custom_tool_call_output", "call_id": "call_b",
                                                  "output": "ok"}),
                               output("call_a", "done"),
                               call("shell_command", {"command": "c"}, "call_c")))
    results = {row.tool_use_id: row.tool_name for row in rows if row.turn_type == "tool_result"}
    assert results == {"call_a": "shell_command", "call_b": "apply_patch"}
    orphans = [row for row in rows if row.text.startswith("parser: no result recorded")]
    assert [(row.tool_use_id, row.text) for row in orphans] == [
        ("call_c", "parser: no result recorded for tool call call_c (shell_command)")]


def test_a_result_without_its_call_says_so():
    rows = rollout_rows(tagged(output("call_x", "late")))
    assert rows[0].turn_type == "tool_result"
    assert rows[1].text == "parser: tool result for call_x with no tool call before it"


def test_the_prompt_recorded_as_response_item_and_user_message_event_appears_once():
    prompt = "Find why the login times out."
    rows = rollout_rows(tagged(message("user", prompt), ("event_msg", {"type": "task_started", "turn_id": "0"}),
                               ("event_msg", {"type": "user_message", "message": prompt, "images": []})))
    users = [row for row in rows if row.turn_type == "user"]
    assert [(row.text, row.locator) for row in users] == [(prompt, "line:3")]  # the event is the primary
    assert rows[0].text == "duplicate of line 3 (the prompt, as its user_message event)"


def test_a_reply_and_reasoning_recorded_twice_appear_once_in_either_order():
    rows = rollout_rows(tagged(("event_msg", {"type": "agent_reasoning", "text": "**Plan**"}),
                               ("response_item", {"type": "reasoning",
                                                  "summary": [{"type": "summary_text", "text": "**Plan**"}],
                                                  "encrypted_content": "gAAAA"}),
                               message("assistant", "Done."),
                               ("event_msg", {"type": "agent_message", "message": "Done."})))
    assert [(row.turn_type, row.locator) for row in rows if row.turn_type in ("thinking", "assistant")] == [
        ("thinking", "line:2"), ("assistant", "line:3")]
    assert rows[1].text == "**Plan**\n\n[encrypted reasoning: 5 characters, not readable]"
    assert rows[0].text.startswith("duplicate of line 2") and rows[3].text.startswith("duplicate of line 3")


def test_an_unpaired_event_keeps_its_content():
    rows = rollout_rows(tagged(("event_msg", {"type": "agent_message", "message": "only here"})))
    assert [(row.turn_type, row.text) for row in rows] == [("assistant", "only here")]


def test_json_string_arguments_are_decoded_and_shell_commands_shown_as_typed():
    rows = rollout_rows(tagged(call("shell", {"command": ["bash", "-lc", "npm test -- --grep 'login'"]}, "call_1"),
                               call("shell_command", {"command": "rg -n pool src", "workdir": "/w"}, "call_2"),
                               call("update_plan", {"plan": [{"step": "a", "status": "done"}]}, "call_3")))
    assert rows[0].text == "bash -lc 'npm test -- --grep '\"'\"'login'\"'\"''"
    assert rows[1].text == "rg -n pool src\nworkdir: /w"
    assert json.loads(rows[2].text) == {"plan": [{"step": "a", "status": "done"}]}  # other tools: the JSON text


def test_an_older_json_string_output_is_decoded_once_more():
    wrapped = json.dumps({"output": "2 passed\n", "metadata": {"exit_code": 0, "duration_seconds": 0.4}})
    rows = rollout_rows(tagged(call("shell", {"command": ["pytest"]}, "call_1"), output("call_1", wrapped)))
    assert rows[1].text == '2 passed\nmetadata: {"duration_seconds":0.4,"exit_code":0}'


def test_a_rejected_command_gives_a_permission_decision():
    rows = rollout_rows(tagged(call("shell_command", {"command": "git push"}, "call_1"),
                               output("call_1", "exec command rejected by user")))
    assert [(row.text, row.tool_use_id) for row in rows[2:]] == [("permission decision: denied", "call_1")]


def test_turn_context_gives_model_changes_and_permission_settings():
    context = {"cwd": "/w", "model": "gpt-5.5-codex", "approval_policy": "on-request",
               "sandbox_policy": {"type": "read-only"}}
    rows = rollout_rows(tagged(("turn_context", context), ("turn_context", {**context, "model": "gpt-5.5"}),
                               ("turn_context", {**context, "model": "gpt-5.5"})))
    assert [row.text for row in rows] == [
        "model: gpt-5.5-codex",
        'permission setting: approval_policy="on-request" (from turn_context)',
        'permission setting: sandbox_policy={"type":"read-only"} (from turn_context)',
        "model: gpt-5.5-codex -> gpt-5.5",
        'turn context: unchanged (model=gpt-5.5 approval_policy="on-request" sandbox_policy={"type":"read-only"})',
    ]
    assert rows[3].model == "gpt-5.5" and rows[3].project_path == "/w"


def test_session_meta_sets_session_project_and_branch():
    rows = rollout_rows(tagged(("session_meta", {"id": THREAD, "cwd": "/w", "git": {"branch": "fix/x"}}),
                               message("assistant", "hi")))
    assert (rows[1].session_id, rows[1].project_path, rows[1].git_branch) == (THREAD, "/w", "fix/x")


def test_a_torn_line_is_reported_and_the_lines_after_it_are_read():
    good = tagged(message("assistant", "after"))
    data = b'{"timestamp":"2026-07-02T09:14:05.000Z","type":"response_item","payload":{"ty\n' + good + b'{"timest'
    rows = rollout_rows(data)
    assert rows[0].text.startswith("parser: unparseable line (invalid JSON")
    assert (rows[1].turn_type, rows[1].locator) == ("assistant", "line:2")
    assert rows[2].text.startswith("parser: unparseable line (torn last line, no newline")


PAIR_PIECES = [b'"role"', b"user_message", b"agent_message", b"agent_reasoning", b'"reasoning"', b"role", b"reasoning",
               b"_message", b"x", b'"', b"agent_", b"\\u0072ole", b'"summary"', b"summary", b'images"', b"images",
               b"local_", b"imag\\u0065s"]


@given(st.lists(st.sampled_from(PAIR_PIECES), max_size=8))
def test_the_pair_markers_are_found_exactly_as_the_pattern_finds_them(pieces):
    import re

    from aitrail.analyzer.parsers.codex.pairing import names_a_pair

    raw = b"".join(pieces)
    pattern = re.compile(rb'"role"|user_message|agent_message|agent_reasoning|"reasoning"|"summary"|images"')
    assert names_a_pair(raw) is (pattern.search(raw) is not None)


def test_a_type_that_is_a_list_or_an_object_is_a_row_and_the_lines_after_it_are_read():
    # the pairing once looked such a type up in a dict: unhashable, it crashed the rest of the file
    data = tagged(("event_msg", {"type": ["user_message"], "message": "x"}), message("user", "after"))
    data += json.dumps({"timestamp": STAMP.format(9), "type": {"a": 1}, "payload": {}}).encode() + b"\n"
    data += tagged(message("assistant", "still read"))
    rows = rollout_rows(data)
    texts = [row.text for row in rows]
    assert texts[0].startswith('event: ["user_message"]')
    assert "after" in texts and "still read" in texts
    assert not any("crashed" in text for text in texts)


def test_an_unknown_item_type_is_a_system_row_naming_it():
    rows = rollout_rows(tagged(("world_state", {"a": 1}), ("response_item", {"type": "hologram", "x": 1}),
                               ("event_msg", {"type": "something_new"})))
    assert [row.text for row in rows] == ['unknown rollout item type world_state: {"a":1}',
                                          'unknown response item type hologram: {"type":"hologram","x":1}',
                                          "event: something_new"]


def test_untagged_lines_take_the_session_start_time():
    lines = [{"id": THREAD, "timestamp": "2025-08-14T14:02:11.873Z", "instructions": None},
             {"record_type": "state"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]
    rows = rollout_rows(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert [row.turn_type for row in rows] == ["system", "system", "user"]
    assert len({row.timestamp_ns for row in rows}) == 1 and rows[2].timestamp_ns is not None


def test_a_zst_rollout_is_read_like_the_plain_one():
    data = tagged(message("assistant", "compressed"))
    rows = rollout_rows(zstandard.ZstdCompressor().compress(data), ROLLOUT + ".zst", "codex.rollouts_compressed")
    assert [(row.turn_type, row.text) for row in rows] == [("assistant", "compressed")]


def test_a_cut_zst_rollout_keeps_the_lines_before_the_cut_and_says_so():
    first = zstandard.ZstdCompressor().compress(tagged(message("assistant", "kept")))
    second = zstandard.ZstdCompressor().compress(tagged(message("assistant", "lost")))
    rows = rollout_rows(first + second[: len(second) // 2], ROLLOUT + ".zst", "codex.rollouts_compressed")
    assert rows[0].text == "kept"
    assert rows[-1].text.startswith("parser: unparseable file (the zstd stream ends in the middle of a frame")


def test_the_typescript_rollout_joins_calls_and_reads_denials():
    document = {"session": {"timestamp": "2025-05-02T10:41:07.512Z", "id": "s1", "instructions": ""},
                "items": [{"type": "function_call", "call_id": "c1", "name": "shell",
                           "arguments": '{"command":["rm","x"]}'},
                          {"type": "function_call_output", "call_id": "c1",
                           "output": '{"output":"aborted","metadata":{}}'},
                          {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "No, don't do that — stop for now."}]}]}
    path = ".codex/sessions/rollout-2025-05-02-8f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.json"
    rows = drafts(FakeBundle({("codex.rollouts_legacy_json", path): json.dumps(document).encode()}), path,
                  "codex.rollout_legacy_json.v1")
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("tool_use", "rm x"), ("tool_result", "aborted\nmetadata: {}"), ("system", "permission decision: denied"),
        ("system", "context (user): No, don't do that — stop for now.")]


# -- images, records without their type, times that cannot be read ------------------------------

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"  # 32 base64 characters: 24 bytes


def test_a_reply_that_also_holds_an_image_is_kept_once_with_its_image_described():
    reply = {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "The spike is marked."}, {"type": "input_image", "image_url": PNG}]}
    rows = rollout_rows(tagged(("response_item", reply),
                               ("event_msg", {"type": "agent_message", "message": "The spike is marked."})))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("assistant", "The spike is marked.\n[image image/png, 24 bytes]"),
        ("system", "duplicate of line 1 (agent_message event of that response item)")]


def test_each_text_part_of_a_reply_pairs_with_its_own_event():
    reply = {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "Two causes:"}, {"type": "input_image", "image_url": "https://x.test/a.png"},
        {"type": "output_text", "text": "pool size and retries."}]}
    rows = rollout_rows(tagged(("event_msg", {"type": "agent_message", "message": "Two causes:"}),
                               ("response_item", reply),
                               ("event_msg", {"type": "agent_message", "message": "pool size and retries."})))
    assert [row.text for row in rows] == [
        "duplicate of line 2 (agent_message event of that response item)",
        "Two causes:\n[image https://x.test/a.png]\npool size and retries.",
        "duplicate of line 2 (agent_message event of that response item)"]


def test_a_prompt_with_an_image_is_kept_once_from_its_event():
    prompt = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What is wrong here?"}, {"type": "input_image", "image_url": PNG}]}
    rows = rollout_rows(tagged(("response_item", prompt), ("event_msg", {
        "type": "user_message", "message": "What is wrong here?", "images": [PNG], "local_images": []})))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "duplicate of line 2 (the prompt, as its user_message event)"), ("user", "What is wrong here?"),
        ("system", "attachments: 1 pasted image(s)")]
    alone = rollout_rows(tagged(("response_item", prompt)))
    assert [(row.turn_type, row.text) for row in alone] == [
        ("user", "What is wrong here?\n[image image/png, 24 bytes]")]


def test_a_message_without_its_type_is_read_as_that_roles_message():
    untyped = {"role": "user", "content": [{"type": "input_text", "text": "Add a retry."}]}
    rows = rollout_rows(tagged(("response_item", untyped),
                               ("event_msg", {"type": "user_message", "message": "Add a retry.", "images": []}),
                               ("response_item", {"type": None, "role": "assistant", "content": "Added."})))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "duplicate of line 2 (the prompt, as its user_message event)"), ("user", "Add a retry."),
        ("assistant", "Added.")]


def test_calls_reasoning_and_outputs_without_their_type_are_read_by_their_fields():
    rows = rollout_rows(tagged(
        ("response_item", {"name": "shell_command", "arguments": '{"command":"pytest -q"}', "call_id": "c1"}),
        ("response_item", {"call_id": "c1", "output": "3 passed"}),
        ("response_item", {"name": "apply_patch", "input": "*** Begin Patch", "call_id": "c2"}),
        ("response_item", {"call_id": "c2", "name": "apply_patch", "output": "Done"}),
        ("event_msg", {"type": "agent_reasoning", "text": "**Retry**"}),
        ("response_item", {"summary": [{"type": "summary_text", "text": "**Retry**"}], "encrypted_content": None})))
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows] == [
        ("tool_use", "shell_command", "c1", "pytest -q"), ("tool_result", "shell_command", "c1", "3 passed"),
        ("tool_use", "apply_patch", "c2", "*** Begin Patch"), ("tool_result", "apply_patch", "c2", "Done"),
        ("system", "", "", "duplicate of line 6 (agent_reasoning event of that response item)"),
        ("thinking", "", "", "**Retry**")]


def test_a_record_without_type_that_fits_no_type_or_two_stays_unknown():
    rows = rollout_rows(tagged(("response_item", {"role": "user", "content": "x", "call_id": "c", "output": "y"}),
                               ("response_item", {"call_id": "c"}),
                               ("response_item", {"type": ["message"], "role": "user", "content": "z"})))
    assert [row.text.split(":")[0] for row in rows] == ["unknown response item type (none)"] * 2 + [
        'unknown response item type ["message"]']


def test_an_event_without_type_is_a_prompt_only_when_it_holds_the_prompts_image_lists():
    rows = rollout_rows(tagged(message("user", "Ship it."),
                               ("event_msg", {"message": "Ship it.", "images": [], "local_images": []}),
                               ("event_msg", {"message": "Reconnecting... 1/5"})))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "duplicate of line 2 (the prompt, as its user_message event)"), ("user", "Ship it."),
        ("system", 'event: (no type) {"message":"Reconnecting... 1/5"}')]


def test_an_untagged_line_without_type_is_read_as_the_item_its_fields_make():
    lines = [{"id": THREAD, "timestamp": "2025-08-14T14:02:11.873Z"},
             {"role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]
    path = ".codex/sessions/rollout-2025-08-14T16-02-11-" + THREAD + ".jsonl"
    rows = drafts(FakeBundle({("codex.rollouts_untagged_flat", path):
                              b"".join(json.dumps(line).encode() + b"\n" for line in lines)}),
                  path, "codex.rollout_untagged.v1")
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows[1:]] == [("assistant", "Done.", "index")]


def test_a_session_meta_whose_times_cannot_be_read_is_untimed_not_dated_by_another_line():
    data = tagged(("session_meta", {"id": THREAD, "timestamp": "2026-07-02T09:14:05.000Z"}))
    data += json.dumps({"timestamp": "2026-07-02 09:20:00", "type": "session_meta",  # no zone: not a time
                        "payload": {"id": "parent", "timestamp": "yesterday"}}).encode() + b"\n"
    data += json.dumps({"timestamp": "bad", "type": "session_meta",
                        "payload": {"id": "grandparent", "timestamp": "2026-07-01T08:00:00.000Z"}}).encode() + b"\n"
    rows = rollout_rows(data)
    assert [(row.text, row.timestamp_ns, row.timestamp_source) for row in rows[1:]] == [
        ("session start: id=parent", None, "record"),  # the stamper writes an untimed row's source as none
        ("session start: id=grandparent", 1782892800000000000, "record")]  # the meta's own session start


def test_the_typescript_session_row_keeps_its_own_time_and_untyped_items_are_read():
    document = {"session": {"timestamp": "2025-05-02T10:41:07.512Z", "id": "s1", "instructions": "Be brief."},
                "items": [{"role": "user", "content": "List the TODOs."}]}
    path = ".codex/sessions/rollout-2025-05-02-8f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.json"
    rows = drafts(FakeBundle({("codex.rollouts_legacy_json", path): json.dumps(document).encode()}), path,
                  "codex.rollout_legacy_json.v1")
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows] == [
        ("system", "session start: id=s1 (TypeScript CLI rollout)", "record"),
        ("system", "instructions: Be brief.", "record"), ("user", "List the TODOs.", "index")]


# -- history, index, state database -------------------------------------------------------------


def test_history_lines_are_user_rows_written_like_the_rollouts():
    data = b'{"session_id":"s1","ts":1782983645,"text":"list the failing tests"}\n{"session_id":"s1","ts":1}\n'
    rows = drafts(FakeBundle({("codex.history", ".codex/history.jsonl"): data}), ".codex/history.jsonl",
                  "codex.history.v1")
    assert (rows[0].turn_type, rows[0].text, rows[0].session_id) == ("user", "list the failing tests", "s1")
    assert rows[1].text.startswith("parser: unparseable line (no prompt text)")


def test_a_thread_name_of_a_missing_rollout_is_a_session_row():
    index = (f'{{"id":"{THREAD}","thread_name":"kept","updated_at":"2026-07-02T09:15:30.004Z"}}\n'
             '{"id":"gone","thread_name":"lost","updated_at":"2026-07-02T09:15:30.004Z"}\n').encode()
    bundle = FakeBundle({("codex.session_index", ".codex/session_index.jsonl"): index,
                         ("codex.rollouts", ROLLOUT): tagged(message("assistant", "x"))})
    rows = drafts(bundle, ".codex/session_index.jsonl", "codex.session_index.v1")
    assert [row.text for row in rows] == [
        "thread name: kept", "session: lost (thread name in session_index.jsonl; its rollout is not in the bundle)"]


def _database(statements: str) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "state.sqlite"
        connection = sqlite3.connect(path)
        connection.executescript(statements)
        connection.commit()
        connection.close()
        return path.read_bytes()


def test_the_state_database_adds_a_session_only_for_a_thread_without_rollout():
    data = _database(f"""
        CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER, cwd TEXT, title TEXT,
            sandbox_policy TEXT, approval_mode TEXT, first_user_message TEXT, model BLOB);
        INSERT INTO threads VALUES ('{THREAD}', '/r.jsonl', 1782983645, '/w', 't', '{{"type":"read-only"}}', 'never',
            'present prompt', 'gpt-5.5');
        INSERT INTO threads VALUES ('gone', '/g.jsonl', 1782983645, '/w', 'lost thread', 'x', 'never', 'lost prompt',
            X'6770742d35');""")
    bundle = FakeBundle({("codex.state_db", ".codex/state_5.sqlite"): data,
                         ("codex.rollouts", ROLLOUT): tagged(message("assistant", "x"))})
    rows = drafts(bundle, ".codex/state_5.sqlite", "codex.state_db.v1")
    assert [(row.session_id, row.turn_type) for row in rows if row.turn_type == "user"] == [
        (THREAD, "user"), ("gone", "user")]  # the present one is dropped by the run's dedup
    sessions = [row.text for row in rows if row.text.startswith("session:")]
    assert sessions == [("session: lost thread (from state_5.sqlite threads; its rollout is not in the bundle; "
                         "rollout_path=/g.jsonl)")]
    assert 'permission setting: sandbox_policy="x" (from state_5.sqlite threads, the thread\'s last turn)' in \
        [row.text for row in rows]


# -- config and rules ---------------------------------------------------------------------------


def test_config_values_of_unread_keys_never_reach_the_timeline():
    data = b'approval_policy = "never"\n[mcp_servers.gh]\nenv = { TOKEN = "ghp_SECRET" }\n'
    rows = drafts(FakeBundle({("codex.config", ".codex/config.toml"): data}), ".codex/config.toml", "codex.config.v1")
    assert [row.text for row in rows] == ['permission setting: approval_policy="never" (from config.toml)',
                                          "config: other keys set, not read: mcp_servers (in config.toml)"]


def test_prefix_rules_are_standing_permission_settings_and_nothing_is_evaluated():
    data = (b'prefix_rule(pattern=["git", "status"], decision="allow")\n'
            b'__import__("os").system("true")\nprefix_rule(pattern=["x"\n')
    rows = drafts(FakeBundle({("codex.rules", ".codex/rules/default.rules"): data}), ".codex/rules/default.rules",
                  "codex.rules.v1")
    texts = [row.text for row in rows]
    assert ('permission setting: prefix_rule pattern=["git","status"] decision="allow" '
            '(from rules/default.rules)') in texts
    assert 'rules: statement not read: __import__("os").system("true")' in texts
    assert any(text.startswith("parser: unparseable line (not a rule") for text in texts)


def test_dispatch_never_sees_a_crash_from_a_damaged_state_database():
    bundle = FakeBundle({("codex.state_db", ".codex/state_5.sqlite"): b"not a database"})
    rows = run(bundle, ".codex/state_5.sqlite", "codex.state_db.v1")
    assert [row[8] for row in rows] == [
        "parser: unparseable file (state_5.sqlite: cannot read: file is not a database)"]


def test_a_lone_surrogate_escape_is_kept_as_text_that_utf8_can_write():
    """Dispatch keeps such a character as its escape text, for every parser."""
    data = b'{"session_id":"s1","ts":1782983645,"text":"bad \\ud800 escape"}\n'
    rows = run(FakeBundle({("codex.history", ".codex/history.jsonl"): data}), ".codex/history.jsonl",
               "codex.history.v1")
    assert rows[0][8] == "bad \\ud800 escape"
    rows[0][8].encode("utf-8")


# -- one read: pairing while reading (parsers/codex/pairing.py) -----------------------------------


def _interleaved(seed: int, variants: bool = False) -> bytes:
    """Prompts, replies and reasoning, each recorded twice in either order at some distance, some once.

    ``variants``: messages may also hold an image, and records may be written without their type.
    """
    import random

    rng = random.Random(seed)
    lines: list[tuple[str, dict] | None] = []
    for step in range(40):
        text = rng.choice(["Fix the login.", "Done.", "**Plan**", f"text {step}"])  # repeats: zip order matters
        kind = rng.choice(["user", "assistant", "reasoning"])
        if kind == "user":
            pair = [message("user", text), ("event_msg", {"type": "user_message", "message": text, "images": []})]
        elif kind == "assistant":
            pair = [message("assistant", text), ("event_msg", {"type": "agent_message", "message": text})]
        else:
            pair = [("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}),
                    ("event_msg", {"type": "agent_reasoning", "text": text})]
        if variants:
            image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
            for _, payload in pair:
                if "content" in payload and rng.random() < 0.5:
                    payload["content"] = [*payload["content"], image]
                if rng.random() < 0.3:  # untyped: only a prompt event is still a pair's half, in both reads
                    del payload["type"]
        rng.shuffle(pair)
        if rng.random() < 0.2:
            pair = pair[:1]  # recorded once: stays unpaired
        for item in pair:
            position = len(lines) - rng.randint(0, min(len(lines), 6))
            lines.insert(position, item)
        lines.append(("event_msg", {"type": "token_count", "info": None, "rate_limits": None}))
    return tagged(*lines)


def _texts(data: bytes) -> list[tuple]:
    return [(row.turn_type, row.text, row.locator) for row in rollout_rows(data)]


def test_pairing_while_reading_gives_the_pairs_of_the_whole_file(monkeypatch):
    from aitrail.analyzer.parsers.codex import pairing

    for seed in range(60):
        data = _interleaved(seed % 30, variants=seed >= 30)
        one_read = _texts(data)
        monkeypatch.setattr(pairing, "HOLD_ROWS", 0)  # settle at the first held row: the whole file's pairing
        whole_file = _texts(data)
        monkeypatch.undo()
        assert one_read == whole_file, seed
        assert any(text.startswith("duplicate of line") for _, text, _ in one_read)


class CountingBundle(FakeBundle):
    """A fake bundle that counts how often its members are read (each pass over a file reads it once).

    Counted from outside, so the count holds whether the parser's modules are compiled or not.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads = 0

    def read(self, source):
        self.reads += 1
        return super().read(source)


def test_a_rollout_whose_pairs_are_near_is_read_once():
    bundle = CountingBundle({("codex.rollouts", ROLLOUT): _interleaved(3)})
    rows = list(REGISTRY["codex.rollout.v1"](ParseContext(bundle, bundle.source(ROLLOUT), {})))
    assert rows and bundle.reads == 1  # no second read for the whole file's pairing


def test_a_line_that_never_pairs_holds_rows_only_up_to_the_limit(monkeypatch):
    from aitrail.analyzer.parsers.codex import pairing

    monkeypatch.setattr(pairing, "HOLD_ROWS", 10)
    token = ("event_msg", {"type": "token_count", "info": None, "rate_limits": None})
    lines = [message("user", "never repeated"), *[token] * 30,
             ("event_msg", {"type": "agent_message", "message": "late"}), message("assistant", "late")]
    bundle = CountingBundle({("codex.rollouts", ROLLOUT): tagged(*lines)})
    rows = REGISTRY["codex.rollout.v1"](ParseContext(bundle, bundle.source(ROLLOUT), {}))
    first = next(rows)  # given after 11 lines, not at the end of the file
    assert (first.turn_type, first.text) == ("user", "never repeated")
    assert bundle.reads == 2  # past 10 held rows the whole file's pairing was read, once, beside the rows pass
    rest = list(rows)
    assert bundle.reads == 2
    assert rest[-2].text == "duplicate of line 33 (agent_message event of that response item)"
    assert rest[-1].turn_type == "assistant" and rest[-1].text == "late"


def test_a_crash_after_held_rows_gives_them_first(monkeypatch):
    from aitrail.analyzer.formats import jsonl

    decode = jsonl.decode_json_utf8

    def broken(data, *args):  # a parser bug on the third line of the rows pass (the pairing pass decodes its own)
        if b"user_message" in data:
            raise RuntimeError("parser bug")
        return decode(data, *args)

    # the rows pass's decoder is looked up where read_jsonl calls it (a class of a compiled module cannot be patched)
    monkeypatch.setattr(jsonl, "decode_json_utf8", broken)
    data = tagged(message("user", "Fix the login."), call("shell_command", {"command": "ls"}, "c1"),
                  ("event_msg", {"type": "user_message", "message": "Fix the login.", "images": []}))
    rows = run(FakeBundle({("codex.rollouts", ROLLOUT): data}), ROLLOUT, "codex.rollout.v1")
    texts = [row[8] for row in rows]
    assert texts[0] == "duplicate of line 3 (the prompt, as its user_message event)"  # decided by the whole file
    assert texts[1] == "ls" and texts[2].startswith("parser: crashed on this file after 2 rows (RuntimeError")


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60)
       | st.text(max_size=60))
def test_a_signature_is_the_digest_of_the_text_without_its_whitespace(text):
    from aitrail.analyzer.parsers.codex.items import signature

    expected = hashlib.sha256("".join(text.split()).encode("utf-8", "surrogatepass")).digest()[:16]
    assert signature(text) == expected
    assert signature(text + "\x1c \t\x1f") == signature(text)  # every character str.split() drops


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: (st.lists(inner, max_size=3)
                                    | st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=8)
_PART_TYPES = st.sampled_from(["input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal",
                               "input_image", "image", "encrypted_content", "other"])
_PARTS = st.fixed_dictionaries({"type": _PART_TYPES | _JSON}, optional={"text": _JSON, "refusal": _JSON})


@given(st.lists(_PARTS | _JSON, max_size=5) | _JSON)
def test_the_text_parts_of_a_content_are_the_text_kind_of_its_content_parts(content):
    from aitrail.analyzer.parsers.codex.items import content_parts, text_parts

    assert text_parts(content) == [text for kind, text in content_parts(content) if kind == "text"]


@given(st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "total_tokens", "cached"]),
                       st.integers() | st.booleans() | st.none() | st.text(max_size=5) | st.floats(allow_nan=False),
                       max_size=4))
def test_token_counts_are_written_as_as_text_writes_them(usage):
    from aitrail.analyzer.parsers.codex.items import as_text
    from aitrail.analyzer.parsers.codex.rollout import token_text

    expected = " ".join(f"{key}={as_text(value)}" for key, value in usage.items())
    assert token_text({"info": {"last_token_usage": usage}}, "m") == f"tokens generated: model=m {expected}".rstrip()


def test_each_content_part_kind_is_read_from_its_own_field():
    from aitrail.analyzer.parsers.codex.items import content_parts

    content = [{"type": "output_text", "text": "Done.", "refusal": "x"}, {"type": "refusal", "refusal": "I can't.",
               "text": "x"}, {"type": "input_image", "image_url": "data:"}, {"type": "encrypted_content"},
               {"type": "summary_text", "text": "plan"}, {"type": ["text"], "text": "x"}, "loose"]
    assert content_parts(content) == [("text", "Done."), ("text", "I can't."), ("image", "[image]"),
                                      ("other", "[encrypted content]"), ("text", "plan"),
                                      ("other", '{"text":"x","type":["text"]}'), ("other", "loose")]


# -- budgets of the pairing ------------------------------------------------------------------------


def _reading(data: bytes):
    """The rows of a rollout, and a Repeats that placed its lines as the reader does (to look at what it held)."""
    from aitrail.analyzer.formats.jsonl import Line, read_jsonl
    from aitrail.analyzer.parsers.codex.pairing import Repeats
    from aitrail.analyzer.view.rows import Draft

    bundle = FakeBundle({("codex.rollouts", ROLLOUT): data})
    ctx = ParseContext(bundle, bundle.source(ROLLOUT), {})
    repeats = Repeats(ctx)
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            list(repeats.release([Draft("system", "a line's one row", line.locator)], repeats.place(line)))
            repeats.get(line.number)
    return rollout_rows(data), repeats


def test_past_the_unpaired_budget_the_oldest_waiting_line_is_let_go(monkeypatch):
    from aitrail.analyzer.parsers.codex import pairing

    monkeypatch.setattr(pairing, "MAX_UNPAIRED", 2)
    rows, repeats = _reading(tagged(
        message("assistant", "a"), message("assistant", "b"), message("assistant", "c"),
        ("event_msg", {"type": "agent_message", "message": "b"}),
        ("event_msg", {"type": "agent_message", "message": "a"})))
    assert repeats.pairing is not None and len(repeats.pairing.order) <= 2  # was every line still unpaired
    over = [row for row in rows if row.text.startswith("parser: unpaired lines over the limit (2 waiting")]
    assert [(row.locator, row.timestamp_source, row.session_id) for row in over] == [("line:3", "none", THREAD)]
    assert [(row.locator, row.text) for row in rows if not row.text.startswith("parser:")] == [
        ("line:1", "a"), ("line:2", "b"), ("line:3", "c"),
        ("line:4", "duplicate of line 2 (agent_message event of that response item)"),
        ("line:5", "a")]  # its item was let go (the oldest waiting at line 3): a row of its own


def test_with_a_small_unpaired_budget_both_reads_still_give_the_same_pairs(monkeypatch):
    from aitrail.analyzer.parsers.codex import pairing

    monkeypatch.setattr(pairing, "MAX_UNPAIRED", 3)
    evicted = 0
    for seed in range(20):
        data = _interleaved(seed, variants=seed >= 10)
        one_read = _texts(data)
        monkeypatch.setattr(pairing, "HOLD_ROWS", 0)
        whole_file = _texts(data)
        monkeypatch.setattr(pairing, "HOLD_ROWS", 4096)
        # the same rows; the budget's row is given where each read found it
        assert [row for row in one_read if not row[1].startswith("parser:")] == [
            row for row in whole_file if not row[1].startswith("parser:")], seed
        said = {row for row in one_read if row[1].startswith("parser:")}
        assert said == {row for row in whole_file if row[1].startswith("parser:")}, seed
        evicted += bool(said)
    assert evicted > 10  # the budget was reached in most of them


def test_past_the_known_pairs_budget_the_later_lines_are_not_marked_as_repeats(monkeypatch):
    from aitrail.analyzer.parsers.codex import pairing

    monkeypatch.setattr(pairing, "HOLD_ROWS", 0)  # the whole file's pairing is read at the first held row
    monkeypatch.setattr(pairing, "MAX_KNOWN_PAIRS", 1)
    rows, repeats = _reading(tagged(
        message("user", "Fix it."), ("event_msg", {"type": "user_message", "message": "Fix it.", "images": []}),
        message("assistant", "Done."), ("event_msg", {"type": "agent_message", "message": "Done."})))
    assert repeats.whole == {}  # each answer let go once given
    assert [row.text for row in rows] == [
        "duplicate of line 2 (the prompt, as its user_message event)",
        "parser: pairing over the limit (1 pairs kept from the whole file's read); from here on the lines are not "
        "marked as repeats: a prompt, reply or reasoning may be given twice",
        "Fix it.", "Done.", "Done."]
    assert rows[1].locator == "line:4"


def test_past_the_children_budget_an_edge_row_has_no_time_and_a_parser_row_says_so(monkeypatch):
    from aitrail.analyzer.parsers.codex import index

    monkeypatch.setattr(index, "MAX_CHILD_BYTES", 2 * (index.ID_COST + 2))  # two children of two characters
    data = _database("""
        CREATE TABLE threads (id TEXT PRIMARY KEY, created_at INTEGER, title TEXT);
        CREATE TABLE thread_spawn_edges (parent_thread_id TEXT, child_thread_id TEXT, status TEXT);
        INSERT INTO threads VALUES ('c1', 1782983645, 'one'), ('c2', 1782983646, 'two'), ('c3', 1782983647, 'three');
        INSERT INTO thread_spawn_edges VALUES ('p', 'c1', 'done'), ('p', 'c2', 'done'), ('p', 'c3', 'done');""")
    rows = drafts(FakeBundle({("codex.state_db", ".codex/state_5.sqlite"): data}), ".codex/state_5.sqlite",
                  "codex.state_db.v1")
    over = [row for row in rows if row.text.startswith("parser: spawn edge children over the limit")]
    assert [(row.locator, row.timestamp_source) for row in over] == [("sqlite:thread_spawn_edges:3", "none")]
    edges = [(row.session_id, row.timestamp_ns is not None) for row in rows if "sub-agent thread" in row.text]
    assert edges == [("c1", True), ("c2", True), ("c3", False)]


def test_past_the_call_id_budget_the_calls_are_counted_and_the_rows_still_given(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 2)
    lines = [line for number in range(1, 4) for line in (call("shell", {"command": ["ls", str(number)]}, f"c{number}"),
                                                          output(f"c{number}", f"out {number}"))]
    rows = rollout_rows(tagged(*lines))
    assert [row.text for row in rows if row.turn_type == "tool_use"] == ["ls 1", "ls 2", "ls 3"]
    assert [row.text for row in rows if row.turn_type == "tool_result"] == ["out 1", "out 2", "out 3"]
    problems = [(row.locator, row.text.split(";")[0], row.session_id) for row in rows
                if row.text.startswith("parser:")]
    assert problems == [("line:6", "parser: tool result for c3 with no tool call before it", THREAD),
                        ("line:5", "parser: tool calls over the limit (2 call ids held to pair calls with results)",
                         THREAD)]
