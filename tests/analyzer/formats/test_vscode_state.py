"""globalState task history and auto-approval keys, on a made-up extension row."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.vscode_state import global_state_rows, task_workspaces
from tests.analyzer.formats.walk import context, state_db

ROW = "Some.extension"
DB = ("fork.global_state", "globalStorage/state.vscdb")


def state_rows(state, keys=("alwaysAllowWrite", "allowedCommands")):
    data = state_db({ROW: state if isinstance(state, str) else json.dumps(state), "other": "{}"})
    return list(global_state_rows(context({DB: data}, DB[1]), ROW, keys))


def test_approval_keys_in_the_given_order_then_tasks():
    state = {"allowedCommands": ["npm test"], "alwaysAllowWrite": True, "unrelated": 1,
             "taskHistory": [{"id": "t1", "ts": 1759400100000, "task": "fix it", "workspace": "/w"}]}
    found = state_rows(state)
    assert [row.text for row in found[:2]] == [
        "permission setting: alwaysAllowWrite=true (from state.vscdb some.extension, file mtime)",
        'permission setting: allowedCommands=["npm test"] (from state.vscdb some.extension, file mtime)']
    assert found[0].timestamp_source == "file-mtime" and found[0].locator.endswith("/alwaysAllowWrite")
    task = found[2]
    assert task.text.startswith("task: ") and (task.session_id, task.project_path) == ("t1", "/w")
    assert task.timestamp_ns == 1759400100000 * 10**6


def test_a_missing_row_gives_nothing_and_a_bad_one_a_parser_row():
    assert list(global_state_rows(context({DB: state_db({"other": "{}"})}, DB[1]), ROW, ())) == []
    (row,) = state_rows("[1, 2]")
    assert row.text.startswith("parser:") and "not an object" in row.text
    assert state_rows({"taskHistory": {}})[-1].text.startswith("parser:")
    assert state_rows({"taskHistory": [{"ts": 1}]})[-1].text.startswith("parser:")


def test_task_workspaces_join_every_database_of_the_store():
    files = {DB: state_db({ROW: json.dumps({"taskHistory": [{"id": "t1", "workspace": "/w"}, {"id": "t2"}]})}),
             ("fork.tasks", "tasks/t1/ui_messages.json"): b"[]"}
    ctx = context(files, "tasks/t1/ui_messages.json")
    assert task_workspaces(ctx, ROW) == {"t1": "/w"}
    assert task_workspaces(ctx, ROW, store="elsewhere") == {}


def test_read_extension_state_returns_the_row_and_state_or_one_parser_row():
    from aitrail.analyzer.formats.vscode_state import read_extension_state

    def run(rows: dict) -> tuple[list, object]:
        ctx = context({("fork.state", "state.vscdb"): state_db(rows)}, "state.vscdb")
        generator, drafts = read_extension_state(ctx, "Fork.ext"), []
        try:
            while True:
                drafts.append(next(generator))
        except StopIteration as stop:
            return drafts, stop.value

    drafts, found = run({"Fork.ext": '{"a": 1}'})
    assert drafts == [] and found[1] == {"a": 1} and found[0].locator() == "sqlite:ItemTable:1"
    assert run({"other": "{}"}) == ([], None)
    drafts, found = run({"Fork.ext": "[1]"})
    assert found is None and [row.text for row in drafts] == [
        "parser: unparseable file (state.vscdb: row 'Fork.ext' is a JSON list, not an object)"]
