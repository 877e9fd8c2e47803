"""Codebuff parsers, one rule per test (docs/agents/codebuff.md)."""

from __future__ import annotations

import json
from pathlib import Path

from aitrail.analyzer.view.rows import ns_from_iso
from tests.analyzer.fakes import FakeBundle, drafts
from tests.test_golden import frozen_copy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "codebuff"
CHAT_DIR = ".config/manicode/projects/shop/chats/2026-04-02T08-11-09.511Z"
CURRENT, LEGACY = f"{CHAT_DIR}/chat-messages.json", f"{CHAT_DIR}/messages.json"
START = ns_from_iso("2026-04-02T08:11:09.511Z")


def current_rows(messages, path: str = CURRENT):
    return drafts(FakeBundle({("codebuff.chat_messages", path): json.dumps(messages).encode()}), path,
                  "codebuff.chat_messages.v1")


def legacy_rows(messages):
    data = json.dumps({"id": "x", "messages": messages, "updatedAt": "2026-04-02T09:00:00.000Z"}).encode()
    return drafts(FakeBundle({("codebuff.legacy_messages", LEGACY): data}), LEGACY, "codebuff.legacy_messages.v1")


def ai(*blocks, **extra):
    return {"id": "a", "variant": "ai", "content": "", "blocks": list(blocks), **extra}


def tool(call_id: str, name: str = "read_files", **extra):
    return {"type": "tool", "toolCallId": call_id, "toolName": name, "input": {"paths": ["a.ts"]}, **extra}


# -- chat-messages.json -----------------------------------------------------------------------------


def test_the_chat_id_is_the_chat_start_in_utc_and_the_folder_names_session_and_project_basename():
    rows = current_rows([{"id": "u", "variant": "user", "content": "hi"}])
    assert (rows[0].timestamp_ns, rows[0].timestamp_source) == (START, "index")
    assert {(row.session_id, row.project_path) for row in rows} == {("2026-04-02T08-11-09.511Z", "shop")}


def test_a_message_time_is_used_only_with_a_zone_and_a_later_message_without_one_takes_the_last_time():
    rows = current_rows([{"id": "u", "variant": "user", "content": "a", "timestamp": "2026-04-02T09:00:00.000Z"},
                         {"id": "v", "variant": "user", "content": "b", "timestamp": "12:12 PM"},
                         {"id": "w", "variant": "user", "content": "c", "timestamp": "2026-04-02T09:00:00"}])
    users = [(row.text, row.timestamp_ns, row.timestamp_source) for row in rows if row.turn_type == "user"]
    nine = ns_from_iso("2026-04-02T09:00:00.000Z")
    assert users == [("a", nine, "record"), ("b", nine, "index"), ("c", nine, "index")]
    assert "message times as written, no zone: 12:12 PM .. 2026-04-02T09:00:00" in rows[0].text


def test_the_session_row_names_the_chat_by_its_first_prompt_cut_as_the_chat_list_cuts_it():
    prompt = "x" * 120
    rows = current_rows([{"id": "e", "variant": "error", "content": "boom"},
                         {"id": "u", "variant": "user", "content": f"  {prompt}  "}])
    assert rows[0].text.startswith(f"session: {'x' * 97}... (chat ")


def test_a_tool_block_is_a_call_and_its_output_the_result_joined_by_tool_call_id():
    rows = current_rows([ai(tool("tc1", output="file text"))])
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows[1:]] == [
        ("tool_use", "read_files", "tc1", '{"paths":["a.ts"]}'), ("tool_result", "read_files", "tc1", "file text")]


def test_a_tool_block_without_output_gets_one_no_result_row():
    rows = current_rows([ai(tool("tc9", name="write_file"))])
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call tc9 (write_file)"]


def test_reasoning_text_is_thinking_and_an_unfinished_reply_is_marked_partial():
    rows = current_rows([ai({"type": "text", "content": "hmm", "textType": "reasoning"},
                            {"type": "text", "content": "done"}, isComplete=False)])
    assert [(row.turn_type, row.text) for row in rows[1:]] == [("thinking", "hmm"), ("assistant", "partial: done")]


def test_an_agent_block_is_a_subagent_with_its_prompt_its_own_calls_and_its_answer():
    block = {"type": "agent", "agentId": "ag1", "agentName": "Reviewer", "agentType": "reviewer", "status": "complete",
             "content": "ok", "initialPrompt": "review it", "spawnToolCallId": "tc-s",
             "blocks": [tool("tc-in", output="x")]}
    rows = current_rows([ai(block)])
    assert [(row.turn_type, row.text.split(" (")[0]) for row in rows[1:]] == [
        ("system", 'subagent: reviewer "Reviewer"'), ("system", "subagent prompt: review it"),
        ("tool_use", '{"paths":["a.ts"]}'), ("tool_result", "x"), ("assistant", "ok")]
    assert rows[1].tool_use_id == "tc-s"


