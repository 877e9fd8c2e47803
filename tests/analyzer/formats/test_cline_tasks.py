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


def native(call_id: str, name: str = "read_file") -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": {"p": 1}}],
            "ts": 1759400101000}


def answer(call_id: str, content, *more: dict) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}, *more],
            "ts": 1759400102000}


def test_native_blocks_join_by_id_whatever_the_tool_name():
    found = rows({API: [native("t1"), answer("t1", "[read_file for 'a'] Result:\nbody")]}, API)
    assert [(row.turn_type, row.tool_use_id, row.tool_name, row.text) for row in found] == [
        ("tool_use", "t1", "read_file", '{"p": 1}'), ("tool_result", "t1", "read_file", "body")]


def test_a_result_without_the_header_keeps_its_whole_text():
    found = rows({API: [native("t1"), answer("t1", [{"type": "text", "text": "7"}])]}, API)
    assert found[-1].text == "7" and found[-1].tool_use_id == "t1"


def test_a_feedback_note_after_a_result_is_a_user_row_and_turns_the_decision():
    note = {"type": "text", "text": "The user provided the following feedback:\n<feedback>\nnot yet\n</feedback>"}
    denied = rows({API: [native("t1"), answer("t1", "[read_file for 'a'] Result:\nThe user denied this operation.",
                                                  note)]}, API)
    assert [row.text for row in denied if row.turn_type != "tool_use"] == [
        "The user denied this operation.", "permission decision: denied with feedback", "not yet"]
    approved = rows({API: [native("t1"), answer("t1", "[read_file for 'a'] Result:\nok", note)]}, API)
    decisions = [row.text for row in approved if row.turn_type == "system"]
    assert decisions == ["permission decision: approved with feedback"]
    alone = rows({API: [user(note["text"])]}, API)
    assert [(row.turn_type, row.text) for row in alone] == [("user", "not yet")]


def test_the_models_are_rows_only_for_a_flavour_that_asks():
    message = {"role": "assistant", "content": "hi", "modelInfo": {"modelId": "m1"}, "ts": 1759400101000}
    assert [row.text for row in rows({API: [message]}, API)] == ["hi"]
    with_models = TaskFlavour(tool_names=FLAVOUR.tool_names, columns=FLAVOUR.columns, models=True)
    found = rows({API: [message]}, API, with_models)
    assert [(row.text, row.model) for row in found] == [("model: m1", "m1"), ("hi", "m1")]


def test_untimed_messages_take_the_flavours_time_or_carry_the_last_one():
    plain = [user("a", ts=None)]
    assert rows({API: plain}, API)[0].timestamp_ns is None
    started = TaskFlavour(tool_names=(), columns=FLAVOUR.columns,
                          untimed=lambda ctx: {"timestamp_ns": 5, "timestamp_source": "index"})
    assert (rows({API: plain}, API, started)[0].timestamp_ns, rows({API: plain}, API, started)[0].timestamp_source) \
        == (5, "index")
    carry = TaskFlavour(tool_names=(), columns=FLAVOUR.columns, carry_time=True)
    found = rows({API: [assistant("x", ts=1759400101000), user("y", ts=None)]}, API, carry)
    assert found[-1].timestamp_ns == 1759400101000 * 10**6 and found[-1].timestamp_source == "index"


def test_ui_messages_beside_the_api_history_as_the_flavour_says():
    history = [user("<task>\nfix it\n</task>"), assistant("On it.")]
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix it"}, {"ts": 2, "type": "say", "say": "text",
                                                                      "text": "On it."},
          {"ts": 3, "type": "say", "say": "error", "text": "quota"}]
    assert rows({API: history, UI: ui}, UI) == []
    unique = TaskFlavour(tool_names=(), columns=FLAVOUR.columns, ui_beside_api="unique")
    assert [row.text for row in rows({API: history, UI: ui}, UI, unique)] == ["ui say error: quota"]
    transcript = TaskFlavour(tool_names=(), columns=FLAVOUR.columns, ui_beside_api="transcript")
    assert [row.text for row in rows({API: history, UI: ui}, UI, transcript)] == ["fix it", "On it.",
                                                                                 "ui say error: quota"]
    assert rows({API: history, UI: ui}, API, transcript) == []  # no permission rows in this history


def test_the_output_block_after_an_approval_with_a_note_answers_that_call_not_an_open_one():
    calls = "<execute_command>\n<command>ls</command>\n</execute_command>\n<read_file>\n<path>a</path>\n</read_file>"
    approved = "The user approved this operation and provided the following context:\n<feedback>\nok\n</feedback>"
    history = [assistant(calls), user("[execute_command for 'ls'] Result:", approved,
                                      "[execute_command for 'ls'] Result:", "a.py",
                                      "Tool [read_file] was not executed because a tool has already been used.")]
    results = [(row.tool_use_id, row.text) for row in rows({API: history}, API) if row.turn_type == "tool_result"]
    assert results == [("0", approved), ("0", "a.py"), ("0.2", results[2][1])]


def test_a_partial_event_is_a_row_of_its_kind_marked_partial_in_every_flavour():
    history = [user("<task>\nfix it\n</task>")]
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix it"},
          {"ts": 2, "type": "say", "say": "error", "text": "quota"},
          {"ts": 3, "type": "say", "say": "text", "text": "The cau", "partial": True}]
    expected = ("assistant", "partial: The cau", "json:/2")
    for mode, texts in (("none", []), ("unique", ["ui say error: quota"]),
                        ("transcript", ["fix it", "ui say error: quota"])):
        flavour = TaskFlavour(tool_names=(), columns=FLAVOUR.columns, ui_beside_api=mode)
        found = rows({API: history, UI: ui}, UI, flavour)
        assert [row.text for row in found[:-1]] == texts, mode
        assert (found[-1].turn_type, found[-1].text, found[-1].locator) == expected, mode


