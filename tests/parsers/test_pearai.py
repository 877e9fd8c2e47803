"""PearAI parsers, one rule per test (docs/agents/pearai.md)."""

from __future__ import annotations

import json

from tests.analyzer.fakes import FakeBundle, drafts

TASK = ".config/PearAI/User/globalStorage/pearai.pearai-roo-cline/tasks/1759400100000/"
API = TASK + "api_conversation_history.json"
UI = TASK + "ui_messages.json"


def task_rows(files: dict[str, object], path: str):
    bundle = FakeBundle({("pearai.agent_tasks", name): json.dumps(value).encode() for name, value in files.items()})
    return drafts(bundle, path, "pearai.agent_task.v1")


def test_a_tool_tag_is_a_tool_use_and_its_result_is_never_a_user_row():
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nrun the tests\n</task>"}], "ts": 1759400100000},
        {"role": "assistant", "content": [{"type": "text", "text":
         "Running them.\n<execute_command>\n<command>npm test</command>\n</execute_command>"}], "ts": 1759400101000},
        {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'npm test'] Result:"},
                                     {"type": "text", "text": "3 passing"}], "ts": 1759400102000},
    ]
    rows = task_rows({API: history}, API)
    kinds = [(row.turn_type, row.tool_use_id) for row in rows]
    assert ("tool_use", "1") in kinds and ("tool_result", "1") in kinds
    assert [row.text for row in rows if row.turn_type == "user"] == ["run the tests"]
    assert not [row for row in rows if row.text.startswith("parser: no result")]


def test_a_call_without_a_result_gets_the_no_result_row():
    history = [{"role": "assistant", "content": "<read_file>\n<path>a.py</path>\n</read_file>", "ts": 1759400101000}]
    rows = task_rows({API: history}, API)
    assert rows[-1].text == "parser: no result recorded for tool call 0 (read_file)"
    assert rows[-1].tool_use_id == "0" and rows[-1].timestamp_ns == 1759400101000 * 1_000_000


DENIED_HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nclean up\n</task>"}], "ts": 1759400100000},
    {"role": "assistant", "content": [{"type": "text", "text": "<execute_command>\n<command>rm -rf build</command>\n"
                                                               "</execute_command>"}], "ts": 1759400103000},
    {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'rm -rf build'] Result:"},
                                 {"type": "text", "text": "The user denied this operation."}], "ts": 1759400109000},
]
DENIED_UI = [{"type": "say", "say": "text", "text": "clean up", "ts": 1759400100000},
             {"type": "ask", "ask": "command", "text": "ls", "ts": 1759400101000},
             {"type": "ask", "ask": "command", "text": "rm -rf build", "ts": 1759400103000},
             {"type": "ask", "ask": "command", "text": "later", "ts": 1759400200000}]


def test_ui_messages_are_the_transcript_where_they_exist():
    ui = [{"type": "say", "say": "text", "text": "fix the build", "ts": 1759400100000}]
    assert [row.turn_type for row in task_rows({UI: ui}, UI)] == ["user"]
    assert [row.text for row in task_rows({UI: ui, API: []}, UI)] == ["fix the build"]


def test_beside_ui_messages_the_api_history_gives_its_permission_rows_with_the_ui_asks_id():
    rows = task_rows({API: DENIED_HISTORY, UI: DENIED_UI}, API)
    assert [(row.text, row.tool_use_id, row.tool_name) for row in rows] == [
        ("permission decision: denied", "1759400103000", "execute_command")]  # the last ask at or before the answer
    assert rows[0].timestamp_ns == 1759400109000 * 1_000_000


def test_without_readable_ui_messages_the_api_history_is_the_transcript_with_positional_ids():
    for files in ({API: DENIED_HISTORY}, {API: DENIED_HISTORY, UI: {"not": "a list"}}):
        rows = task_rows(files, API)
        assert [row.turn_type for row in rows] == ["user", "tool_use", "tool_result", "system"]
        assert rows[-1].text == "permission decision: denied" and rows[-1].tool_use_id == "1"


