"""VS Code chat sessions (gens A, B, C; versions 1-3), the index, file choice, and workspace.json targets."""

from __future__ import annotations

import json

import pytest

from aitrail.analyzer.formats import vscode_chat as chat
from aitrail.analyzer.formats import vscode_workspace
from aitrail.analyzer.formats.mutation_log import replay_lines, split_lines

MS = 1_000_000

GEN_B = {
    "version": 3, "sessionId": "s-b", "creationDate": 1755675000000, "lastMessageDate": 1755675004000,
    "customTitle": "Leap-year invoice test failure", "requesterUsername": "dana-k", "initialLocation": "panel",
    "requests": [{
        "requestId": "request_1", "timestamp": 1755675004000, "modelId": "copilot/claude-sonnet-4",
        "message": {"text": "Why does test_invoice_total fail?", "parts": []},
        "agent": {"id": "github.copilot.editsAgent"},
        "response": [
            {"value": "I'll read the failing test first.", "supportThemeIcons": False},
            {"kind": "toolInvocationSerialized", "invocationMessage": {"value": "Reading t.py"},
             "pastTenseMessage": {"value": "Read t.py"}, "isConfirmed": True, "isComplete": True,
             "resultDetails": [{"$mid": 1, "fsPath": "/home/dana/t.py", "path": "/home/dana/t.py", "scheme": "file"}],
             "toolCallId": "toolu_01Q", "toolId": "copilot_readFile"},
            {"kind": "thinking", "value": ["Leap ", "years"]},
            {"kind": "progressMessage", "content": {"value": "Working"}},
            {"value": " Use calendar.isleap().", "supportThemeIcons": False},
        ],
        "result": {"metadata": {
            "resolvedModel": "claude-sonnet-4-20250514",
            "toolCallRounds": [
                {"id": "r1", "response": "I'll read the failing test first.", "timestamp": 1755675005000,
                 "toolCalls": [{"name": "copilot_readFile", "arguments": "{\"filePath\":\"t.py\"}",
                                "id": "toolu_01Q__vscode-1755675006012"}]},
                {"id": "r2", "response": "Use calendar.isleap().", "toolCalls": [], "thinking": {"text": "hm"}}],
            "toolCallResults": {"toolu_01Q__vscode-1755675006012": {"content": [{"value": "def test(): ..."}]}}}},
        "isCanceled": False,
    }],
}


def test_gen_b_document_with_pointers_and_the_call_join():
    session, reason = chat.session_from_document(json.dumps(GEN_B).encode())
    assert reason == "" and session.generation == "B" and session.version == 3
    assert (session.session_id, session.title, session.requester) == ("s-b", "Leap-year invoice test failure", "dana-k")
    assert session.creation_ns == 1755675000000 * MS and session.locator == "file"
    request = session.requests[0]
    assert request.text == "Why does test_invoice_total fail?"
    assert request.text_locator == "json:/requests/0/message/text"
    assert request.timestamp_ns == 1755675004000 * MS
    assert (request.model_id, request.resolved_model, request.agent_id) == (
        "copilot/claude-sonnet-4", "claude-sonnet-4-20250514", "github.copilot.editsAgent")
    # blocks that a tool call or thinking separates are joined by a blank line; each block is stripped
    assert request.markdown == "I'll read the failing test first.\n\nUse calendar.isleap()."
    assert [part.kind for part in request.parts] == ["markdown", "tool", "thinking", "progressMessage", "markdown"]
    assert request.parts[2].text == "Leap years" and request.parts[4].locator == "json:/requests/0/response/4"
    invocation = request.invocations[0]
    assert (invocation.tool_id, invocation.message, invocation.output) == ("copilot_readFile", "Read t.py",
                                                                          "/home/dana/t.py")
    assert (invocation.confirmation.kind, invocation.confirmation.locator) == (
        "approved", "json:/requests/0/response/1/isConfirmed")
    [(call, part, result)] = request.calls()
    assert call.base_id == "toolu_01Q" and part is invocation and call.name == "copilot_readFile"
    assert result == ("def test(): ...",
                      "json:/requests/0/result/metadata/toolCallResults/toolu_01Q__vscode-1755675006012")
    assert request.rounds[0].timestamp_ns == 1755675005000 * MS and request.rounds[1].thinking == "hm"
    assert call.locator == "json:/requests/0/result/metadata/toolCallRounds/0/toolCalls/0"
    assert request.state is None


