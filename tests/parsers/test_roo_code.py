"""Roo Code parsers, one rule per test (docs/agents/roo-code.md)."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts, run

ROOT = ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/"
TASK_ID = "019c4a2e-7b40-7c31-9d2a-5e8f1b3c6a70"
TASK = f"{ROOT}tasks/{TASK_ID}/"
API = TASK + "api_conversation_history.json"
UI = TASK + "ui_messages.json"
ITEM = TASK + "history_item.json"
INDEX = ROOT + "tasks/_index.json"
STATE = ".config/Code/User/globalStorage/state.vscdb"
ENTRY = {"id": TASK_ID, "number": 14, "ts": 1770737415000, "task": "Rename fetchAll", "tokensIn": 10, "tokensOut": 2,
         "totalCost": 0.01, "workspace": "/home/alice/src/crawler", "mode": "code"}


def encode(value: object) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def task_rows(files: dict[str, object], path: str = API):
    stores = {API: "tasks", UI: "tasks", ITEM: "history_items", TASK + "claude_messages.json": "tasks"}
    bundle = FakeBundle({(f"roo-code.{stores[name]}", name): encode(value) for name, value in files.items()})
    return drafts(bundle, path, "roo_code.task.v1")


def state_db(value: dict) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.vscdb"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        connection.execute("INSERT INTO ItemTable VALUES (?, ?)", ("RooVeterinaryInc.roo-cline", json.dumps(value)))
        connection.execute("INSERT INTO ItemTable VALUES (?, ?)",
                           ('secret://{"extensionId":"rooveterinaryinc.roo-cline","key":"openRouterApiKey"}',
                            "sk-or-v1-secretsecret"))
        connection.commit()
        connection.close()
        return path.read_bytes()


def user(*blocks, **extra):
    return {"role": "user", "content": list(blocks), "ts": 1770737400000, **extra}


def assistant(*blocks, **extra):
    return {"role": "assistant", "content": list(blocks), "ts": 1770737401000, **extra}


def call(call_id: str, name: str = "execute_command", **tool_input):
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input or {"command": "ls"}}


def result(call_id: str, content: str):
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def test_a_native_tool_result_joins_its_call_by_id_and_is_never_a_user_row():
    rows = task_rows({API: [user({"type": "text", "text": "<user_message>\nlist it\n</user_message>"}),
                            assistant(call("toolu_a", "read_file", path="a.py"), call("toolu_b")),
                            user(result("toolu_b", "b output"), result("toolu_a", "a output"))]})
    results = {row.tool_use_id: (row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"}
    assert results == {"toolu_a": ("read_file", "a output"), "toolu_b": ("execute_command", "b output")}
    assert [row.text for row in rows if row.turn_type == "user"] == ["list it"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_every_native_call_without_a_result_gets_one_no_result_row():
    stop = {"type": "text", "text": "<user_message>\nstop\n</user_message>"}
    rows = task_rows({API: [assistant(call("toolu_a")), user(stop)]})
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call toolu_a (execute_command)"]


def test_a_result_without_its_call_says_so():
    rows = task_rows({API: [user(result("toolu_x", "out"))]})
    assert rows[0].turn_type == "tool_result"
    assert rows[1].text == "parser: tool result for call toolu_x with no tool call before it"


def test_json_status_strings_are_permission_decisions_carrying_the_call_id():
    statuses = {"toolu_1": '{"status":"denied","feedback":"use apply_diff"}',
                "toolu_2": '{"status":"denied","message":"The user denied this operation."}',
                "toolu_3": '{"status":"approved","feedback":"keep an alias"}\n\n{"path":"a.py"}',
                "toolu_4": '{"status":"error","message":"The tool execution failed","error":"timeout"}',
                "toolu_5": "The user denied this operation."}  # 3.32-3.33.0: the XML-era plain text
    rows = task_rows({API: [assistant(*(call(key) for key in statuses)),
                            user(*(result(key, text) for key, text in statuses.items()))]})
    decisions = {row.tool_use_id: row.text for row in rows if row.text.startswith("permission decision:")}
    assert decisions == {"toolu_1": "permission decision: denied with feedback",
                         "toolu_2": "permission decision: denied",
                         "toolu_3": "permission decision: approved with feedback",
                         "toolu_5": "permission decision: denied"}
    assert all(row.tool_name == "execute_command" for row in rows if row.text.startswith("permission"))


def test_condensed_messages_stay_as_marked_rows_and_the_summary_is_no_user_row():
    parent = "c0ffee00-0000-4000-8000-000000000001"
    rows = task_rows({API: [
        user({"type": "text", "text": "<user_message>\nfix it\n</user_message>"}, condenseParent=parent),
        assistant(call("toolu_a"), condenseParent=parent),
        user({"type": "text", "text": "## Conversation Summary\nfixing it"}, isSummary=True, condenseId=parent),
        user(result("toolu_a", "done"))]})
    texts = [(row.turn_type, row.text) for row in rows]
    assert ("user", "condensed: fix it") in texts and ("tool_use", 'condensed: {"command":"ls"}') in texts
    assert ("system", "condense summary: ## Conversation Summary\nfixing it") in texts
    assert [row.text for row in rows if row.turn_type == "user"] == ["condensed: fix it"]
    assert ("tool_result", "done") in texts


def test_a_tool_use_copied_into_the_summary_makes_no_second_call():
    parent = "c0ffee00-0000-4000-8000-000000000002"
    rows = task_rows({API: [
        assistant(call("toolu_a"), condenseParent=parent),
        assistant({"type": "text", "text": "summary"}, call("toolu_a"), isSummary=True, condenseId=parent),
        user(result("toolu_a", "done"))]})
    assert [row.tool_use_id for row in rows if row.turn_type == "tool_use"] == ["toolu_a"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_an_orphaned_condense_tag_is_not_marked():
    rows = task_rows({API: [assistant({"type": "text", "text": "still visible"}, condenseParent="gone")]})
    assert [row.text for row in rows] == ["still visible"]


def test_xml_era_calls_keep_the_shared_walk_and_user_message_is_unwrapped():
    rows = task_rows({API: [
        user({"type": "text", "text": "<task>\nrun the tests\n</task>"}),
        assistant({"type": "text", "text": "<execute_command>\n<command>npm test</command>\n</execute_command>"}),
        user({"type": "text", "text": "[execute_command for 'npm test'] Result:"}, {"type": "text", "text": "ok"}),
        user({"type": "text", "text": "<user_message>\nthanks\n</user_message>"})]})
    assert [(row.turn_type, row.tool_use_id) for row in rows if row.tool_use_id] == [("tool_use", "1"),
                                                                                    ("tool_result", "1")]
    assert [row.text for row in rows if row.turn_type == "user"] == ["run the tests", "thanks"]


def test_the_project_comes_from_the_history_item_beside_the_task():
    rows = task_rows({API: [user({"type": "text", "text": "<user_message>\nhi\n</user_message>"})], ITEM: ENTRY})
    assert rows[0].project_path == "/home/alice/src/crawler" and rows[0].session_id == TASK_ID


def test_a_damaged_api_history_is_one_parser_row_and_ui_messages_stand_in():
    ui = [{"ts": 1770737400000, "type": "say", "say": "text", "text": "fix the build"}]
    files = {API: b'[{"role": "user", "content": "fix', UI: ui, ITEM: ENTRY}
    api_rows = task_rows(files, API)
    assert len(api_rows) == 1 and api_rows[0].text.startswith("parser: unparseable file")
    assert [(row.turn_type, row.text) for row in task_rows(files, UI)] == [("user", "fix the build")]
    assert task_rows({API: [], UI: ui}, UI) == []  # beside a readable API history it adds nothing


def test_beside_the_api_history_only_the_partial_events_of_a_cut_stream_are_rows():
    history = [user({"type": "text", "text": "<user_message>\nfix the dates\n</user_message>"})]
    ui = [{"ts": 1, "type": "say", "say": "text", "text": "fix the dates"},
          {"ts": 2, "type": "say", "say": "reasoning", "text": "Pinning TZ sho", "partial": True},
          {"ts": 3, "type": "say", "say": "text", "text": "I'll pin the zone:", "partial": False},
          {"ts": 4, "type": "ask", "ask": "command", "text": "TZ=UTC pytest tests/te", "partial": True}]
    rows = task_rows({API: history, UI: ui, ITEM: ENTRY}, UI)
    assert [(row.turn_type, row.text, row.locator) for row in rows] == [
        ("thinking", "partial: Pinning TZ sho", "json:/1"),
        ("tool_use", "partial: TZ=UTC pytest tests/te", "json:/3"),
        ("system", "parser: no result recorded for tool call 4 (execute_command)", "json:/3")]
    assert rows[1].tool_name == "execute_command" and rows[1].tool_use_id == "4"
    assert {row.project_path for row in rows} == {"/home/alice/src/crawler"}


def test_a_partial_reply_the_api_history_holds_is_not_repeated():
    history = [user({"type": "text", "text": "<user_message>\nhi\n</user_message>"}),
               assistant({"type": "text", "text": "Hello."})]
    ui = [{"ts": 2, "type": "say", "say": "text", "text": "Hello.", "partial": True}]
    assert task_rows({API: history, UI: ui}, UI) == []


def test_a_tools_image_after_its_result_is_described_never_copied():
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    rows = task_rows({API: [assistant(call("toolu_a", "read_file", path="a.png")),
                            user(result("toolu_a", "Image file"), png)]})
    images = [(row.turn_type, row.tool_use_id, row.text) for row in rows if row.text.startswith("[image")]
    assert images == [("tool_result", "toolu_a", "[image image/png, 8 bytes]")]


def test_claude_messages_json_is_read_by_its_shape():
    old = TASK + "claude_messages.json"
    api_shaped = [user({"type": "text", "text": "<task>\nhello\n</task>"})]
    ui_shaped = [{"ts": 1, "type": "say", "say": "text", "text": "hello"}]
    assert [row.turn_type for row in task_rows({old: api_shaped}, old)] == ["user"]
    assert [row.turn_type for row in task_rows({old: ui_shaped}, old)] == ["user"]


def test_one_task_row_per_task_across_history_item_index_and_global_state():
    files = {("roo-code.history_items", ITEM): encode(ENTRY),
             ("roo-code.task_index", INDEX): encode({"version": 1, "entries": [ENTRY, dict(ENTRY, id="other")]}),
             ("roo-code.global_state", STATE): state_db({"taskHistory": [ENTRY]})}
    bundle = FakeBundle(files)
    item_rows = drafts(bundle, ITEM, "roo_code.history_item.v1")
    assert [row.text for row in item_rows] == [
        "task: Rename fetchAll | tokensIn=10 tokensOut=2 totalCost=0.01 number=14 | mode=code"]
    assert [row.session_id for row in drafts(bundle, INDEX, "roo_code.task_index.v1")] == ["other"]
    assert [row for row in drafts(bundle, STATE, "roo_code.global_state.v1") if row.text.startswith("task:")] == []


def test_global_state_tasks_are_read_when_no_history_item_exists():
    bundle = FakeBundle({("roo-code.global_state", STATE): state_db({"taskHistory": [ENTRY, {"task": "no id"}]})})
    rows = drafts(bundle, STATE, "roo_code.global_state.v1")
    assert rows[0].session_id == TASK_ID and rows[0].timestamp_ns == 1770737415000 * 1_000_000
    assert rows[1].text.startswith("parser: unparseable record (task history entry without an id)")


def test_approval_keys_commands_and_custom_modes_are_permission_settings_and_no_credential_leaks():
    state = {"alwaysAllowExecute": True, "allowedCommands": ["npm test"], "deniedCommands": ["git push"],
             "openRouterImageApiKey": "sk-or-v1-0123456789abcdef", "apiKey": "sk-ant-api03-abcdef",
             "customModes": [{"slug": "docs", "groups": ["read", ["edit", {"fileRegex": "\\.md$"}]]}]}
    bundle = FakeBundle({("roo-code.global_state", STATE): state_db(state)})
    joined = json.dumps([list(row) for row in run(bundle, STATE, "roo_code.global_state.v1")])
    assert "sk-or-v1" not in joined and "sk-ant" not in joined and "secretsecret" not in joined
    drafted = [row.text for row in drafts(bundle, STATE, "roo_code.global_state.v1")]
    assert drafted == [
        "permission setting: alwaysAllowExecute=true (from state.vscdb rooveterinaryinc.roo-cline, file mtime)",
        'permission setting: allowedCommands=["npm test"] (from state.vscdb rooveterinaryinc.roo-cline, file mtime)',
        'permission setting: deniedCommands=["git push"] (from state.vscdb rooveterinaryinc.roo-cline, file mtime)',
        'permission setting: customModes[docs].groups=["read",["edit",{"fileRegex":"\\\\.md$"}]] '
        "(from state.vscdb rooveterinaryinc.roo-cline, file mtime)"]


def test_settings_json_command_lists_are_read_and_nothing_else():
    settings = b'{\n // lists\n "roo-cline.allowedCommands": ["npm test"],\n "http.proxy": "http://u:pw@proxy",\n}'
    bundle = FakeBundle({("roo-code.user_settings", ".config/Code/User/settings.json"): settings})
    rows = drafts(bundle, ".config/Code/User/settings.json", "roo_code.user_settings.v1")
    assert [row.text for row in rows] == [
        'permission setting: roo-cline.allowedCommands=["npm test"] (from settings.json, file mtime)']


def test_mcp_always_allow_is_a_permission_setting_and_no_secret_is_shown():
    path = ROOT + "settings/mcp_settings.json"
    settings = {"mcpServers": {"db": {"command": "uvx", "args": ["pg-mcp", "postgresql://app:hunter2@db/x"],
                                      "env": {"PGPASSWORD": "hunter2"}, "alwaysAllow": ["query"]}}}
    bundle = FakeBundle({("roo-code.mcp_settings", path): encode(settings)})
    texts = [row.text for row in drafts(bundle, path, "roo_code.mcp_settings.v1")]
    assert 'permission setting: mcpServers[db].alwaysAllow=["query"] (from mcp_settings.json, file mtime)' in texts
    assert "hunter2" not in "\n".join(texts)


def test_without_a_task_list_the_project_is_the_workspace_the_environment_details_name():
    details = {"type": "text", "text": "<environment_details>\n# Current Workspace Directory (/home/alice/src/ledger) "
                                       "Files\nledger/\n</environment_details>"}
    rows = task_rows({API: [user({"type": "text", "text": "<user_message>\nhi\n</user_message>"}, details)]})
    assert {row.project_path for row in rows} == {"/home/alice/src/ledger"}
    assert rows[1].turn_type == "system"  # the details are injected, never a user row


def test_no_credential_of_any_fixture_reaches_a_golden_row():
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "roo-code"
    timelines = "".join(path.read_text() for path in sorted(fixtures.glob("*/expected.csv")))
    assert timelines
    for secret in ("ghp_", "sk-or-v1", "hunter2", "[118,49,48", "roo_cline_config_api_config"):
        assert secret not in timelines


def test_fields_of_the_wrong_type_never_raise():
    odd = [["x"], {"a": 1}, 3, None]
    history = [assistant(call("toolu_a"), condenseParent=value, truncationParent=value) for value in odd]
    history += [assistant({"type": "text", "text": "s"}, isSummary=True, condenseId=value) for value in odd]
    history += [user(result("toolu_a", '{"status":["denied"],"feedback":"x"}'))]
    history += [user({"type": "tool_result", "tool_use_id": ["toolu_a"], "content": {"x": 1}})]
    rows = task_rows({API: history})
    assert rows and all(isinstance(row.text, str) for row in rows)
    entries = [{"id": ["x"]}, {"id": {"y": 1}}, ENTRY]
    bundle = FakeBundle({("roo-code.task_index", INDEX): encode({"entries": entries}),
                         ("roo-code.history_items", ITEM): encode(ENTRY)})
    index_rows = drafts(bundle, INDEX, "roo_code.task_index.v1")
    assert [row.text.startswith("parser:") for row in index_rows] == [True, True]


def test_an_xml_call_the_next_user_message_does_not_answer_gets_its_no_result_row():
    rows = task_rows({API: [assistant({"type": "text", "text": "<read_file>\n<path>a.py</path>\n</read_file>"}),
                            user({"type": "text", "text": "never mind"}),
                            assistant({"type": "text", "text": "<list_files>\n<path>.</path>\n</list_files>"})]})
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call 0 (read_file)",
        "parser: no result recorded for tool call 2 (list_files)"]


def test_a_damaged_state_database_is_one_parser_row():
    bundle = FakeBundle({("roo-code.global_state", STATE): b"SQLite format 3\x00" + b"\xff" * 84})
    rows = drafts(bundle, STATE, "roo_code.global_state.v1")
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (state.vscdb: ")


def test_native_calls_past_the_call_budget_are_written_and_counted_not_held(monkeypatch):
    """Calls are joined anywhere later in the file, so every id was held to the end (docs/agents/roo-code.md)."""
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 2)
    rows = task_rows({API: [assistant(call("c1"), call("c2"), call("c3")), user(result("c3", "ok")),
                            assistant({"type": "text", "text": "Done."})]})
    assert [(row.turn_type, row.tool_use_id) for row in rows if row.turn_type.startswith("tool")] == [
        ("tool_use", "c1"), ("tool_use", "c2"), ("tool_use", "c3"), ("tool_result", "c3")]
    notes = [row.text for row in rows if row.text.startswith("parser:")]
    assert notes[0] == "parser: tool result for call c3 with no tool call before it"  # c3 was written, not held
    assert notes[1:3] == ["parser: no result recorded for tool call c1 (execute_command)",
                          "parser: no result recorded for tool call c2 (execute_command)"]
    assert notes[3].startswith("parser: tool calls over the limit (2 call ids") and "(1 in all)" in notes[3]
    assert "Done." in [row.text for row in rows] and len(notes) == 4
