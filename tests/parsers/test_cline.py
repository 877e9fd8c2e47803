"""Cline parsers, one rule per test (docs/agents/cline.md)."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts

STORAGE = ".config/Code/User/globalStorage/"
EXT = STORAGE + "saoudrizwan.claude-dev/"
TASK = EXT + "tasks/1768385100000/"
API, UI, META = TASK + "api_conversation_history.json", TASK + "ui_messages.json", TASK + "task_metadata.json"
HISTORY = EXT + "state/taskHistory.json"
STATE = STORAGE + "state.vscdb"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cline"
STORES = {"api_conversation_history.json": "cline.tasks", "ui_messages.json": "cline.tasks",
          "task_metadata.json": "cline.tasks", "taskHistory.json": "cline.task_history",
          "state.vscdb": "cline.global_state", "globalState.json": "cline.data_global_state",
          "cline_mcp_settings.json": "cline.mcp_settings"}


def encode(value) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def bundle(files: dict[str, object]) -> FakeBundle:
    return FakeBundle({(STORES.get(path.rsplit("/", 1)[-1], "cline.sdk_messages"), path): encode(value)
                       for path, value in files.items()})


def rows(files: dict[str, object], path: str, parser: str = "cline.task.v1"):
    return drafts(bundle(files), path, parser)


def state_db(value: dict, secret: str = "") -> bytes:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    connection.execute("INSERT INTO ItemTable VALUES ('saoudrizwan.claude-dev', ?)", (json.dumps(value),))
    if secret:
        connection.execute("INSERT INTO ItemTable VALUES (?, ?)",
                           ('secret://{"extensionId":"saoudrizwan.claude-dev","key":"apiKey"}', secret))
    connection.commit()
    return connection.serialize()


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def call(call_id: str, name: str = "read_file") -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"path": "a.py"}}


def result(call_id: str, content) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def message(role: str, *blocks, ts: int | None = 1768385102000, **extra) -> dict:
    return {"role": role, "content": list(blocks), **({"ts": ts} if ts is not None else {}), **extra}


def test_native_calls_join_by_id_and_a_result_is_never_a_user_row():
    history = [message("user", text("<task>\nfix a.py\n</task>")),
               message("assistant", call("toolu_1")),
               message("user", result("toolu_1", "[read_file for 'a.py'] Result:\nprint(1)\n"))]
    found = rows({API: history}, API)
    assert [(row.turn_type, row.tool_use_id) for row in found] == [("user", ""), ("tool_use", "toolu_1"),
                                                                   ("tool_result", "toolu_1")]
    assert found[2].text == "print(1)" and found[2].tool_name == "read_file"
    assert [row.text for row in found if row.turn_type == "user"] == ["fix a.py"]


def test_a_native_call_without_a_result_gets_the_no_result_row():
    found = rows({API: [message("assistant", call("toolu_9")), message("user", text("go on"))]}, API)
    orphans = [row for row in found if row.text.startswith("parser: no result")]
    assert [row.text for row in orphans] == ["parser: no result recorded for tool call toolu_9 (read_file)"]
    assert orphans[0].tool_use_id == "toolu_9"


def test_a_result_for_an_unknown_id_is_reported():
    found = rows({API: [message("user", result("toolu_x", "out"))]}, API)
    assert [row.turn_type for row in found] == ["tool_result", "system"]
    assert found[1].text.startswith("parser: tool result for")


def test_denials_and_approvals_with_a_note_carry_the_calls_id():
    denied = "[execute_command for 'rm -rf build'] Result:\nThe user denied this operation."
    note = text("The user provided the following feedback:\n<feedback>\nkeep build/\n</feedback>")
    history = [message("assistant", call("t1", "execute_command")), message("user", result("t1", denied), note),
               message("assistant", call("t2")), message("user", result("t2", "[read_file for 'a'] Result:\nx"), note),
               message("assistant", call("t3", "execute_command")), message("user", result("t3", denied))]
    found = rows({API: history}, API)
    decisions = [(row.text, row.tool_use_id, row.tool_name) for row in found if row.text.startswith("permission")]
    assert decisions == [("permission decision: denied with feedback", "t1", "execute_command"),
                         ("permission decision: approved with feedback", "t2", "read_file"),
                         ("permission decision: denied", "t3", "execute_command")]
    assert [row.text for row in found if row.turn_type == "user"] == ["keep build/", "keep build/"]


def test_thinking_blocks_are_thinking_rows():
    history = [message("assistant", {"type": "thinking", "thinking": "check a.py", "signature": "sig"},
                       {"type": "redacted_thinking", "data": "xx"})]
    assert [(row.turn_type, row.text) for row in rows({API: history}, API)] == [
        ("thinking", "check a.py"), ("thinking", "[redacted thinking]")]


def test_model_info_gives_model_rows_and_the_model_column():
    info = {"modelId": "claude-sonnet-4-5"}
    history = [message("assistant", text("a"), modelInfo=info), message("assistant", text("b"), modelInfo=info),
               message("assistant", text("c"), modelInfo={"modelId": "claude-opus-4-1"})]
    found = rows({API: history}, API)
    assert [row.text for row in found if row.text.startswith("model:")] == [
        "model: claude-sonnet-4-5", "model: claude-sonnet-4-5 -> claude-opus-4-1"]
    models = [row.model for row in found if row.turn_type == "assistant"]
    assert models == ["claude-sonnet-4-5", "claude-sonnet-4-5", "claude-opus-4-1"]


def test_model_usage_gives_model_rows_only_when_the_api_history_has_no_model_info():
    metadata = {"model_usage": [{"ts": 1768385102000, "model_id": "claude-3-5-sonnet"},
                                {"ts": 1768385103000, "model_id": "claude-3-5-sonnet"},
                                {"ts": 1768385104000, "model_id": "claude-3-7-sonnet"}]}
    plain = [message("assistant", text("a"))]
    found = rows({META: metadata, API: plain}, META)
    assert [row.text for row in found] == ["model: claude-3-5-sonnet", "model: claude-3-5-sonnet -> claude-3-7-sonnet"]
    with_info = [message("assistant", text("a"), modelInfo={"modelId": "claude-3-5-sonnet"})]
    assert rows({META: metadata, API: with_info}, META) == []


def test_a_message_without_ts_takes_the_task_ids_creation_time():
    (row,) = rows({API: [message("user", text("hi"), ts=None)]}, API)
    assert (row.timestamp_ns, row.timestamp_source) == (1768385100000 * 10**6, "index")


def test_project_comes_from_the_task_list_else_from_the_first_working_directory_line():
    env = text("<environment_details>\n# Current Working Directory (/home/alice/src/api) Files\na.py\n"
               "</environment_details>")
    history = [message("user", text("<task>\nx\n</task>"), env)]
    assert {row.project_path for row in rows({API: history}, API)} == {"/home/alice/src/api"}
    index = [{"id": "1768385100000", "ts": 1, "task": "x", "cwdOnTaskInitialization": "/home/alice/src/other"}]
    assert {row.project_path for row in rows({API: history, HISTORY: index}, API)} == {"/home/alice/src/other"}


def test_each_edition_takes_the_project_of_its_own_task_list():
    insiders = ".config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev/"
    files = {API: [message("user", text("a"))], insiders + "tasks/1768385100000/api_conversation_history.json":
             [message("user", text("b"))],
             HISTORY: [{"id": "1768385100000", "ts": 1, "task": "a", "cwdOnTaskInitialization": "/stable"}],
             insiders + "state/taskHistory.json":
             [{"id": "1768385100000", "ts": 1, "task": "b", "cwdOnTaskInitialization": "/insiders"}]}
    assert rows(files, API)[0].project_path == "/stable"
    assert rows(files, insiders + "tasks/1768385100000/api_conversation_history.json")[0].project_path == "/insiders"


def test_ui_messages_beside_the_api_history_give_only_what_it_lacks():
    history = [message("user", text("<task>\nfix a.py\n</task>")),
               message("assistant", text("Reading it."), call("t1")),
               message("user", result("t1", "[read_file for 'a.py'] Result:\nx"))]
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix a.py"},
          {"ts": 2, "type": "say", "say": "text", "text": "Reading  it."},
          {"ts": 3, "type": "ask", "ask": "tool", "text": "{\"tool\":\"readFile\"}"},
          {"ts": 4, "type": "say", "say": "api_req_started",
           "text": "{\"request\":\"<task>fix</task>\",\"cost\":0.01}"},
          {"ts": 5, "type": "say", "say": "error", "text": "rate limited"}]
    found = rows({API: history, UI: ui}, UI)
    assert [row.text for row in found] == ['ui say api_req_started: {"cost": 0.01}', "ui say error: rate limited"]


def test_a_damaged_ui_messages_is_one_parser_row_and_the_api_history_is_still_read():
    files = {API: [message("user", text("<task>\nx\n</task>"))], UI: b'[{"ts":1,"type":"say"'}
    (problem,) = rows(files, UI)
    assert problem.text.startswith("parser: unparseable file (ui_messages.json is not JSON")
    assert [row.text for row in rows(files, API)] == ["x"]


def test_ui_messages_alone_are_the_transcript():
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "list files"},
          {"ts": 2, "type": "ask", "ask": "command", "text": "ls"},
          {"ts": 3, "type": "say", "say": "command_output", "text": "a.py"}]
    found = rows({UI: ui}, UI)
    assert [(row.turn_type, row.tool_use_id) for row in found] == [("user", ""), ("tool_use", "2"),
                                                                   ("tool_result", "2")]


def test_a_partial_reply_beside_the_api_history_is_an_assistant_row_marked_partial():
    history = [message("user", text("<task>\nfix a.py\n</task>")),
               message("assistant", text("Reading it."), call("t1")),
               message("user", result("t1", "[read_file for 'a.py'] Result:\nx"))]
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix a.py"},
          {"ts": 2, "type": "say", "say": "text", "text": "Reading it.", "partial": False},
          {"ts": 3, "type": "say", "say": "reasoning", "text": "One line to chan", "partial": True},
          {"ts": 4, "type": "say", "say": "text", "text": "The fix is on li", "partial": True}]
    found = rows({API: history, UI: ui}, UI)
    assert [(row.turn_type, row.text, row.locator, row.timestamp_ns) for row in found] == [
        ("thinking", "partial: One line to chan", "json:/2", 3 * 10**6),
        ("assistant", "partial: The fix is on li", "json:/3", 4 * 10**6)]


def test_a_partial_tool_ask_is_a_call_marked_partial_even_beside_the_api_history():
    history = [message("user", text("<task>\nfix a.py\n</task>"))]
    edit = json.dumps({"tool": "editedExistingFile", "path": "a.py", "content": "------- SEARCH\nx"})
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix a.py"},
          {"ts": 7, "type": "ask", "ask": "tool", "text": edit, "partial": True},
          {"ts": 9, "type": "ask", "ask": "resume_task"}]
    for files in ({API: history, UI: ui}, {UI: ui}):  # beside the API history, and as the transcript
        calls = [row for row in rows(files, UI) if row.turn_type == "tool_use"]
        assert [(row.tool_name, row.tool_use_id, row.text) for row in calls] == [
            ("editedExistingFile", "7", "partial: " + edit)]
        orphans = [row.text for row in rows(files, UI) if row.text.startswith("parser:")]
        assert orphans == ["parser: no result recorded for tool call 7 (editedExistingFile)"]


def test_a_partial_reply_the_api_history_holds_is_not_repeated():
    history = [message("user", text("<task>\nfix a.py\n</task>")), message("assistant", text("Done."))]
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix a.py"},
          {"ts": 2, "type": "say", "say": "text", "text": "Done.", "partial": True}]
    assert rows({API: history, UI: ui}, UI) == []


def test_a_partial_text_is_never_taken_for_the_prompt():
    ui = [{"ts": 2, "type": "say", "say": "text", "text": "Let me l", "partial": True}]
    (row,) = rows({UI: ui}, UI)
    assert (row.turn_type, row.text) == ("assistant", "partial: Let me l")


def test_a_partial_copy_of_a_complete_event_is_superseded_by_it():
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "fix a.py"},
          {"ts": 2, "type": "say", "say": "text", "text": "On i", "partial": True},
          {"ts": 2, "type": "say", "say": "text", "text": "On it."}]
    assert [row.text for row in rows({UI: ui}, UI)] == ["fix a.py", "On it."]


def test_the_cut_stream_fixture_shows_each_cut_message_once_marked_partial():
    golden = list(csv.DictReader((FIXTURES / "cut-stream" / "expected.csv").open(encoding="utf-8")))
    marked = [(row["turn_type"], row["locator"]) for row in golden if row["text"].startswith("partial: ")]
    assert marked == [("assistant", "json:/6"), ("tool_use", "json:/5")]


def test_an_sdk_file_block_is_an_attachment_row_and_the_prompt_is_the_typed_text_alone():
    session = ".cline/data/sessions/1783065600000_m4r8t/"
    typed = "Why does @tests/conftest.py skip the slow tests?"
    document = {"version": 1, "sessionId": "1783065600000_m4r8t", "messages": [
        {"id": "u1", "role": "user", "ts": 1783065600200, "content": [
            text(typed), {"type": "file", "path": "/home/alice/src/tests/conftest.py", "content": "import os\n"}]}]}
    files = FakeBundle({("cline.sdk_messages", session + "1783065600000_m4r8t.messages.json"): encode(document)})
    found = drafts(files, session + "1783065600000_m4r8t.messages.json", "cline.sdk_messages.v1")
    assert [(row.turn_type, row.text, row.locator) for row in found] == [
        ("user", typed, "json:/messages/0/content/0"),
        ("system", "attachment: /home/alice/src/tests/conftest.py (10 chars)\nimport os\n",
         "json:/messages/0/content/1")]


def test_a_file_block_of_the_wrong_shape_is_still_an_attachment_row():
    session = ".cline/data/sessions/s1/"
    document = {"version": 1, "sessionId": "s1", "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "file", "path": 7, "content": {"a": 1}}]}]}
    files = FakeBundle({("cline.sdk_messages", session + "s1.messages.json"): encode(document)})
    (row,) = drafts(files, session + "s1.messages.json", "cline.sdk_messages.v1")
    assert (row.turn_type, row.text) == ("system", 'attachment: (no path) (8 chars)\n{"a": 1}')


def test_an_image_block_is_described_never_copied():
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"  # 24 bytes of PNG header, base64
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    found = rows({API: [message("user", text("<task>\nwhat is this?\n</task>"), image)]}, API)
    assert [row.text for row in found] == ["what is this?", "[image image/png, 24 bytes]"]


def test_task_history_json_gives_one_task_row_per_entry():
    index = [{"id": "1768385100000", "ts": 1768385113000, "task": "Add a flag", "tokensIn": 5, "tokensOut": 2,
              "totalCost": 0.01, "cwdOnTaskInitialization": "/home/alice/src", "modelId": "m1"}, {"task": "no id"}]
    found = rows({HISTORY: index}, HISTORY, "cline.task_history.v1")
    assert found[0].text == "task: Add a flag | tokensIn=5 tokensOut=2 totalCost=0.01 modelId=m1"
    assert (found[0].session_id, found[0].project_path) == ("1768385100000", "/home/alice/src")
    assert found[1].text.startswith("parser: unparseable record (task history entry without an id)")


def test_the_same_task_in_two_index_generations_is_one_task_row():
    entry = {"id": "1768385100000", "ts": 1, "task": "same"}
    state = state_db({"taskHistory": [entry, {"id": "1768300000000", "ts": 2, "task": "only here"}]})
    files = {HISTORY: [entry], STATE: state}
    from_state = [row.text for row in rows(files, STATE, "cline.global_state.v1")]
    assert from_state == ["task: only here | tokensIn=null tokensOut=null totalCost=null"]
    assert len(rows(files, HISTORY, "cline.task_history.v1")) == 1


def test_both_auto_approval_shapes_and_yolo_mode_are_permission_settings():
    first = {"enabled": True, "actions": {"executeCommands": True}, "maxRequests": 20}
    second = {"version": 2, "enabled": False, "actions": {"executeSafeCommands": True, "executeAllCommands": False}}
    for settings, expected in ((first, ["enabled=true", "actions.executeCommands=true", "maxRequests=20"]),
                               (second, ["version=2", "enabled=false", "actions.executeSafeCommands=true",
                                         "actions.executeAllCommands=false"])):
        found = rows({STATE: state_db({"autoApprovalSettings": settings, "yoloModeToggled": True})}, STATE,
                     "cline.global_state.v1")
        assert [row.text for row in found] == [
            f"permission setting: autoApprovalSettings.{item} (from state.vscdb saoudrizwan.claude-dev, file mtime)"
            for item in expected] + ["permission setting: yoloModeToggled=true (from state.vscdb "
                                     "saoudrizwan.claude-dev, file mtime)"]
        assert {row.timestamp_source for row in found} == {"file-mtime"}


def test_no_credential_value_in_any_row():
    secret = "sk-ant-api03-SECRETVALUE"
    state = state_db({"apiKey": secret, "openRouterApiKey": secret, "autoApprovalSettings": {"enabled": True}},
                     secret=secret)
    mcp = {"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": secret}, "args": ["--token", secret],
                                 "autoApprove": ["get_issue"]}}}
    path = EXT + "settings/cline_mcp_settings.json"
    found = rows({STATE: state}, STATE, "cline.global_state.v1") + rows({path: mcp}, path, "cline.mcp_settings.v1") + \
        rows({".cline/data/globalState.json": {"apiKey": secret, "yoloModeToggled": False}},
             ".cline/data/globalState.json", "cline.global_state_json.v1")
    assert found and not [row for row in found if "SECRETVALUE" in row.text]
    assert "permission setting: mcpServers[gh].autoApprove=[\"get_issue\"] (from cline_mcp_settings.json, file mtime)" \
        in [row.text for row in found]


def test_sdk_messages_join_by_id_and_untimed_messages_take_the_time_before_them():
    session = ".cline/data/sessions/1782979200000_k3v9q/"
    manifest = {"session_id": "1782979200000_k3v9q", "started_at": "2026-07-02T08:00:00.000Z", "cwd": "/home/alice"}
    document = {"version": 1, "sessionId": "1782979200000_k3v9q", "messages": [
        {"id": "u1", "role": "user", "content": [text("count the files")]},
        {"id": "a1", "role": "assistant", "ts": 1782979203000, "modelInfo": {"id": "claude-sonnet-4-6"},
         "content": [{"type": "tool_use", "id": "tool-1", "name": "run_commands", "input": {}}]},
        {"id": "u2", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "tool-1", "content": "7"}]}]}
    files = FakeBundle({("cline.sdk_manifests", session + "1782979200000_k3v9q.json"): encode(manifest),
                        ("cline.sdk_messages", session + "1782979200000_k3v9q.messages.json"): encode(document)})
    found = drafts(files, session + "1782979200000_k3v9q.messages.json", "cline.sdk_messages.v1")
    assert [(row.turn_type, row.tool_use_id) for row in found] == [
        ("user", ""), ("system", ""), ("tool_use", "tool-1"), ("tool_result", "tool-1")]
    assert found[0].timestamp_ns == 1782979200000 * 10**6 and found[0].timestamp_source == "index"
    assert found[3].timestamp_ns == 1782979203000 * 10**6 and found[3].timestamp_source == "index"
    assert {row.project_path for row in found} == {"/home/alice"} and found[1].text == "model: claude-sonnet-4-6"


def test_sessions_db_rows_only_in_the_wal_are_read():
    db = FIXTURES / "sdk/home/.cline/data/db/sessions.db"
    alone = FakeBundle({("cline.sessions_db", ".cline/data/db/sessions.db"): db.read_bytes()})
    without_wal = [row.session_id for row in drafts(alone, ".cline/data/db/sessions.db", "cline.sessions_db.v1")]
    assert without_wal == ["1782892800000_a8c1d"]  # the database file alone holds only the oldest session
    with open(FIXTURES / "sdk/expected.csv", newline="", encoding="utf-8") as handle:
        read = [row["session_id"] for row in csv.DictReader(handle) if row["store"] == "cline.sessions_db"]
    assert read == ["1782892800000_a8c1d", "1782979205000_p2m7x", "1783065600000_z0w4e"]  # the -wal's rows too


def test_a_session_with_a_manifest_is_not_repeated_from_sessions_db():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE sessions (session_id TEXT, source TEXT, status TEXT, started_at TEXT, prompt TEXT)")
    db.executemany("INSERT INTO sessions VALUES (?, 'cli', 'completed', '2026-07-02T08:00:00.000Z', ?)",
                   [("s_known", "a"), ("s_gone", "b")])
    db.commit()
    files = FakeBundle({("cline.sessions_db", ".cline/data/db/sessions.db"): db.serialize(),
                        ("cline.sdk_manifests", ".cline/data/sessions/s_known/s_known.json"): b"{}"})
    (row,) = drafts(files, ".cline/data/db/sessions.db", "cline.sessions_db.v1")
    assert row.session_id == "s_gone" and row.text.startswith("session: b (source=cli status=completed")


def test_a_sessions_db_that_is_no_database_is_one_parser_row():
    files = FakeBundle({("cline.sessions_db", ".cline/data/db/sessions.db"): b"not a database at all" * 100})
    (row,) = drafts(files, ".cline/data/db/sessions.db", "cline.sessions_db.v1")
    assert row.text.startswith("parser: unparseable file (sessions.db: cannot read:")


def test_the_working_directory_line_is_read_as_json_string_text():
    env = {"type": "text", "text": "<environment_details>\n# Current Working Directory (C:\\Users\\alice\\src) Files\n"}
    (_, row) = rows({API: [message("user", text("<task>\nx\n</task>"), env)]}, API)
    assert row.project_path == "C:\\Users\\alice\\src"


# -- budgets (docs/agents/cline.md, Bad-line rows) --------------------------------------------------------


def test_xml_calls_past_the_call_budget_are_numbered_and_written_but_not_held(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 3)
    results = [text(f"[read_file for 'f{number}'] Result:\nbody {number}") for number in range(5)]
    history = [message("user", text("<task>\nread them\n</task>")),
               message("assistant", text("<read_file>\n<path>f</path>\n</read_file>" * 5)),
               message("user", *results), message("assistant", text("Done."))]
    found = rows({API: history}, API)
    assert [row.tool_use_id for row in found if row.turn_type == "tool_use"] == ["1", "1.2", "1.3", "1.4", "1.5"]
    assert [row.tool_use_id for row in found if row.turn_type == "tool_result"] == ["1", "1.2", "1.3", "", ""]
    unpaired = [row for row in found if row.text.startswith("parser: tool result for read_file with no tool call")]
    assert [row.locator for row in unpaired] == ["json:/2/content/3", "json:/2/content/4"]
    [limit] = [row for row in found if "over the limit" in row.text]
    assert limit.text.startswith("parser: tool calls over the limit (3 call ids held to pair calls with results); "
                                 "the calls from here on were written without being held (2 in all)")
    assert (limit.locator, limit.timestamp_source, limit.session_id) == ("json:/1/content/0", "none", "1768385100000")
    assert found[-2].text == "Done." and found[-1] is limit  # the rows after it are read; the limit row comes last


def test_native_calls_past_the_call_budget_are_written_and_a_held_one_still_gets_its_no_result_row(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 2)
    history = [message("assistant", call("a"), call("b"), call("c")),
               message("user", result("a", "[read_file for 'a.py'] Result:\nx"), result("c", "y"))]
    found = rows({API: history}, API)
    assert [(row.turn_type, row.tool_use_id) for row in found if row.turn_type != "system"] == [
        ("tool_use", "a"), ("tool_use", "b"), ("tool_use", "c"), ("tool_result", "a"), ("tool_result", "c")]
    notes = [row.text for row in found if row.turn_type == "system"]
    assert notes[0] == "parser: tool result for a tool with no tool call before it"  # c was not held
    assert notes[1] == "parser: no result recorded for tool call b (read_file)"
    assert notes[2].startswith("parser: tool calls over the limit (2 call ids") and len(notes) == 3


def test_ui_tool_asks_past_the_call_budget_are_counted_not_held(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 2)
    asks = [{"ts": number, "type": "ask", "ask": "tool", "text": '{"tool":"readFile"}'} for number in range(2, 6)]
    found = rows({UI: [{"ts": 1, "type": "say", "say": "task", "text": "read"}, *asks]}, UI)
    assert [row.tool_use_id for row in found if row.turn_type == "tool_use"] == ["2", "3", "4", "5"]
    notes = [(row.text, row.locator) for row in found if row.turn_type == "system"]
    assert notes[:2] == [("parser: no result recorded for tool call 2 (readFile)", "json:/1"),
                         ("parser: no result recorded for tool call 3 (readFile)", "json:/2")]
    assert notes[2][0].startswith("parser: tool calls over the limit (2 call ids") and "(2 in all)" in \
        notes[2][0] and notes[2][1] == "json:/3" and len(notes) == 3


def test_past_the_call_budget_a_result_is_never_given_to_another_tools_call(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    calls = "<read_file>\n<path>a</path>\n</read_file><write_to_file>\n<path>b</path>\n</write_to_file>"
    history = [message("assistant", text(calls)),
               message("user", text("[write_to_file for 'b'] Result:\nwritten"),
                       text("[read_file for 'a'] Result:\nx"))]
    found = rows({API: history}, API)
    results = [(row.tool_name, row.tool_use_id) for row in found if row.turn_type == "tool_result"]
    assert results == [("write_to_file", ""), ("read_file", "0")]  # the held read_file call is not the write's
    assert [row.text for row in found if row.text.startswith("parser:")] == [
        "parser: tool result for write_to_file with no tool call before it", found[-1].text]
    assert found[-1].text.startswith("parser: tool calls over the limit (1 call ids")