def test_older_releases_join_calls_by_position():
    data = json.loads(json.dumps(GEN_B))
    data["requests"][0]["response"][1]["toolCallId"] = "9b1c0e3a-uuid-of-its-own"
    session, _ = chat.session_from_document(json.dumps(data).encode())
    [(call, part, _result)] = session.requests[0].calls()
    assert part is session.requests[0].invocations[0]


def test_a_call_without_a_part_stays_unpaired_when_ids_match_elsewhere():
    data = json.loads(json.dumps(GEN_B))
    rounds = data["requests"][0]["result"]["metadata"]["toolCallRounds"]
    rounds[1]["toolCalls"] = [{"name": "x", "arguments": "{}", "id": "toolu_02__vscode-9"}]
    session, _ = chat.session_from_document(json.dumps(data).encode())
    paired = session.requests[0].calls()
    assert paired[0][1] is not None and paired[1][1:] == (None, None)


def test_v1_and_v2_sessions_and_legacy_strings():
    v1 = {"sessionId": "s1", "creationDate": 1700000000000, "requests": [
        {"message": "plain prompt", "response": "plain answer", "timestamp": 1700000001000, "isCanceled": True},
        {"message": {"text": "second"}, "response": ["part one", {"value": " two"}], "timestamp": 1700000002000}]}
    session, _ = chat.session_from_document(json.dumps(v1).encode())
    assert session.version == 1 and session.title == ""
    assert session.last_message_ns == 1700000002000 * MS  # no lastMessageDate in v1: the newest request
    first, second = session.requests
    assert (first.text, first.text_locator, first.markdown, first.state) == (
        "plain prompt", "json:/requests/0/message", "plain answer", 2)
    assert second.markdown == "part one two"
    v2 = dict(v1, version=2, computedTitle="auto title", lastMessageDate=1700000009000)
    session, _ = chat.session_from_document(json.dumps(v2).encode())
    assert (session.version, session.title, session.last_message_ns) == (2, "auto title", 1700000009000 * MS)


GEN_C = [
    {"kind": 0, "v": {"version": 3, "creationDate": 1772442845000, "sessionId": "s-c", "requests": [],
                      "initialLocation": "panel"}},
    {"kind": 2, "k": ["requests"], "v": [{"requestId": "request_a", "timestamp": 1772442847000,
                                          "message": {"text": "run the migration tests"}, "modelId": "copilot/gpt-5",
                                          "response": [], "modelState": {"value": 0}}]},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "Running"}]},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "Running the migration test suite."}], "i": 0},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [
        {"kind": "toolInvocationSerialized", "invocationMessage": "Running `pytest`",
         "pastTenseMessage": "Ran `pytest`",
         "isConfirmed": {"type": 2, "id": "chat.tools.terminal.autoApprove"}, "isComplete": True,
         "resultDetails": {"input": "{\"command\":\"pytest\"}", "output": [{"type": "embed", "isText": True,
                                                                          "value": "12 passed"}], "isError": False},
         "toolSpecificData": {"kind": "terminal", "commandLine": {"original": "pytest tests/migrations -q"}},
         "toolCallId": "call_Zr4", "toolId": "run_in_terminal"}]},
    {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": " All 12 pass."}]},
    {"kind": 1, "k": ["requests", 0, "result"], "v": {"metadata": {
        "toolCallRounds": [{"id": "r-01", "response": "Running", "toolCalls": [
            {"name": "run_in_terminal", "arguments": "{}", "id": "call_Zr4__vscode-1772442849003"}]}],
        "toolCallResults": {"call_Zr4__vscode-1772442849003": {"content": [{"value": "12 passed in 3.41s"}]}},
        "resolvedModel": "gpt-5-2025-08-07"}}},
    {"kind": 1, "k": ["requests", 0, "modelState"], "v": {"value": 1, "completedAt": 1772442858000}},
    {"kind": 1, "k": ["customTitle"], "v": "Migration tests"},
]


def gen_c(entries, tail: bytes = b"") -> bytes:
    return b"".join(json.dumps(entry).encode() + b"\n" for entry in entries) + tail


