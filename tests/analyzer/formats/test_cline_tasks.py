"""The Cline task walk, with a flavour of its own (not PearAI's)."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, task_id
from tests.analyzer.formats.walk import context

TASK = "tasks/1759400100000/"
API, UI = TASK + "api_conversation_history.json", TASK + "ui_messages.json"
FLAVOUR = TaskFlavour(tool_names=("execute_command", "read_file"),
                      columns=lambda ctx: {"session_id": task_id(ctx), "project_path": "/work"})


def rows(files: dict[str, object], path: str, flavour: TaskFlavour = FLAVOUR):
    data = {("fork.tasks", name): json.dumps(value).encode() for name, value in files.items()}
    return list(read_task_file(context(data, path), flavour))


def user(*texts: str, ts: int = 1759400100000) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text} for text in texts], "ts": ts}


def assistant(text: str, ts: int = 1759400101000) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "ts": ts}


def test_every_row_carries_the_flavours_columns_and_the_record_time():
    (row,) = rows({API: [user("<task>\nfix it\n</task>")]}, API)
    assert (row.turn_type, row.text, row.session_id, row.project_path) == ("user", "fix it", "1759400100000", "/work")
    assert (row.locator, row.timestamp_ns) == ("json:/0/content/0", 1759400100000 * 10**6)
    assert row.timestamp_source == "record"


def test_only_the_flavours_tool_names_are_calls():
    text = "<read_file>\n<path>a</path>\n</read_file><list_files>\n<path>.</path>\n</list_files>"
    found = rows({API: [assistant(text)]}, API)
    assert [row.turn_type for row in found] == ["tool_use", "assistant", "system"]
    assert found[0].tool_name == "read_file" and found[0].tool_use_id == "0"
    other = TaskFlavour(tool_names=("list_files",), columns=FLAVOUR.columns)
    assert [row.tool_name for row in rows({API: [assistant(text)]}, API, other) if row.turn_type == "tool_use"] \
        == ["list_files"]


def test_results_join_by_tool_name_and_second_calls_get_dotted_ids():
    calls = "<read_file>\n<path>a</path>\n</read_file>\n<execute_command>\n<command>ls</command>\n</execute_command>"
    history = [assistant(calls), user("[execute_command for 'ls'] Result:", "a.py"),]
    found = rows({API: history}, API)
    uses = {row.tool_name: row.tool_use_id for row in found if row.turn_type == "tool_use"}
    assert uses == {"read_file": "0", "execute_command": "0.2"}
    (result,) = [row for row in found if row.turn_type == "tool_result"]
    assert (result.tool_name, result.tool_use_id, result.text) == ("execute_command", "0.2", "a.py")
    # the user message closes the turn: the call it did not answer is reported, at the call
    (orphan,) = [row for row in found if row.text.startswith("parser: no result")]
    assert orphan.text == "parser: no result recorded for tool call 0 (read_file)"
    assert orphan.locator == "json:/0/content/0"


def test_a_call_still_open_at_the_next_assistant_message_gets_the_no_result_row():
    history = [assistant("<read_file>\n<path>a</path>\n</read_file>"), assistant("done", ts=1759400102000)]
    found = rows({API: history}, API)
    assert found[1].text == "parser: no result recorded for tool call 0 (read_file)"
    assert (found[1].locator, found[1].session_id) == ("json:/0/content/0", "1759400100000")


def test_a_denial_is_a_permission_decision_and_a_result_without_call_says_so():
    found = rows({API: [user("[execute_command for 'rm'] Result:", "The user denied this operation.")]}, API)
    assert [row.text for row in found if row.turn_type == "system"] == [
        "parser: tool result for execute_command with no tool call before it", "permission decision: denied"]


def test_ui_messages_only_without_the_api_history():
    ui = [{"type": "say", "say": "text", "text": "fix it", "ts": 1},
          {"type": "ask", "ask": "command", "text": "ls", "ts": 2},
          {"type": "say", "say": "command_output", "text": "a.py", "ts": 3},
          {"type": "ask", "ask": "tool", "text": json.dumps({"tool": "readFile", "path": "a"}), "ts": 4}]
    found = rows({UI: ui}, UI)
    assert [row.turn_type for row in found] == ["user", "tool_use", "tool_result", "tool_use", "system"]
    assert found[2].tool_use_id == "2" and found[-1].text.startswith("parser: no result recorded for tool call 4")
    assert rows({UI: ui, API: []}, UI) == []


def test_a_file_of_the_wrong_shape_is_one_parser_row():
    (row,) = rows({API: {"not": "a list"}}, API)
    assert row.text.startswith("parser:")