def test_the_output_block_after_an_approval_with_a_note_is_that_calls_result():
    approved = "The user approved this operation and provided the following context:\n<feedback>\none line\n</feedback>"
    history = [
        {"role": "assistant", "content": [{"type": "text", "text": "<write_to_file>\n<path>N.md</path>\n"
                                                                   "</write_to_file>"}], "ts": 1759400103000},
        {"role": "user", "content": [{"type": "text", "text": "[write_to_file for 'N.md'] Result:"},
                                     {"type": "text", "text": approved},
                                     {"type": "text", "text": "[write_to_file for 'N.md'] Result:"},
                                     {"type": "text", "text": "The content was successfully saved to N.md."}],
         "ts": 1759400109000},
    ]
    rows = task_rows({API: history}, API)
    results = [(row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("0", approved), ("0", "The content was successfully saved to N.md.")]
    assert not [row for row in rows if row.text.startswith("parser:")]
    assert [row.text for row in rows if row.text.startswith("permission")] == [
        "permission decision: approved with feedback"]


def test_a_history_that_is_not_an_array_is_one_parser_row():
    rows = task_rows({API: {"role": "user"}}, API)
    assert len(rows) == 1 and rows[0].text.startswith("parser:")


def test_tool_asks_of_the_ui_transcript_past_the_call_budget_are_written_and_counted_not_held(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    ui = [{"type": "say", "say": "text", "text": "read both", "ts": 1759400100000},
          {"type": "ask", "ask": "tool", "text": '{"tool":"readFile","path":"a"}', "ts": 1759400101000},
          {"type": "ask", "ask": "command", "text": "ls", "ts": 1759400102000},
          {"type": "say", "say": "command_output", "text": "a.py", "ts": 1759400103000}]
    rows = task_rows({UI: ui, API: []}, UI)
    assert [(row.turn_type, row.tool_use_id, row.locator) for row in rows] == [
        ("user", "", "json:/0"), ("tool_use", "1759400101000", "json:/1"), ("tool_use", "1759400102000", "json:/2"),
        ("tool_result", "", "json:/3"),  # it answers the newest ask, which was not held: never the older one
        ("system", "1759400101000", "json:/1"), ("system", "", "json:/2")]
    assert rows[4].text == "parser: no result recorded for tool call 1759400101000 (readFile)"
    assert rows[5].text.startswith("parser: tool calls over the limit (1 call ids") and "(1 in all)" in rows[5].text

LOG = ".config/PearAI/logs/20251002T101500/window1/exthost/output_logging_20251002T101502/2-PearAI.log"
SEPARATOR, RULE = "=" * 74, "#" * 44


def log_rows(text: str, patch_chunks: bool = False):
    bundle = FakeBundle({("pearai.output_logs", LOG): text.encode()})
    if patch_chunks:  # read whole, not in the fake's 7-byte chunks (whose list would be what is measured)
        bundle.iter_bytes = lambda source: iter([bundle.read(source)])
    return drafts(bundle, LOG, "pearai.output_log.v1")


def test_the_output_log_is_read_one_write_at_a_time_lone_separators_kept_as_text():
    text = "\n".join(["stray", SEPARATOR, SEPARATOR, "Settings:", "model: m1", "temperature: 0", RULE, "<user>\nhi",
                      SEPARATOR, SEPARATOR, "Completion:", "Hello", SEPARATOR, "there", ""])
    rows = log_rows(text)
    assert [(row.turn_type, row.text, row.locator) for row in rows] == [
        ("system", "parser: unparseable record (text before the first record separator): stray", "line:1"),
        ("system", "model: m1", "line:4"), ("user", "hi", "line:4"),
        ("assistant", f"Hello\n{SEPARATOR}\nthere", "line:12")]
    assert [row.text for row in log_rows(f"{SEPARATOR}\n{SEPARATOR}\nSettings:\nmodel: m1")] == [
        "parser: unparseable record (Settings: write with no # rule (cut off mid-write)): Settings:\nmodel: m1"]


def test_an_output_log_of_millions_of_lines_holds_no_list_of_them():
    """Every line was a list entry twice (lines, then the write's body): 8 bytes a line, 16 times an empty one."""
    import tracemalloc

    text = f"{SEPARATOR}\n{SEPARATOR}\nCompletion:" + "\n" * 2_000_000 + "done"
    tracemalloc.start()
    try:
        rows = log_rows(text, patch_chunks=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(row.text, row.locator) for row in rows] == [("model completion: done", "line:3")]
    assert peak < 8 * len(text)  # the text, its bytes and a write's slices; a list of lines was 28 times