def test_gen_c_log_replays_to_the_final_state_with_line_locators():
    session = chat.session_from_log(replay_lines(split_lines(gen_c(GEN_C))))
    assert session.generation == "C" and session.title == "Migration tests" and session.problems == []
    request = session.requests[0]
    # streamed states are gone; the tool call between the two blocks separates them
    assert request.markdown == "Running the migration test suite.\n\nAll 12 pass."
    assert request.text_locator == "line:2" and request.parts[0].locator == "line:4"
    assert request.parts[1].locator == "line:5" and request.parts[2].locator == "line:6"
    assert (request.state, request.completed_ns) == (1, 1772442858000 * MS)
    assert session.last_message_ns == 1772442858000 * MS  # gen C has no lastMessageDate
    invocation = request.invocations[0]
    assert (invocation.confirmation.kind, invocation.confirmation.detail) == ("setting",
                                                                              "chat.tools.terminal.autoApprove")
    assert (invocation.input, invocation.output, invocation.is_error) == ("pytest tests/migrations -q", "12 passed",
                                                                          False)
    [(call, part, result)] = request.calls()
    assert part is invocation and result == ("12 passed in 3.41s", "line:7") and call.locator == "line:7"
    assert request.resolved_model == "gpt-5-2025-08-07"


def test_gen_c_torn_last_line_and_a_bad_middle_line_are_rows_the_rest_replayed():
    entries = GEN_C[:3] + [{"kind": 1, "k": ["requests", 4, "x"], "v": 1}] + GEN_C[3:]
    session = chat.session_from_log(replay_lines(split_lines(gen_c(entries, tail=b'{"kind":1,"k":["customT'))))
    assert [draft.locator for draft in session.problems] == ["line:4", "line:11"]
    assert "torn last line" in session.problems[1].text
    assert session.title == "Migration tests" and session.requests[0].markdown.endswith("All 12 pass.")


def test_gen_c_without_an_initial_gives_no_session():
    assert chat.session_from_log(replay_lines(split_lines(gen_c(GEN_C[1:])))) is None


@pytest.mark.parametrize("confirmed, kind, detail", [
    (False, "denied", ""), ({"type": 0}, "denied", ""), ({"type": 1}, "not needed", ""),
    ({"type": 3, "scope": "workspace"}, "tool scope", "workspace"), ({"type": 4}, "user", ""),
    ({"type": 5}, "skipped", ""), ({"type": 9}, "type 9", "")])
def test_every_confirmation_generation(confirmed, kind, detail):
    data = json.loads(json.dumps(GEN_B))
    data["requests"][0]["response"][1]["isConfirmed"] = confirmed
    session, _ = chat.session_from_document(json.dumps(data).encode())
    confirmation = session.requests[0].invocations[0].confirmation
    assert (confirmation.kind, confirmation.detail) == (kind, detail)


def test_no_confirmation_recorded():
    data = json.loads(json.dumps(GEN_B))
    del data["requests"][0]["response"][1]["isConfirmed"]
    session, _ = chat.session_from_document(json.dumps(data).encode())
    assert session.requests[0].invocations[0].confirmation is None


def test_gen_a_array_in_item_table():
    sessions = chat.sessions_from_array([GEN_B, "not a session", dict(GEN_B, sessionId="s-2")], "sqlite:ItemTable:7")
    assert [session.session_id for session in sessions] == ["s-b", "s-2"]
    assert sessions[0].requests[0].text_locator == "sqlite:ItemTable:7/0/requests/0/message/text"
    assert sessions[1].locator == "sqlite:ItemTable:7/2" and sessions[0].generation == "A"
    assert chat.sessions_from_array({"not": "an array"}, "x") == []


@pytest.mark.parametrize("data, reason", [(b"{", "not JSON"), (b"[]", "a JSON list"), (b"\xff", "not JSON"),
                                          (b"[" * 5000 + b"]" * 5000, "not JSON")])
def test_malformed_session_documents(data, reason):
    session, why = chat.session_from_document(data)
    assert session is None and reason in why


def test_hostile_shapes_inside_a_session_are_skipped_not_raised():
    hostile = {"requests": [1, {"message": 5, "response": {"x": 1}, "result": [], "agent": "a", "modelState": "x",
                                "timestamp": "soon"},
                            {"response": [None, 3, {"kind": "toolInvocationSerialized", "resultDetails": {"output": 5},
                                                    "isConfirmed": {"type": True}}],
                             "result": {"metadata": {"toolCallRounds": [None, {"toolCalls": [None, {}]}],
                                                     "toolCallResults": {"a": None, "b": {"content": [1, {}]}}}}}]}
    session, _ = chat.session_from_document(json.dumps(hostile).encode())
    assert [request.index for request in session.requests] == [1, 2]
    assert session.requests[0].text == "" and session.requests[0].timestamp_ns is None
    assert session.requests[1].invocations[0].confirmation is None
    assert session.requests[1].tool_results["b"][0] == '1\n{}'