def test_an_image_block_is_a_placeholder_never_its_bytes():
    rows = current_rows([{"id": "u", "variant": "user", "content": "",
                          "blocks": [{"type": "image", "image": "QUJDREVGR0g=", "mediaType": "image/png"}]}])
    assert rows[1].text == "[image image/png, 8 bytes]" and "QUJD" not in rows[1].text


def test_observed_metadata_model_and_usage_give_model_and_token_rows():
    rows = current_rows([ai({"type": "text", "content": "a"},
                            metadata={"model": "m1", "usage": {"inputTokens": 10, "outputTokens": 2}})])
    assert [row.text for row in rows[1:3]] == ["model: m1",
                                               "tokens generated: model=m1 input_tokens=10 output_tokens=2"]
    assert rows[3].model == "m1"


def test_unknown_variants_and_blocks_are_named_not_dropped():
    rows = current_rows([{"variant": "system", "content": "x"}, ai({"type": "widget"}, 5)])
    assert [row.text.split(":", 2)[1].strip() if row.text.startswith("parser:") else row.text for row in rows[1:]] == [
        "unparseable record (not a chat message (no known variant))", 'block widget: {"type":"widget"}',
        "unparseable record (a block that is not an object)"]


def test_a_chat_folder_whose_name_is_not_a_time_gives_untimed_rows():
    rows = current_rows([{"id": "u", "variant": "user", "content": "hi"}],
                        ".config/manicode/projects/shop/chats/chat-a/chat-messages.json")
    assert {row.timestamp_source for row in rows} == {"none"} and rows[1].session_id == "chat-a"


# -- messages.json (legacy) ---------------------------------------------------------------------------


def test_the_three_legacy_call_shapes_join_their_results_by_id():
    rows = legacy_rows([
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_files", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "one"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t2", "toolName": "find_files",
                                           "args": {"q": 1}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t2", "toolName": "find_files",
                                      "result": "two"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t3", "toolName": "web_search",
                                           "input": {"query": "q"}}]},
        {"role": "tool", "content": {"type": "tool-result", "toolCallId": "t3", "toolName": "web_search",
                                     "output": [{"type": "json", "value": {"r": 3}}]}},
    ])
    results = [(row.tool_use_id, row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("t1", "read_files", "one"), ("t2", "find_files", "two"), ("t3", "web_search", '{"r":3}')]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_legacy_rows_are_at_the_chat_start_with_updated_at_quoted_in_the_session_row():
    rows = legacy_rows([{"role": "user", "content": "hi"}])
    assert {(row.timestamp_ns, row.timestamp_source) for row in rows} == {(START, "index")}
    assert rows[0].text.endswith("updatedAt 2026-04-02T09:00:00.000Z)")


def test_media_output_and_image_parts_never_carry_their_bytes():
    rows = legacy_rows([
        {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "image": "QUJDREVGR0g=",
                                                                         "mediaType": "image/png"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "m", "toolName": "read_files",
                                           "input": {}}]},
        {"role": "tool", "content": {"type": "tool-result", "toolCallId": "m", "toolName": "read_files",
                                     "output": [{"type": "media", "data": "QUJDREVGR0g=", "mediaType": "image/png"}]}}])
    assert not [row for row in rows if "QUJD" in row.text]
    assert rows[1].text == "see\n[image image/png, 8 bytes]"


def test_reasoning_is_thinking_and_a_system_message_is_named():
    rows = legacy_rows([{"role": "system", "content": "be brief"},
                        {"role": "assistant", "content": [{"type": "reasoning", "text": "plan"},
                                                          {"type": "text", "text": "done"}]}])
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("system", "system message: be brief"), ("thinking", "plan"), ("assistant", "done")]


# -- prompt lists -------------------------------------------------------------------------------------


def test_a_prompt_list_gives_untimed_user_rows_and_a_parser_row_per_entry_that_is_not_text():
    path = ".config/manicode/message-history.json"
    rows = drafts(FakeBundle({("codebuff.prompt_history", path): b'["a", 1, "b"]'}), path,
                  "codebuff.prompt_history.v1")
    assert [(row.turn_type, row.text[:31], row.timestamp_source) for row in rows] == [
        ("user", "a", "none"), ("system", "parser: unparseable record (a h", "none"), ("user", "b", "none")]


# -- the whole run --------------------------------------------------------------------------------------


def test_the_login_is_never_collected_and_deleted_chats_leave_their_prompts(cli, tmp_path):
    from tests.conftest import all_decompressed

    home = frozen_copy(FIXTURES / "current-chat" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert b"cb-FAKE-TOKEN" not in all_decompressed(bundle)
    assert cli("analyze", bundle, "-o", tmp_path / "t.jsonl", "--format", "jsonl", "--quiet").exit_code == 0
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    kept = [row["text"] for row in rows if row["store"] == "codebuff.prompt_history"]
    assert kept == ["what does the orders endpoint return?"]
