"""GitHub Copilot Chat (VS Code) parsers, one rule per test (docs/agents/vscode-copilot-chat.md)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES

AGENT = "vscode-copilot-chat"
WS = ".config/Code/User/workspaceStorage/3f9d2c7b1a0e4d5f8c6b9a7e2d1f0c3b/"
GLOBAL = ".config/Code/User/globalStorage/"
SID = "c8e4f1a2-3d5b-4c79-a0e6-9b1d2f8c7e43"
JSON_PATH, JSONL_PATH = WS + f"chatSessions/{SID}.json", WS + f"chatSessions/{SID}.jsonl"
MAP_KEY = (f"{AGENT}.workspace_map", WS + "workspace.json")
MS = 1_000_000


def md(text):
    return {"value": text, "supportThemeIcons": False}


def tool_request(call_id="toolu_01Read", confirmed=True, with_result=True, complete=True):
    """A v3 request: one model call (id with ``__vscode-<n>``), its part and (optionally) its result."""
    full = f"{call_id}__vscode-1755675006012"
    return {"requestId": "request_1", "message": {"text": "why does the test fail?"}, "timestamp": 1755675004000,
            "modelId": "copilot/claude-sonnet-4",
            "response": [md("Reading it."),
                         {"kind": "toolInvocationSerialized", "toolCallId": call_id, "toolId": "copilot_readFile",
                          "isConfirmed": confirmed, "isComplete": complete, "pastTenseMessage": md("Read t.py")},
                         md("The period is 365 days.")],
            "result": {"metadata": {
                "toolCallRounds": [{"id": "r0", "response": "Reading it.", "timestamp": 1755675005000,
                                    "toolCalls": [{"name": "copilot_readFile", "arguments": "{\"filePath\":\"t.py\"}",
                                                   "id": full}]},
                                   {"id": "r1", "response": "The period is 365 days.", "toolCalls": []}],
                "toolCallResults": {full: {"content": [{"value": "def test(): period = 365"}]}}
                if with_result else {}}}}


def session(*requests, **fields):
    return {"version": 3, "sessionId": SID, "creationDate": 1755675000000, "requesterUsername": "alice-w",
            "requests": list(requests), **fields}


def json_rows(document, extra=None):
    files = {(f"{AGENT}.chat_sessions_json", JSON_PATH): json.dumps(document).encode(),
             MAP_KEY: b'{"folder": "file:///home/alice/src/app"}', **(extra or {})}
    return drafts(FakeBundle(files), JSON_PATH, "vscode_copilot_chat.chat_session_json.v1")


def log(*entries, tail=b""):
    return b"".join(json.dumps(entry).encode() + b"\n" for entry in entries) + tail


def jsonl_rows(data, extra=None):
    files = {(f"{AGENT}.chat_sessions_jsonl", JSONL_PATH): data, MAP_KEY: b'{"folder": "file:///home/alice/src/app"}',
             **(extra or {})}
    return drafts(FakeBundle(files), JSONL_PATH, "vscode_copilot_chat.chat_session_jsonl.v1")


def database(tmp_path: Path, rows: dict[str, object], name="state.vscdb") -> bytes:
    path = tmp_path / name
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for key, value in rows.items():
        connection.execute("INSERT INTO ItemTable VALUES (?, ?)",
                           (key, value if isinstance(value, str) else json.dumps(value)))
    connection.commit()
    connection.close()
    return path.read_bytes()


# -- sessions ------------------------------------------------------------------------------------------


def test_a_tool_result_is_never_a_user_row_and_calls_join_by_the_id_without_the_vscode_suffix():
    rows = json_rows(session(tool_request()))
    assert [row.text for row in rows if row.turn_type == "user"] == ["why does the test fail?"]
    use = next(row for row in rows if row.turn_type == "tool_use")
    result = next(row for row in rows if row.turn_type == "tool_result")
    assert use.tool_use_id == result.tool_use_id == "toolu_01Read" and use.tool_name == "copilot_readFile"
    assert result.text == "def test(): period = 365"
    assert use.timestamp_ns == 1755675005000 * MS  # the round's start
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_one_assistant_row_per_response_not_one_per_part():
    rows = json_rows(session(tool_request()))
    assert [row.text for row in rows if row.turn_type == "assistant"] == ["Reading it.\n\nThe period is 365 days."]


def test_a_call_without_a_result_gets_the_no_result_row():
    rows = json_rows(session(tool_request(with_result=False, complete=False)))
    assert rows[-1].text == "parser: no result recorded for tool call toolu_01Read (copilot_readFile)"
    assert rows[-1].session_id == SID and rows[-1].project_path == "/home/alice/src/app"


def test_every_tool_use_with_an_id_has_a_result_or_a_no_result_row():
    for request in (tool_request(), tool_request(with_result=False), tool_request(with_result=False, complete=False)):
        rows = json_rows(session(request))
        for use in (row for row in rows if row.turn_type == "tool_use"):
            assert [row for row in rows if row.tool_use_id == use.tool_use_id and (
                row.turn_type == "tool_result" or row.text.startswith("parser: no result recorded"))]


def part(call_id, tool_id, done="Done"):
    return {"kind": "toolInvocationSerialized", "toolCallId": call_id, "toolId": tool_id, "isConfirmed": {"type": 1},
            "isComplete": True, "pastTenseMessage": md(done)}


def rounds_request(calls, parts, results=None):
    """A request whose model calls (name, id or None) all sit in one round, beside ``parts``."""
    entries = [{"name": name, "arguments": "{}", **({"id": call_id} if call_id else {})} for name, call_id in calls]
    return {"requestId": "request_r", "message": {"text": "go"}, "timestamp": 1755675004000, "response": parts,
            "result": {"metadata": {"toolCallRounds": [{"id": "r0", "response": "", "toolCalls": entries}],
                                    "toolCallResults": results or {}}}}


def uses(rows):
    """(tool, id, where) of each tool_use row: ``toolCalls`` from a round, ``response`` from a part."""
    return [(row.tool_name, row.tool_use_id, row.locator.split("/")[-2]) for row in rows
            if row.turn_type == "tool_use"]


def test_calls_without_ids_take_the_ids_of_their_parts_by_position():
    rows = json_rows(session(rounds_request(
        [("read_file", None), ("run_in_terminal", None)],
        [part("call_A", "copilot_readFile"), part("call_B", "run_in_terminal", "Ran ls")],
        {"call_A__vscode-7": {"content": [{"value": "file text"}]}})))
    # the rounds' calls carry the parts' ids; the parts give no tool_use rows of their own
    assert uses(rows) == [("read_file", "call_A", "toolCalls"), ("run_in_terminal", "call_B", "toolCalls")]
    results = [(row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("call_A", "file text"), ("call_B", "Ran ls")]  # by the part's id, else the part's own
    decisions = [row.tool_use_id for row in rows if row.text.startswith("permission decision:")]
    assert decisions == ["call_A", "call_B"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_call_without_an_id_beside_one_with_an_id_is_paired_when_the_order_holds():
    rows = json_rows(session(rounds_request(
        [("run_in_terminal", "call_A__vscode-1"), ("read_file", None)],
        [part("call_A", "run_in_terminal"), part("call_B", "copilot_readFile")])))
    assert uses(rows) == [("run_in_terminal", "call_A", "toolCalls"), ("read_file", "call_B", "toolCalls")]


def test_calls_without_ids_are_not_paired_when_the_counts_the_names_or_the_order_disagree():
    counts = rounds_request([("grep_search", None), ("read_file", None)], [part("call_G", "copilot_findTextInFiles")])
    names = rounds_request([("list_dir", None)], [part("call_L", "copilot_readFile")])
    order = rounds_request([("read_file", None), ("run_in_terminal", "call_A__vscode-1")],
                           [part("call_A", "run_in_terminal"), part("call_B", "copilot_readFile")])
    # a call nothing pairs keeps what is known (no id); the part left over is its own call, with its own id
    assert uses(json_rows(session(counts))) == [
        ("grep_search", "", "toolCalls"), ("read_file", "", "toolCalls"),
        ("copilot_findTextInFiles", "call_G", "response")]
    assert uses(json_rows(session(names))) == [("list_dir", "", "toolCalls"),
                                               ("copilot_readFile", "call_L", "response")]
    assert uses(json_rows(session(order))) == [("read_file", "", "toolCalls"),
                                               ("run_in_terminal", "call_A", "toolCalls"),
                                               ("copilot_readFile", "call_B", "response")]


def test_boolean_confirmations_are_permission_decisions():
    approved = json_rows(session(tool_request(confirmed=True)))
    denied = json_rows(session(tool_request(confirmed=False)))
    assert [row.text for row in approved if row.text.startswith("permission")] == ["permission decision: approved"]
    [row] = [row for row in denied if row.text.startswith("permission")]
    assert (row.text, row.tool_use_id, row.locator) == ("permission decision: denied", "toolu_01Read",
                                                        "json:/requests/0/response/1/isConfirmed")


def test_typed_confirmations_name_how_the_call_was_allowed():
    kinds = {0: "permission decision: denied", 1: "permission decision: no confirmation needed",
             4: "permission decision: approved by the user", 5: "permission decision: skipped"}
    for kind, text in kinds.items():
        rows = json_rows(session(tool_request(confirmed={"type": kind})))
        assert [row.text for row in rows if row.text.startswith("permission")] == [text]
    setting = json_rows(session(tool_request(confirmed={"type": 2, "id": "chat.tools.terminal.autoApprove"})))
    assert "permission decision: approved by setting chat.tools.terminal.autoApprove" in [row.text for row in setting]
    scope = json_rows(session(tool_request(confirmed={"type": 3, "scope": "workspace"})))
    assert "permission decision: approved, always allowed for this workspace" in [row.text for row in scope]


def test_model_rows_where_the_model_is_new_or_changes():
    second = dict(tool_request(), requestId="request_2", modelId="copilot/gpt-5", timestamp=1755675100000)
    rows = json_rows(session(tool_request(), second))
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: copilot/claude-sonnet-4", "model: copilot/claude-sonnet-4 -> copilot/gpt-5"]


def test_no_account_identity_in_any_row():
    document = session(tool_request(), requesterAvatarIconUri={"path": "/u/5820144"})
    text = " ".join(f"{row.text} {row.session_id} {row.project_path} {row.model} {row.locator}"
                    for row in json_rows(document))
    assert "alice-w" not in text and "5820144" not in text


def test_a_json_beside_its_jsonl_is_one_session():
    request = tool_request()
    older = dict(request, requestId="request_0", message={"text": "an older question"})
    document = session(older, request)
    newer = log({"kind": 0, "v": session(request)})
    rows = json_rows(document, {(f"{AGENT}.chat_sessions_jsonl", JSONL_PATH): newer})
    assert rows[0].text.startswith(f"superseded: older copy of session {SID} (2 requests, 1 not in {SID}.jsonl)")
    # the request both copies hold is the log's: the .json gives only the one the log lacks
    assert [row.text for row in rows if row.turn_type == "user"] == ["an older question"]
    log_rows = jsonl_rows(newer, {(f"{AGENT}.chat_sessions_json", JSON_PATH): json.dumps(document).encode()})
    assert [row.text for row in log_rows if row.turn_type == "user"] == ["why does the test fail?"]


def test_the_log_replays_to_its_final_state_and_streamed_states_are_not_rows():
    data = log({"kind": 0, "v": session()},
               {"kind": 2, "k": ["requests"], "v": [{"requestId": "r1", "message": {"text": "run it"},
                                                      "timestamp": 1772442847000, "response": []}]},
               {"kind": 2, "k": ["requests", 0, "response"], "v": [md("Run")]},
               {"kind": 2, "k": ["requests", 0, "response"], "v": [md("Running the tests.")], "i": 0},
               {"kind": 1, "k": ["requests", 0, "modelState"], "v": {"value": 1, "completedAt": 1772442858000}})
    rows = jsonl_rows(data)
    assert [(row.turn_type, row.text, row.locator) for row in rows] == [
        ("user", "run it", "line:2"), ("assistant", "Running the tests.", "line:4")]
    assert rows[1].timestamp_ns == 1772442858000 * MS


def test_a_torn_last_line_is_one_parser_row_and_the_complete_lines_are_replayed():
    data = log({"kind": 0, "v": session()},
               {"kind": 2, "k": ["requests"], "v": [{"requestId": "r1", "message": {"text": "run it"},
                                                      "response": []}]},
               tail=b'{"kind":2,"k":["requests",0,"response"],"v":[{"value":"Runn')
    rows = jsonl_rows(data)
    assert [row.text for row in rows if row.turn_type == "user"] == ["run it"]
    [problem] = [row for row in rows if row.text.startswith("parser:")]
    assert problem.locator == "line:3" and "torn last line" in problem.text


def test_remote_workspaces_give_the_remote_path_and_a_project_row_with_the_host():
    cases = {"vscode-remote://wsl%2Bubuntu-22.04/home/alice/src/api": ("/home/alice/src/api", "wsl ubuntu-22.04"),
             "vscode-remote://ssh-remote%2Bbuild01/srv/app": ("/srv/app", "ssh-remote build01"),
             "vscode-remote://dev-container%2B" + b'{"hostPath":"/home/alice/src/shop"}'.hex() + "/workspaces/shop":
                 ("/workspaces/shop", "dev-container /home/alice/src/shop")}
    for uri, (path, where) in cases.items():
        rows = json_rows(session(tool_request()), {MAP_KEY: json.dumps({"folder": uri}).encode()})
        assert {row.project_path for row in rows} == {path}
        assert rows[0].text == f"project: {path} on {where} (from workspace.json)"


def test_an_empty_window_session_has_no_project():
    path = GLOBAL + f"emptyWindowChatSessions/{SID}.json"
    bundle = FakeBundle({(f"{AGENT}.chat_sessions_json", path): json.dumps(session(tool_request())).encode()})
    rows = drafts(bundle, path, "vscode_copilot_chat.chat_session_json.v1")
    assert rows and {row.project_path for row in rows} == {""}


# -- state.vscdb ---------------------------------------------------------------------------------------


def state_rows(tmp_path, rows, path=WS + "state.vscdb", parser="vscode_copilot_chat.workspace_state.v1",
               store="workspace_state", extra=None):
    files = {(f"{AGENT}.{store}", path): database(tmp_path, rows), **(extra or {})}
    return drafts(FakeBundle(files), path, parser)


def test_an_index_entry_without_a_file_is_a_session_row_and_a_file_without_an_entry_is_still_a_session(tmp_path):
    index = {"version": 1, "entries": {SID: {"sessionId": SID, "title": "Leap years", "lastMessageDate": 1755675012000},
                                       "gone": {"sessionId": "gone", "title": "Deleted chat",
                                                "lastMessageDate": 1755000000000}}}
    extra = {(f"{AGENT}.chat_sessions_json", JSON_PATH): json.dumps(session(tool_request())).encode()}
    rows = state_rows(tmp_path, {"chat.ChatSessionStore.index": index}, extra=extra)
    assert [(row.text, row.session_id, row.timestamp_source) for row in rows] == [
        ("session: Deleted chat (no session file in the bundle)", "gone", "index")]
    orphan = json_rows(session(tool_request()))  # no index at all: the file is a session all the same
    assert [row.text for row in orphan if row.turn_type == "user"] == ["why does the test fail?"]


def test_secret_rows_are_never_read(tmp_path):
    secret_key = 'secret://{"extensionId":"vscode.github-authentication","key":"github.auth"}'
    rows = state_rows(tmp_path, {secret_key: '{"type":"Buffer","data":[103,104,111,95,116,111,107]}',
                                 "chat/autoconfirm": ["run_in_terminal"]})
    assert [row.text for row in rows] == [
        'permission setting: chat/autoconfirm=["run_in_terminal"] (from state.vscdb, file mtime)']
    assert not any("secret" in row.text or "Buffer" in row.text for row in rows)


def test_generation_a_sessions_are_rendered_and_a_migrated_copy_is_superseded(tmp_path):
    migrated = session(tool_request())
    alone = dict(session(dict(tool_request(), requestId="request_9", message={"text": "only in the array"})),
                 sessionId="array-only")
    extra = {(f"{AGENT}.chat_sessions_json", JSON_PATH): json.dumps(migrated).encode()}
    rows = state_rows(tmp_path, {"interactive.sessions": [alone, migrated]}, extra=extra)
    assert [row.text for row in rows if row.turn_type == "user"] == ["only in the array"]
    assert [row.text for row in rows if row.text.startswith("superseded:")] == [
        f"superseded: older copy of session {SID} (1 request, 0 not in {SID}.json); {SID}.json is read as the session"]
    user = next(row for row in rows if row.turn_type == "user")
    assert user.locator == "sqlite:ItemTable:1/0/requests/0/message/text"


def test_a_database_that_is_not_sqlite_is_one_parser_row():
    bundle = FakeBundle({(f"{AGENT}.workspace_state", WS + "state.vscdb"): b"not a database at all" * 10})
    rows = drafts(bundle, WS + "state.vscdb", "vscode_copilot_chat.workspace_state.v1")
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (state.vscdb: ")


def test_the_newest_rows_only_in_the_wal_are_read(cli, tmp_path):
    case = FIXTURES / AGENT / "wal-index"
    folder = "home/.config/Code/User/workspaceStorage/f0e1d2c3b4a5968778695a4b3c2d1e0f/"
    without_wal = tmp_path / "copy.vscdb"
    shutil.copy(case / folder / "state.vscdb", without_wal)
    connection = sqlite3.connect(f"file:{without_wal}?mode=ro", uri=True)
    keys = {key for (key,) in connection.execute("SELECT key FROM ItemTable")}
    index = connection.execute("SELECT value FROM ItemTable WHERE key = 'chat.ChatSessionStore.index'").fetchone()[0]
    connection.close()
    assert "chat/autoconfirm" not in keys and "Histogram" not in str(index)  # the database file alone lacks them
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--home", case / "home", "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", out, "--quiet").exit_code == 0
    texts = [row["text"] for row in csv.DictReader(io.StringIO(out.read_text()))]
    assert "session: Histogram buckets for latency (no session file in the bundle)" in texts
    assert 'permission setting: chat/autoconfirm=["run_in_terminal"] (from state.vscdb, file mtime)' in texts


# -- secondary prompt copies, transcripts, settings ---------------------------------------------------------


def test_input_history_and_inline_chat_are_user_rows(tmp_path):
    memento = {"history": {"copilot": [{"text": "run the linter", "state": {}}, "an old plain string"]}}
    rows = state_rows(tmp_path, {"memento/interactive-session": memento,
                                 "inline-chat-history": ["add type hints"]},
                      parser="vscode_copilot_chat.prompt_history.v1", store="prompt_history")
    assert [(row.turn_type, row.text) for row in rows] == [
        ("user", "run the linter"), ("user", "an old plain string"), ("user", "add type hints")]
    assert {row.timestamp_source for row in rows} == {"none"}


TRANSCRIPT = WS + f"GitHub.copilot-chat/transcripts/{SID}.jsonl"


def transcript_rows(*entries):
    lines = [{"type": kind, "data": data, "id": str(n), "timestamp": f"2026-03-04T04:53:{n:02d}.000Z"}
             for n, (kind, data) in enumerate(entries)]
    bundle = FakeBundle({(f"{AGENT}.hook_transcripts", TRANSCRIPT): log(*lines), MAP_KEY: b'{"folder":"file:///a"}'})
    return drafts(bundle, TRANSCRIPT, "vscode_copilot_chat.hook_transcript.v1")


def test_transcript_rows_read_as_the_session_rows_do():
    rows = transcript_rows(
        ("user.message", {"content": "why does the test fail?"}),
        ("assistant.message", {"content": "Reading it.", "toolRequests": [
            {"toolCallId": "toolu_01Read", "name": "copilot_readFile", "arguments": "{\"filePath\":\"t.py\"}"}]}),
        ("tool.execution_complete", {"toolCallId": "toolu_01Read", "success": True,
                                     "result": {"content": "def test(): period = 365"}}),
        ("assistant.message", {"content": "The period is 365 days.", "toolRequests": []}))
    primary = {(row.turn_type, row.text) for row in json_rows(session(tool_request()))}
    for row in rows:
        assert (row.turn_type, row.text) in primary, row.text
    assert len(rows) == 4 and rows[-1].locator == "line:4"


def test_a_transcript_line_whose_text_went_into_a_later_reply_is_still_cited():
    rows = transcript_rows(("user.message", {"content": "q"}), ("assistant.message", {"content": "one"}),
                           ("assistant.message", {"content": "two"}))
    assert {row.locator for row in rows} == {"line:1", "line:2", "line:3"}
    assert [row.text for row in rows if row.turn_type == "assistant"] == ["one\n\ntwo"]


def test_settings_give_permission_setting_rows():
    settings = b'{\n // approvals\n "chat.tools.terminal.autoApprove": {"npm test": true, "rm": false},\n' \
               b' "chat.tools.global.autoApprove": false,\n "editor.fontSize": 14,\n}\n'
    bundle = FakeBundle({(f"{AGENT}.user_settings", ".config/Code/User/settings.json"): settings})
    rows = drafts(bundle, ".config/Code/User/settings.json", "vscode_copilot_chat.user_settings.v1")
    assert [row.text for row in rows] == [
        'permission setting: chat.tools.global.autoApprove=false (from settings.json, file mtime)',
        'permission setting: chat.tools.terminal.autoApprove={"npm test":true,"rm":false} '
        '(from settings.json, file mtime)']
    assert {row.timestamp_source for row in rows} == {"file-mtime"}


def test_every_tool_use_of_every_golden_has_its_result_or_a_no_result_row():
    # primary rows only: a secondary call's result may be dropped as a repeat of the session's
    for golden in sorted((FIXTURES / AGENT).glob("*/expected.csv")):
        rows = [row for row in csv.DictReader(io.StringIO(golden.read_text())) if row["origin"] == "primary"]
        answered = {(row["source"], row["tool_use_id"]) for row in rows if row["turn_type"] == "tool_result"
                    or row["text"].startswith("parser: no result recorded")}
        for use in (row for row in rows if row["turn_type"] == "tool_use" and row["tool_use_id"]):
            assert (use["source"], use["tool_use_id"]) in answered, (golden.parent.name, use["tool_use_id"])


# -- budgets: what one file may make the parser hold (docs/agents/vscode-copilot-chat.md, Limits) -------


def test_a_reply_over_the_pending_budget_is_written_in_parts(monkeypatch):
    from aitrail.analyzer.parsers.vscode_copilot_chat import transcripts

    monkeypatch.setattr(transcripts, "PENDING_BUDGET", 2 * (transcripts.MESSAGE_COST + 3))  # two texts of three
    rows = transcript_rows(("user.message", {"content": "q"}),
                           *[("assistant.message", {"content": f"a{n:02d}"}) for n in range(5)],
                           ("user.message", {"content": "next"}))
    assert [(row.turn_type, row.text, row.locator) for row in rows if not row.text.startswith("transcript entry")] == [
        ("user", "q", "line:1"),
        ("assistant", "a00\n\na01", "line:3"),
        ("system", f"parser: assistant text of one request over the limit ({transcripts.PENDING_BUDGET} characters "
                   f"held, each message counting 512 more; {transcripts.PENDING_BUDGET} held); the reply before this "
                   "line is its own assistant row, and joining starts again here", "line:4"),
        ("assistant", "a02\n\na03", "line:5"),
        ("system", f"parser: assistant text of one request over the limit ({transcripts.PENDING_BUDGET} characters "
                   f"held, each message counting 512 more; {transcripts.PENDING_BUDGET} held); the reply before this "
                   "line is its own assistant row, and joining starts again here", "line:6"),
        ("assistant", "a04", "line:6"),
        ("user", "next", "line:7")]
    assert {row.locator for row in rows} == {f"line:{n}" for n in range(1, 8)}  # every line still cited


def test_a_session_over_the_call_id_budget_names_the_calls_it_did_not_hold(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    unanswered = tool_request("toolu_A", with_result=False, complete=False)
    rows = json_rows(session(unanswered, {**tool_request("toolu_B"), "requestId": "request_2"}))
    assert [row.tool_use_id for row in rows if row.turn_type == "tool_use"] == ["toolu_A", "toolu_B"]
    assert [row.text.split(";")[0] for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call toolu_A (copilot_readFile)",
        "parser: tool calls over the limit (1 call ids held to pair calls with results)"]