def test_session_index_entries():
    value = {"version": 1, "entries": {"s/1": {"sessionId": "s/1", "title": "T", "lastMessageDate": 1772442858000},
                                       "s2": {"isEmpty": True}, "bad": 3}}
    entries = chat.session_index(value)
    assert [(entry.session_id, entry.title, entry.pointer, entry.is_empty) for entry in entries] == [
        ("s/1", "T", "/entries/s~11", False), ("s2", "", "/entries/s2", True)]
    assert entries[0].last_message_ns == 1772442858000 * MS
    assert chat.session_index([]) == []


def test_a_json_beside_its_jsonl_is_an_older_snapshot():
    chosen, superseded = chat.choose_session_files([
        "ws/chatSessions/a.json", "ws/chatSessions/a.jsonl", "ws/chatSessions/b.json", "ws/chatSessions/c.jsonl",
        "ws/chatSessions/.json", "ws/chatSessions/notes.txt"])
    assert chosen == {"a": "ws/chatSessions/a.jsonl", "b": "ws/chatSessions/b.json", "c": "ws/chatSessions/c.jsonl"}
    assert superseded == ["ws/chatSessions/a.json"]


def test_base_call_id():
    assert chat.base_call_id("toolu_01__vscode-1772442849001") == "toolu_01"
    assert chat.base_call_id("call__vscode-x") == "call__vscode-x"


SSH_HEX = json.dumps({"hostName": "build.example.org"}).encode().hex()
CONTAINER_HEX = b"/home/dana/src/app".hex()
CONTAINER_JSON = json.dumps({"hostPath": "/home/dana/src/app", "configFile": {}}).encode().hex()


@pytest.mark.parametrize("uri, path, remote, host", [
    ("file:///home/dana/src/billing-api", "/home/dana/src/billing-api", "", ""),
    ("file:///home/dana/my%20project", "/home/dana/my project", "", ""),
    ("file:///c%3A/Users/dana/proj", "c:/Users/dana/proj", "", ""),
    ("file://server/share/proj", "/share/proj", "", "server"),
    ("vscode-remote://wsl%2Bubuntu/home/dana/proj", "/home/dana/proj", "wsl", "ubuntu"),
    ("vscode-remote://wsl+Ubuntu-22.04/home/dana/proj", "/home/dana/proj", "wsl", "Ubuntu-22.04"),
    ("vscode-remote://ssh-remote%2Bbuildbox/srv/app", "/srv/app", "ssh-remote", "buildbox"),
    ("vscode-remote://ssh-remote%2B4142/srv/app", "/srv/app", "ssh-remote", "4142"),
    (f"vscode-remote://ssh-remote%2B{SSH_HEX}/srv/app", "/srv/app", "ssh-remote", "build.example.org"),
    (f"vscode-remote://dev-container%2B{CONTAINER_HEX}/workspaces/app", "/workspaces/app", "dev-container",
     "/home/dana/src/app"),
    (f"vscode-remote://dev-container%2B{CONTAINER_JSON}/workspaces/app", "/workspaces/app", "dev-container",
     "/home/dana/src/app"),
    ("vscode-remote://attached-container%2Bzz/app", "/app", "attached-container", "zz"),
    ("vscode-remote://codespaces%2Bfuzzy-space/workspaces/repo", "/workspaces/repo", "codespaces", "fuzzy-space"),
    ("vscode-vfs://github/owner/repo", "/owner/repo", "vscode-vfs", "github"),
])
def test_workspace_uri_shapes(uri, path, remote, host):
    target, reason = vscode_workspace.workspace_target(json.dumps({"folder": uri}).encode())
    assert reason == "" and (target.kind, target.uri, target.path, target.remote, target.host, target.pointer) == (
        "folder", uri, path, remote, host, "/folder")


def test_multi_root_workspace_and_meta_json():
    target, _ = vscode_workspace.workspace_target(b'{"workspace": "file:///home/dana/src/platform.code-workspace"}')
    assert (target.kind, target.path) == ("workspace", "/home/dana/src/platform.code-workspace")
    target, _ = vscode_workspace.workspace_target(b'{"id": "x", "configuration": {"external": "file:///home/d/w.code-workspace"}}')
    assert (target.kind, target.path, target.pointer) == ("workspace", "/home/d/w.code-workspace", "/configuration")


@pytest.mark.parametrize("data, reason", [(b"{", "not JSON"), (b"[1]", "a JSON list"), (b"{}", "names no folder"),
                                          (b'{"folder": 3}', "names no folder"),
                                          (b'{"folder": "http://[::1/x"}', "not a URI")])
def test_bad_workspace_json(data, reason):
    target, why = vscode_workspace.workspace_target(data)
    assert target is None and reason in why