def test_a_hostile_partial_flag_or_kind_never_raises():
    ui = [{"ts": [1], "type": "say", "say": ["text"], "text": "x", "partial": True},
          {"ts": {"a": 1}, "type": "ask", "ask": {"k": 1}, "partial": "yes"},
          {"ts": True, "type": "say", "say": "text", "text": "y", "partial": True}]
    found = rows({UI: ui}, UI)  # only a JSON true marks an event partial
    assert [row.text for row in found] == ["partial: ui say ['text']: x", "ui ask {'k': 1}: ", "partial: y"]


# -- what the walk holds, and how long it takes (docs/timeline.md, Limits of parsing) -----------------------


def test_a_user_messages_rows_are_written_as_its_blocks_are_read():
    """Nothing is held back: a block changed after the first row was taken shows in the next row."""
    from aitrail.analyzer.formats.cline_tasks import api_rows

    messages = [{"role": "user", "content": [{"type": "text", "text": "<environment_details>"},
                                             {"type": "text", "text": "first"}], "ts": 1759400100000}]
    walk = api_rows(messages, FLAVOUR, {}, {})
    assert next(walk).text == "<environment_details>"
    messages[0]["content"][1] = {"type": "text", "text": "changed before it was read"}
    assert [row.text for row in walk] == ["changed before it was read"]


def test_a_note_turns_the_denial_of_the_last_result_only_whatever_comes_between():
    note = "The user provided the following feedback:\n<feedback>\nnot that\n</feedback>"
    denied = "[execute_command for 'rm'] Result:\nThe user denied this operation."
    calls = "<execute_command>\n<command>rm</command>\n</execute_command>" * 2
    apart = rows({API: [assistant(calls), user(denied, "<environment_details>\nx", "[TASK RESUMPTION]", note)]}, API)
    assert [row.text for row in apart if row.text.startswith("permission")] == [
        "permission decision: denied with feedback"]
    later = rows({API: [assistant(calls), user(denied, "[execute_command for 'rm'] Result:\nran", note)]}, API)
    assert [(row.text, row.tool_use_id) for row in later if row.text.startswith("permission")] == [
        ("permission decision: denied", "0"), ("permission decision: approved with feedback", "0.2")]


def test_result_headers_that_never_close_are_read_in_linear_time():
    """``[`` and a long tool name took time quadratic in the name (20,000 characters 2.7 s; 50,000 about 17 s)."""
    import time

    from aitrail.analyzer.formats.cline_results import classify_user_block

    started = time.process_time()
    for text in ("[" + "a" * 50_000, "Tool [" + "b" * 50_000, "Skipping tool " + "c" * 50_000 + " x"):
        assert classify_user_block(text).kind == "user"
    assert time.process_time() - started < 5
    assert classify_user_block("[read_file for 'a] Result:'] Result:\nout").text == "out"
    assert classify_user_block("Tool [x_y] skipped due to user rejecting a previous tool").tool_name == "x_y"


def test_assistant_text_is_split_one_segment_at_a_time():
    """Two hundred thousand calls in one text block were a list of every segment before the first row."""
    import itertools
    import tracemalloc

    from aitrail.analyzer.formats.cline_tasks import split_assistant_text

    text = "<read_file>\n<path>a</path>\n</read_file>" * 200_000
    tracemalloc.start()
    try:
        first = list(itertools.islice(split_assistant_text(text, ("read_file",)), 3))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [segment.tool_name for segment in first] == ["read_file"] * 3 and peak < 1_000_000


def test_whitespace_is_collapsed_a_piece_at_a_time_as_split_would(monkeypatch):
    import random
    import tracemalloc

    from aitrail.analyzer.formats import cline_ui

    words = "ab " * (4 * 1024 * 1024 // 3)
    tracemalloc.start()
    try:
        assert cline_ui.collapsed(words) == words.strip()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(words)  # split() made an object of every word: about 21 times the text
    monkeypatch.setattr(cline_ui, "COLLAPSE_CHUNK", 5)
    pieces = ["a", "bc", " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "d\r"]
    generator = random.Random(7)
    for _ in range(3000):
        sample = "".join(generator.choice(pieces) for _ in range(generator.randrange(40)))
        assert cline_ui.collapsed(sample) == " ".join(sample.split()), repr(sample)


def test_beside_the_api_history_its_rows_are_streamed_not_collected():
    """Only the ui file's own row keys are held: an API history of many distinct texts adds nothing held."""
    import tracemalloc

    unique = TaskFlavour(tool_names=(), columns=FLAVOUR.columns, ui_beside_api="unique")
    ui = [{"ts": 1, "type": "say", "say": "error", "text": "quota"}]

    def peak(texts: list[str]) -> int:
        history = [assistant(text) for text in texts]
        files = {("fork.tasks", API): json.dumps(history).encode(), ("fork.tasks", UI): json.dumps(ui).encode()}
        ctx = context(files, UI)
        ctx.bundle.iter_bytes = lambda source: iter([ctx.bundle.read(source)])  # not the fake's 7-byte chunks
        tracemalloc.start()
        try:
            assert [row.text for row in read_task_file(ctx, unique)] == ["ui say error: quota"]
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    size = 150 * 20_000
    distinct = peak([f"{number:06d} " + "x" * 19_993 for number in range(150)])
    alike = peak(["000000 " + "x" * 19_993] * 150)
    assert distinct - alike < size // 4  # the keys of every API row held the whole text again
