"""The Continue session walk, on a made-up agent's stores."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.continue_sessions import (
    dev_data_chat_rows,
    project_path,
    read_session,
    render_output,
    tokens_generated_rows,
    tool_usage_rows,
    unlisted_sessions,
)
from tests.analyzer.formats.walk import context

INDEX = ("fork.index", "sessions/sessions.json")
ENTRY = {"sessionId": "s1", "title": "Fix build", "dateCreated": "1759400000000", "workspaceDirectory": "/w"}


def session(history: list, **more) -> bytes:
    return json.dumps({"sessionId": "s1", "history": history, **more}).encode()


def message(role: str, content, model: str | None = None) -> dict:
    item = {"message": {"role": role, "content": content}}
    if model:
        item["promptLogs"] = [{"completionOptions": {"model": model}}]
    return item


def session_rows(data: bytes, index: list | None = None):
    files = {("fork.sessions", "sessions/s1.json"): data}
    if index is not None:
        files[INDEX] = json.dumps(index).encode()
    return list(read_session(context(files, "sessions/s1.json"), index_store="index"))


def test_rows_take_the_index_time_and_workspace():
    found = session_rows(session([message("user", "why"), message("assistant", [{"type": "text", "text": "see"}])]),
                         [ENTRY])
    assert [(row.turn_type, row.text) for row in found] == [("user", "why"), ("assistant", "see")]
    assert {(row.timestamp_ns, row.timestamp_source, row.project_path) for row in found} == \
        {(1759400000000 * 10**6, "index", "/w")}


def test_without_an_index_the_session_has_no_time_but_keeps_its_own_workspace():
    (row,) = session_rows(session([message("user", "why")], workspaceDirectory="/own"))
    assert (row.timestamp_ns, row.project_path, row.session_id) == (None, "/own", "s1")


def test_a_model_row_when_prompt_logs_name_or_change_the_model():
    history = [message("assistant", "a", "m1"), message("assistant", "b", "m1"), message("assistant", "c", "m2")]
    assert [row.text for row in session_rows(session(history)) if row.text.startswith("model:")] == \
        ["model: m1", "model: m1 -> m2"]


def test_a_session_without_history_and_a_bad_item_are_parser_rows():
    assert session_rows(b'{"sessionId": "s1"}')[0].text.startswith("parser:")
    assert session_rows(session([42]))[0].text.startswith("parser:")


def test_an_index_entry_whose_file_is_missing_is_a_session_row():
    files = {INDEX: json.dumps([ENTRY]).encode()}
    (row,) = unlisted_sessions(context(files, INDEX[1]), sessions_store="sessions")
    assert row.text == "session: Fix build (listed in sessions.json; its session file is not in the bundle)"
    files[("fork.sessions", "sessions/s1.json")] = session([])
    assert list(unlisted_sessions(context(files, INDEX[1]), sessions_store="sessions")) == []


def test_dev_data_chat_keeps_the_last_user_block_and_the_completion():
    line = {"sessionId": "s1", "prompt": "<system>\nbe brief\n\n<user>\nwhy\n\n", "completion": "because",
            "completionOptions": {"model": "m"}}
    files = {("fork.dev_data", "dev_data/chat.jsonl"): json.dumps(line).encode() + b"\n",
             INDEX: json.dumps([ENTRY]).encode()}
    found = list(dev_data_chat_rows(context(files, "dev_data/chat.jsonl"), index_store="index"))
    assert [(row.turn_type, row.text, row.model, row.project_path) for row in found] == [
        ("user", "why", "m", "/w"), ("assistant", "because", "m", "/w")]


def test_tokens_generated_rows():
    data = b'{"model":"m","provider":"p","promptTokens":10,"generatedTokens":2}\n'
    (row,) = tokens_generated_rows(context({("fork.tokens", "dev_data/tokens_generated.jsonl"): data},
                                           "dev_data/tokens_generated.jsonl"))
    assert row.text == "tokens generated: model=m provider=p promptTokens=10 generatedTokens=2"


# -- the tool-calling generations -----------------------------------------------------------------

CALL = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"filepath":"a.py"}'}}


def calling(state_key: str = "toolCallStates", status: str = "done", output=None, in_message: bool = True) -> dict:
    state = {"toolCallId": "c1", "toolCall": CALL, "status": status}
    if output is not None:
        state["output"] = output
    message = {"role": "assistant", "content": "", **({"toolCalls": [CALL]} if in_message else {})}
    return {"message": message, state_key: [state] if state_key == "toolCallStates" else state}


def tool_item(call_id: str = "c1", content: str = "print(1)") -> dict:
    return {"message": {"role": "tool", "content": content, "toolCallId": call_id}}


def kinds(rows) -> list[tuple]:
    return [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows]


def test_a_tool_item_is_the_result_of_its_call_by_id_never_a_user_row():
    for key in ("toolCallStates", "toolCallState"):
        found = session_rows(session([message("user", "read a.py"), calling(key), tool_item()]))
        assert kinds(found) == [("user", "", "", "read a.py"), ("tool_use", "read_file", "c1", '{"filepath":"a.py"}'),
                                ("tool_result", "read_file", "c1", "print(1)")], key


def test_parallel_results_join_by_id_not_by_position():
    second = {"id": "c2", "type": "function", "function": {"name": "grep_search", "arguments": "{}"}}
    item = {"message": {"role": "assistant", "content": "two", "toolCalls": [CALL, second]}}
    found = session_rows(session([item, tool_item("c2", "hits"), tool_item("c1", "code")]))
    assert [(row.tool_name, row.tool_use_id, row.text) for row in found if row.turn_type == "tool_result"] == [
        ("grep_search", "c2", "hits"), ("read_file", "c1", "code")]


def test_a_call_known_only_from_its_state_is_a_tool_use():
    found = session_rows(session([calling("toolCallState", in_message=False), tool_item()]))
    assert [row.turn_type for row in found] == ["tool_use", "tool_result"]
    assert found[0].locator == "json:/history/0/toolCallState/toolCall"


def test_a_call_never_answered_gets_the_no_result_row():
    found = session_rows(session([calling(status="generated")]))
    assert found[-1].text == "parser: no result recorded for tool call c1 (read_file)"
    assert found[-1].tool_use_id == "c1"


def test_a_call_answered_only_in_its_state_output_gets_that_result():
    found = session_rows(session([calling(output=[{"name": "a.py", "content": "x = 1"}, {"content": "y"}])]))
    assert kinds(found)[-1] == ("tool_result", "read_file", "c1", "x = 1\n\ny")
    assert found[-1].locator == "json:/history/0/toolCallStates/0/output"


def test_a_rejected_call_is_a_denied_permission_decision_with_its_id():
    rejected = [{"name": "Tool Call Rejected", "content": "The user skipped the tool call."}]
    for item in (calling(status="canceled"), calling(status="done", output=rejected)):
        found = session_rows(session([item, tool_item(content="The user skipped the tool call.")]))
        (decision,) = [row for row in found if row.text.startswith("permission decision:")]
        assert (decision.text, decision.tool_use_id, decision.tool_name) == ("permission decision: denied", "c1",
                                                                              "read_file")
        assert found[-1].turn_type == "tool_result"


def test_a_result_without_a_call_says_so():
    found = session_rows(session([tool_item("c9")]))
    assert found[0].text == "parser: tool result for c9 with no tool call before it"
    assert found[1].turn_type == "tool_result"


def test_reasoning_is_a_thinking_row_at_its_own_time_and_model_title_names_the_model():
    item = {"message": {"role": "assistant", "content": "done"}, "reasoning": {"text": "hmm", "startAt": 1763474533000},
            "promptLogs": [{"modelTitle": "Claude Sonnet 4.5", "modelProvider": "anthropic"}]}
    found = session_rows(session([item]), [ENTRY])
    assert kinds(found) == [("system", "", "", "model: Claude Sonnet 4.5"), ("thinking", "", "", "hmm"),
                            ("assistant", "", "", "done")]
    assert (found[1].timestamp_ns, found[1].timestamp_source) == (1763474533000 * 10**6, "record")
    assert found[2].timestamp_ns == 1759400000000 * 10**6
    assert found[0].locator == "json:/history/0/promptLogs/0/modelTitle"


def test_a_thinking_message_is_a_thinking_row():
    assert kinds(session_rows(session([message("thinking", "let me see")]))) == [("thinking", "", "", "let me see")]


def test_a_file_uri_workspace_is_its_path():
    assert project_path("file:///home/alice/src/app") == "/home/alice/src/app"
    assert project_path("/home/alice/src/app") == "/home/alice/src/app"
    (row,) = session_rows(session([message("user", "x")], workspaceDirectory="file:///home/a%20b"))
    assert row.project_path == "/home/a b"


def test_an_unlisted_entry_names_its_message_count():
    files = {INDEX: json.dumps([dict(ENTRY, messageCount=4)]).encode()}
    (row,) = unlisted_sessions(context(files, INDEX[1]), sessions_store="sessions")
    assert row.text == ("session: Fix build (listed in sessions.json with messageCount 4; its session file is not "
                        "in the bundle)")


# -- dev_data 0.2.0 ------------------------------------------------------------------------------------

def chat_rows(record: dict, typed_last: bool = True):
    files = {("fork.dev_data", "dev_data/0.2.0/chatInteraction.jsonl"): json.dumps(record).encode() + b"\n"}
    return list(dev_data_chat_rows(context(files, "dev_data/0.2.0/chatInteraction.jsonl"), index_store="index",
                                   typed_last=typed_last))


def test_an_interaction_keeps_its_own_iso_time_and_model_title():
    found = chat_rows({"timestamp": "2025-11-19T09:30:12.000Z", "modelTitle": "GPT-5", "sessionId": "s9",
                       "prompt": "<user>\nwrite notes", "completion": "## notes"})
    assert [(row.turn_type, row.text, row.model, row.timestamp_source) for row in found] == [
        ("user", "write notes", "GPT-5", "record"), ("assistant", "## notes", "GPT-5", "record")]
    assert found[0].timestamp_ns == 1763544612 * 10**9


def test_an_interaction_after_a_tool_result_gives_no_user_row():
    found = chat_rows({"prompt": "<user>\nread a.py\n\n<assistant>\nread_file({})\n\n<tool>\nx = 1",
                       "completion": "a.py sets x"})
    assert kinds(found) == [("assistant", "", "", "a.py sets x")]
    older = chat_rows({"prompt": "<user>\nread a.py\n\n<tool>\nx = 1", "completion": "ok"}, typed_last=False)
    assert [row.turn_type for row in older] == ["user", "assistant"]


def test_an_empty_completion_after_a_prompt_gives_no_row_but_a_line_always_gives_one():
    assert kinds(chat_rows({"prompt": "<user>\nread a.py", "completion": ""})) == [("user", "", "", "read a.py")]
    assert kinds(chat_rows({"prompt": "", "completion": ""})) == [("assistant", "", "", "")]


def usage_rows(*records: dict, tail: bytes = b""):
    data = b"".join(json.dumps(record).encode() + b"\n" for record in records) + tail
    return list(tool_usage_rows(context({("fork.usage", "dev_data/0.2.0/toolUsage.jsonl"): data},
                                        "dev_data/0.2.0/toolUsage.jsonl")))


def test_tool_usage_reads_as_the_session_rows_and_a_rejection_is_denied():
    done = {"toolCallId": "c1", "functionName": "read_file", "toolCallArgs": '{"filepath":"a.py"}', "accepted": True,
            "output": [{"content": "x = 1"}, {"content": "y"}], "timestamp": "2025-11-19T09:30:40.000Z"}
    rejected = {"toolCallId": "c2", "functionName": "run_terminal_command", "toolCallArgs": "{}", "accepted": False,
                "output": []}
    found = usage_rows(done, rejected)
    assert kinds(found) == [
        ("tool_use", "read_file", "c1", '{"filepath":"a.py"}'), ("tool_result", "read_file", "c1", "x = 1\n\ny"),
        ("tool_use", "run_terminal_command", "c2", "{}"),
        ("system", "run_terminal_command", "c2", "permission decision: denied"),
        ("system", "run_terminal_command", "c2", "parser: no result recorded for tool call c2 (run_terminal_command)"),
    ]
    assert found[0].timestamp_source == "record" and found[2].timestamp_source == "none"
    assert render_output([{"content": "x = 1"}, {"content": "y"}]) == "x = 1\n\ny"


def test_a_torn_last_line_is_one_parser_row_and_the_lines_before_are_read():
    found = usage_rows({"toolCallId": "c1", "functionName": "f", "toolCallArgs": "{}", "output": [{"content": "o"}]},
                       tail=b'{"toolCallId":"c2","functionNa')
    assert [row.turn_type for row in found] == ["tool_use", "tool_result", "system"]
    assert found[-1].text.startswith("parser: unparseable line (torn last line") and found[-1].locator == "line:2"


def test_tokens_generated_take_their_iso_time_where_recorded():
    data = b'{"model":"m","provider":"p","promptTokens":1,"generatedTokens":2,"timestamp":"2025-11-19T09:30:12Z"}\n'
    (row,) = tokens_generated_rows(context({("fork.tokens", "dev_data/0.2.0/tokensGenerated.jsonl"): data},
                                           "dev_data/0.2.0/tokensGenerated.jsonl"))
    assert (row.timestamp_ns, row.timestamp_source) == (1763544612 * 10**9, "record")


def test_a_call_whose_tool_item_follows_takes_that_item_not_its_state_copy():
    item = calling(output=[{"content": "print(1)"}])
    found = session_rows(session([item, tool_item()]))
    assert [(row.turn_type, row.locator) for row in found] == [
        ("tool_use", "json:/history/0/message/toolCalls/0"), ("tool_result", "json:/history/1/message/content")]


def test_a_state_output_result_stands_right_after_its_call():
    first = calling(output=[{"content": "x = 1"}])
    found = session_rows(session([first, message("assistant", "a.py sets x")]))
    assert [row.turn_type for row in found] == ["tool_use", "tool_result", "assistant"]


def test_a_prompt_of_many_role_tags_is_scanned_not_split_into_a_list():
    """``re.split`` made two strings and a tuple a tag: the last blocks are found holding two places."""
    import tracemalloc

    from aitrail.analyzer.formats.continue_prompts import last_user_block, role_blocks

    prompt = "<user>\nx\n" * 200_000 + "<assistant>\nok\n"
    tracemalloc.start()
    try:
        blocks = role_blocks(prompt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (blocks.last_role, blocks.last_text, blocks.last_user) == ("assistant", "ok", "x") and peak < 100_000
    assert last_user_block("  \n<system>\nbe brief\n<user>\nwhy\n\n<user>\nreally?\n") == "really?"
    assert role_blocks("text first\n<user>\nwhy") is None and role_blocks("no tags") is None