def test_adjacent_markdown_parts_are_one_block_and_decorations_do_not_split_it():
    data = {"sessionId": "s", "requests": [{"message": {"text": "q"}, "response": [
        {"value": "Use "}, {"kind": "inlineReference", "inlineReference": {}}, {"value": "`sort()`"},
        {"value": " here."}, {"kind": "toolInvocationSerialized", "toolCallId": "c"}, {"value": "Done."}]}]}
    session, _ = chat.session_from_document(json.dumps(data).encode())
    assert session.requests[0].markdown == "Use `sort()` here.\n\nDone."


def test_the_response_end_is_completed_at_else_the_request_time_plus_total_elapsed():
    data = {"sessionId": "s", "requests": [
        {"message": {"text": "q"}, "timestamp": 1700000000000, "modelId": "copilot/gpt-4o",
         "result": {"timings": {"firstProgress": 800, "totalElapsed": 2500}}},
        {"message": {"text": "q2"}, "timestamp": 1700000010000,
         "modelState": {"value": 1, "completedAt": 1700000019000}, "result": {"timings": {"totalElapsed": 2500}}},
        {"message": {"text": "q3"}, "timestamp": 1700000020000, "result": {"timings": {"totalElapsed": True}}}]}
    session, _ = chat.session_from_document(json.dumps(data).encode())
    first, second, third = session.requests
    assert first.finished_ns == 1700000002500 * MS and first.model_locator == "json:/requests/0/modelId"
    assert second.finished_ns == 1700000019000 * MS
    assert third.finished_ns is None  # a boolean is no duration


def test_a_part_of_another_kind_names_its_content_or_its_file():
    data = {"sessionId": "s", "requests": [{"message": {"text": "q"}, "response": [
        {"kind": "textEditGroup", "uri": {"$mid": 1, "path": "/home/alice/app.py", "scheme": "file"}, "edits": []},
        {"kind": "warning", "content": {"value": "Rate limited"}}]}]}
    session, _ = chat.session_from_document(json.dumps(data).encode())
    assert [(part.kind, part.text) for part in session.requests[0].parts] == [
        ("textEditGroup", "/home/alice/app.py"), ("warning", "Rate limited")]


def budget_session(session_id: str, requests: int, parts: int) -> dict:
    return {"version": 3, "sessionId": session_id, "requests": [
        {"requestId": f"r{index}", "message": {"text": f"q{index}"},
         "response": [{"value": f"part {index}.{position}"} for position in range(parts)]}
        for index in range(requests)]}


def test_a_session_over_its_item_budget_is_read_up_to_it_and_names_the_rest(monkeypatch):
    monkeypatch.setattr(chat, "MAX_SESSION_ITEMS", 5)  # request 0 and its 3 parts, then request 1
    session, _ = chat.session_from_document(json.dumps(budget_session("s", 3, 3)).encode())
    assert [(request.text, [part.text for part in request.parts]) for request in session.requests] == [
        ("q0", ["part 0.0", "part 0.1", "part 0.2"]), ("q1", [])]
    assert [(row.text, row.locator, row.timestamp_source) for row in session.problems] == [
        ("parser: session over the limit (5 requests, response parts, tool rounds, calls and results read); 4 more "
         "from here on were counted, not read", "json:/requests/1/response/0", "none")]


def test_an_array_of_sessions_shares_one_item_budget_and_the_row_goes_where_it_ran_out(monkeypatch):
    monkeypatch.setattr(chat, "MAX_SESSION_ITEMS", 6)  # the first session whole (2 + 2), the second's first request
    sessions = chat.sessions_from_array([budget_session("a", 2, 1), budget_session("b", 2, 1)], "sqlite:ItemTable:7")
    assert [len(session.requests) for session in sessions] == [2, 1]
    assert sessions[0].problems == []
    assert [(row.text, row.locator) for row in sessions[1].problems] == [
        ("parser: session over the limit (6 requests, response parts, tool rounds, calls and results read); 1 more "
         "from here on were counted, not read", "sqlite:ItemTable:7/1/requests/1")]


def test_a_logged_session_over_its_item_budget_keeps_the_replay_rows_first(monkeypatch):
    monkeypatch.setattr(chat, "MAX_SESSION_ITEMS", 1)
    entries = [{"kind": 0, "v": budget_session("c", 1, 1)}, {"kind": 1, "k": ["title"], "v": "t"}, "not an entry"]
    session = chat.session_from_log(replay_lines(split_lines(gen_c(entries))))
    assert [row.text.split(" (")[0] for row in session.problems] == [
        "parser: unparseable line", "parser: session over the limit"]
