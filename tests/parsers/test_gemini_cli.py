"""Gemini CLI parsers, one rule per test, on files written inline."""

from __future__ import annotations

import hashlib
import json

from tests.analyzer.fakes import FakeBundle, drafts

PROJECT = ".gemini/tmp/acme-api/"
CHAT = PROJECT + "chats/session-2026-07-02T09-14-7c2e9a41.jsonl"
SESSION = "7c2e9a41-3b5d-4f60-8a71-92b3c4d5e6f7"
ROOT = "/home/dev/src/acme-api"
ROOT_HASH = hashlib.sha256(ROOT.encode()).hexdigest()
META = {"sessionId": SESSION, "projectHash": ROOT_HASH, "startTime": "2026-07-02T09:14:05.120Z", "kind": "main"}


def jsonl(*records) -> bytes:
    return b"".join((record if isinstance(record, bytes) else json.dumps(record).encode()) + b"\n"
                    for record in records)


def chat(*records, path: str = CHAT, extra: dict | None = None):
    files = {("gemini-cli.chats", path): jsonl(META, *records), **(extra or {})}
    return drafts(FakeBundle(files), path, "gemini_cli.chat_jsonl.v1")


def user(number: int, text: str, **more) -> dict:
    return {"id": f"m{number}", "timestamp": f"2026-07-02T09:14:{number:02d}.000Z", "type": "user",
            "content": [{"text": text}], **more}


def gemini(number: int, text: str = "", **more) -> dict:
    return {"id": f"m{number}", "timestamp": f"2026-07-02T09:14:{number:02d}.000Z", "type": "gemini",
            "content": text, "model": "gemini-2.5-pro", **more}


def call(call_id: str, result: str | None = None, **more) -> dict:
    entry = {"id": call_id, "name": "run_shell_command", "args": {"command": "npm test"}, "status": "success",
             "timestamp": "2026-07-02T09:14:30.000Z", **more}
    if result is not None:
        entry["result"] = [{"functionResponse": {"id": call_id, "name": "run_shell_command",
                                                 "response": {"output": result}}}]
    return entry


def texts(rows, turn_type: str | None = None) -> list[str]:
    return [row.text for row in rows if turn_type is None or row.turn_type == turn_type]


def parser_rows(rows) -> list[str]:
    return [row.text for row in rows if row.text.startswith("parser:")]


# -- replay ----------------------------------------------------------------------------------------


def test_the_last_copy_of_a_message_gives_its_rows_at_the_first_copys_place():
    rows = chat(gemini(2, "draft answer"), user(3, "next question"), gemini(2, "final answer"))
    assistant = [row for row in rows if row.turn_type == "assistant"]
    assert [row.text for row in assistant] == ["final answer"]
    assert assistant[0].locator == "line:4"  # the last copy's line
    order = texts(rows)
    assert order.index("final answer") < order.index("next question")  # first-seen order, as upstream loads it
    superseded = [row for row in rows if row.text.startswith("superseded:")]
    assert len(superseded) == 1 and superseded[0].locator == "line:2" and "line:4" in superseded[0].text


def test_a_rewind_keeps_the_removed_messages_marked_in_the_locator_not_the_text():
    rows = chat(user(1, "find the timeout"), gemini(2, "it is 2 s"), user(3, "delete the pool file"),
                {"$rewindTo": "m3"}, user(4, "raise it to 10 s"))
    rewound = [row for row in rows if row.locator.endswith("/rewound@line:5")]
    assert texts(rewound) == ["delete the pool file"] and rewound[0].turn_type == "user"
    kept = [row for row in rows if row.text in ("find the timeout", "it is 2 s", "raise it to 10 s")]
    assert len(kept) == 3 and not any("rewound" in row.locator for row in kept)
    marker = [row for row in rows if row.text.startswith("rewind:")]
    assert marker[0].locator == "line:5" and "1 message removed" in marker[0].text


def test_earlier_copies_are_held_by_type_and_time_only_and_still_each_give_their_row():
    from aitrail.analyzer.parsers.gemini_cli.replay import Replay

    replay = Replay()
    for number in range(5):
        replay.add_record(gemini(2, "x" * 10_000 + str(number)), number + 2)
    [entry] = replay.entries
    slim = {"type": "gemini", "timestamp": "2026-07-02T09:14:02.000Z"}
    assert [copy.record for copy in entry.copies[:-1]] == [slim] * 4
    assert entry.final.record["content"].endswith("4")
    rows = chat(*(gemini(2, "x" * 1000 + str(number)) for number in range(5)))
    assert len([row for row in rows if row.text.startswith("superseded: an earlier copy of message m2 (gemini)")]) == 4


def test_rewinds_cut_the_conversation_where_they_say_whatever_came_before():
    """Rewinding to the last message again and again (linear now: the live ids are a list cut at the target)."""
    records = [user(number, f"kept {number}") for number in range(1, 6)]
    for number in range(6, 30):
        records += [user(number, f"dropped {number}"), {"$rewindTo": f"m{number}"}]
    records += [{"$rewindTo": "m4"}, user(40, "after")]
    rows = chat(*records)
    live = [row.text for row in rows if row.turn_type == "user" and "rewound@" not in row.locator]
    assert live == ["kept 1", "kept 2", "kept 3", "after"]
    assert len([row for row in rows if row.text.startswith("dropped")]) == 24  # each kept, marked
    assert all("rewound@" in row.locator for row in rows if row.text.startswith(("dropped", "kept 4", "kept 5")))


def test_a_rewind_to_an_unknown_id_removes_everything_before_it_and_keeps_it():
    rows = chat(user(1, "first"), gemini(2, "reply"), {"$rewindTo": "never-seen"})
    assert {row.locator for row in rows if row.text in ("first", "reply")} == {"line:2/rewound@line:4",
                                                                               "line:3/rewound@line:4"}
    assert [row.locator for row in rows if "every message was removed" in row.text] == ["line:4"]


def test_a_message_list_checkpoint_keeps_the_messages_it_dropped():
    rows = chat(user(1, "old question"), gemini(2, "old answer"),
                {"$set": {"messages": [user(3, "<state_snapshot>summary</state_snapshot>"), gemini(2, "old answer")],
                          "lastUpdated": "2026-07-02T09:20:00.000Z"}})
    dropped = [row for row in rows if row.locator.endswith("/replaced@line:4")]
    assert texts(dropped) == ["old question"]
    assert [row.locator for row in rows if row.text == "old answer"] == ["line:4/$set/messages/1"]
    assert [row.turn_type for row in rows if row.text.startswith("<state_snapshot>")] == ["system"]


def test_every_line_is_cited_set_metadata_and_unknown_records_included():
    rows = chat({"$set": {"lastUpdated": "2026-07-02T09:14:06.000Z"}}, {"$compact": 1}, user(1, "hi"), gemini(1, "x"))
    cited = {row.locator.split("/", 1)[0] for row in rows}
    assert cited >= {"line:1", "line:2", "line:3", "line:4", "line:5"}
    assert any(text.startswith("unknown record (operator $compact)") for text in texts(rows))


# -- tool calls ------------------------------------------------------------------------------------


def test_a_tool_result_is_never_a_user_row():
    response = {"id": "m3", "timestamp": "2026-07-02T09:14:31.000Z", "type": "user",
                "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                  "response": {"output": "3 passed"}}}]}
    rows = chat(user(1, "run the tests"), gemini(2, toolCalls=[call("c1", "3 passed")]), response)
    assert texts(rows, "user") == ["run the tests"]
    assert [(row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"] == [("c1", "3 passed")]


def test_a_result_only_in_the_synthetic_user_message_joins_its_call_by_id():
    response = {"id": "m3", "timestamp": "2026-07-02T09:14:31.000Z", "type": "user",
                "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                  "response": {"output": "3 passed"}}}]}
    rows = chat(gemini(2, toolCalls=[call("c1")]), response)
    results = [row for row in rows if row.turn_type == "tool_result"]
    assert [(row.tool_use_id, row.text) for row in results] == [("c1", "3 passed")]
    assert not parser_rows(rows)


def test_every_tool_use_with_an_id_has_its_result_or_a_parser_row():
    rows = chat(gemini(2, toolCalls=[call("c1", "ok"), call("c2", status="executing")]))
    uses = {row.tool_use_id for row in rows if row.turn_type == "tool_use"}
    results = {row.tool_use_id for row in rows if row.turn_type == "tool_result"}
    missing = uses - results
    assert missing == {"c2"}
    assert parser_rows(rows) == ["parser: no result recorded for tool call c2 (run_shell_command)"]


def test_a_denied_call_gives_a_permission_decision_row():
    denied = call("c1", None, status="cancelled")
    denied["result"] = [{"functionResponse": {
        "id": "c1", "name": "run_shell_command",
        "response": {"error": "[Operation Cancelled] Reason: User denied execution."}}}]
    rows = chat(gemini(2, toolCalls=[denied]))
    decision = [row for row in rows if row.text == "permission decision: denied"]
    assert len(decision) == 1 and decision[0].tool_use_id == "c1"


# -- message kinds ---------------------------------------------------------------------------------


def test_injected_context_and_sub_agent_prompts_are_not_user_rows():
    rows = chat(user(1, "<session_context>\nThis is the Gemini CLI.</session_context>"),
                user(2, "I ran the following shell command:\n```sh\nls\n```"))
    assert not texts(rows, "user")
    sub_meta = {("gemini-cli.subagent_chats", PROJECT + f"chats/{SESSION}/sub.jsonl"):
                jsonl({**META, "kind": "subagent"}, user(1, "find the imports"))}
    rows = drafts(FakeBundle(sub_meta), PROJECT + f"chats/{SESSION}/sub.jsonl", "gemini_cli.chat_jsonl.v1")
    assert "subagent prompt: find the imports" in texts(rows, "system")


def test_display_content_is_what_the_user_typed():
    message = user(1, "explain @app.py")
    message["content"] = [{"text": "explain @app.py"}, {"text": "\n--- Content from referenced files ---\nimport os"}]
    message["displayContent"] = [{"text": "explain @app.py"}]
    assert texts(chat(message), "user") == ["explain @app.py"]


def test_thoughts_models_and_system_types():
    thought = {"subject": "Plan", "description": "Read first.", "timestamp": "2026-07-02T09:14:01.500Z"}
    second = gemini(4, "done")
    second["model"] = "gemini-3-pro-preview"
    rows = chat(gemini(2, "looking", thoughts=[thought]), {"id": "m3", "type": "info", "content": "Model set"},
                second, {"id": "m5", "type": "checkpoint", "content": "x"})
    assert texts(rows, "thinking") == ["Plan\nRead first."]
    assert [text for text in texts(rows) if text.startswith("model:")] == [
        "model: gemini-2.5-pro", "model: gemini-2.5-pro -> gemini-3-pro-preview"]
    assert "info: Model set" in texts(rows) and 'unknown message type "checkpoint": x' in texts(rows)


# -- bad input -------------------------------------------------------------------------------------


def test_a_bad_line_is_reported_and_the_lines_after_it_are_read():
    data = jsonl(META, user(1, "before"), b'{"id": "m2", "type": "us', user(3, "after")) + b'{"id": "m4", "ty'
    rows = drafts(FakeBundle({("gemini-cli.chats", CHAT): data}), CHAT, "gemini_cli.chat_jsonl.v1")
    assert texts(rows, "user") == ["before", "after"]
    bad = parser_rows(rows)
    assert len(bad) == 2 and bad[0].startswith("parser: unparseable line (invalid JSON")
    assert bad[1].startswith("parser: unparseable line (torn last line, no newline")


def test_a_torn_logs_json_still_gives_the_entries_before_the_cut():
    entries = [{"sessionId": SESSION, "messageId": n, "timestamp": "2026-07-02T09:14:05.300Z", "type": "user",
                "message": f"prompt {n}"} for n in range(3)]
    data = json.dumps(entries, indent=2).encode()[:-40]
    rows = drafts(FakeBundle({("gemini-cli.prompt_log", PROJECT + "logs.json"): data}), PROJECT + "logs.json",
                  "gemini_cli.logs_json.v1")
    assert texts(rows, "user") == ["prompt 0", "prompt 1"]
    assert parser_rows(rows)[0].startswith("parser: unparseable record (the array is cut off")


def test_a_damaged_policy_file_is_read_table_by_table():
    data = (b'[[rule]]\ntoolName = "glob"\ndecision = "allow"\n\n'
            b'[[rule]]\ndecision = allow\n\n[[rule]]\ntoolName = "ls"\n')
    rows = drafts(FakeBundle({("gemini-cli.policies", ".gemini/policies/auto-saved.toml"): data}),
                  ".gemini/policies/auto-saved.toml", "gemini_cli.policy.v1")
    assert [row.tool_name for row in rows if row.text.startswith("permission setting:")] == ["glob", "ls"]
    assert len(parser_rows(rows)) == 2


# -- project mapping -------------------------------------------------------------------------------


def test_a_legacy_hash_folder_is_mapped_only_through_a_known_path():
    legacy = f".gemini/tmp/{ROOT_HASH}/chats/session-2026-03-11T16-40-0a1b2c3d.json"
    document = json.dumps({"sessionId": "s", "projectHash": ROOT_HASH, "messages": [user(1, "explain")]}).encode()
    unmapped = drafts(FakeBundle({("gemini-cli.chats_legacy", legacy): document}), legacy,
                      "gemini_cli.chat_legacy_json.v1")
    assert {row.project_path for row in unmapped} == {""}
    trust = {("gemini-cli.trusted_folders", ".gemini/trustedFolders.json"): json.dumps({ROOT: "TRUST_FOLDER"}).encode()}
    mapped = drafts(FakeBundle({("gemini-cli.chats_legacy", legacy): document, **trust}), legacy,
                    "gemini_cli.chat_legacy_json.v1")
    assert {row.project_path for row in mapped} == {ROOT}
    parent = {("gemini-cli.trusted_folders", ".gemini/trustedFolders.json"):
              json.dumps({"/home/dev/src/other": "TRUST_FOLDER"}).encode()}
    wrong = drafts(FakeBundle({("gemini-cli.chats_legacy", legacy): document, **parent}), legacy,
                   "gemini_cli.chat_legacy_json.v1")
    assert {row.project_path for row in wrong} == {""}


def test_a_slug_folder_maps_through_its_project_root_before_projects_json():
    extra = {("gemini-cli.project_roots", PROJECT + ".project_root"): ROOT.encode() + b"\n",
             ("gemini-cli.projects_registry", ".gemini/projects.json"):
             json.dumps({"projects": {"/somewhere/else": "acme-api"}}).encode()}
    rows = chat(user(1, "hi"), extra=extra)
    assert {row.project_path for row in rows} == {ROOT}
    only_registry = {("gemini-cli.projects_registry", ".gemini/projects.json"):
                     json.dumps({"projects": {"/somewhere/else": "acme-api"}}).encode()}
    assert {row.project_path for row in chat(user(1, "hi"), extra=only_registry)} == {"/somewhere/else"}


def test_a_legacy_file_copied_into_its_jsonl_is_not_repeated():
    legacy_path = PROJECT + "chats/session-2026-03-11T16-40-0a1b2c3d.json"
    document = json.dumps({"sessionId": SESSION, "projectHash": ROOT_HASH, "messages": [user(1, "explain")]})
    files = {("gemini-cli.chats_legacy", legacy_path): document.encode(),
             ("gemini-cli.chats", legacy_path + "l"): jsonl(META, user(1, "explain"))}
    rows = drafts(FakeBundle(files), legacy_path, "gemini_cli.chat_legacy_json.v1")
    assert not texts(rows, "user")
    assert any(text.startswith("session continued in session-2026-03-11T16-40-0a1b2c3d.jsonl: 1 of 1")
               for text in texts(rows))


def test_a_result_with_no_call_is_reported():
    response = {"id": "m3", "timestamp": "2026-07-02T09:14:31.000Z", "type": "user",
                "content": [{"functionResponse": {"id": "lost", "name": "glob", "response": {"output": "a.py"}}}]}
    rows = chat(response)
    assert [row.tool_use_id for row in rows if row.turn_type == "tool_result"] == ["lost"]
    assert parser_rows(rows) == ["parser: tool result for glob with no tool call before it"]


def test_only_the_newest_shell_command_has_a_time():
    path = PROJECT + "shell_history"
    rows = drafts(FakeBundle({("gemini-cli.shell_history", path): b"ls\n\ngit status\n"}), path,
                  "gemini_cli.shell_history.v1")
    assert [(row.text, row.locator, row.timestamp_source) for row in rows] == [
        ("ls", "line:1", "none"), ("git status", "line:3", "file-mtime")]


# -- budgets ---------------------------------------------------------------------------------------------


def test_past_the_replay_budget_the_lines_are_counted_and_the_conversation_is_as_the_lines_before_left_it(
        monkeypatch):
    from aitrail.analyzer.parsers.gemini_cli import replay
    from aitrail.analyzer.view.decode import decode_cost

    first = [user(1, "first question"), gemini(2, "first answer")]
    held = sum(decode_cost(json.dumps(record).encode()) + replay.ITEM_COST for record in [META, *first])
    monkeypatch.setattr(replay, "MAX_HELD_COST", held)
    rows = chat(*first, user(3, "never held"), b"not json", {"$rewindTo": "m1"})
    assert texts(rows, "user") == ["first question"] and texts(rows, "assistant") == ["first answer"]
    assert not [row for row in rows if "rewound@" in row.locator]  # the rewind was counted, not applied
    [over] = [row for row in rows if row.text.startswith("parser:")]
    assert (over.locator, over.timestamp_source, over.session_id) == ("line:4", "none", SESSION)
    assert over.text == (f"parser: chat replay over the limit (about {held} bytes of objects held); 3 lines from "
                         "line 4 on were counted, not read: the conversation is shown as the lines before them left it")


def test_the_earlier_copies_of_a_message_give_their_cost_back(monkeypatch):
    from aitrail.analyzer.parsers.gemini_cli import replay
    from aitrail.analyzer.view.decode import decode_cost

    copies = [gemini(2, "y" * 5000 + str(number)) for number in range(20)]
    one = decode_cost(json.dumps(copies[0]).encode())
    monkeypatch.setattr(replay, "MAX_HELD_COST", 3 * one + 25 * replay.ITEM_COST)  # far under twenty copies
    rows = chat(*copies)
    assert not parser_rows(rows)
    assert texts(rows, "assistant") == [copies[-1]["content"]]


def test_a_deep_path_is_walked_up_in_one_pass_and_the_project_map_has_a_budget(monkeypatch):
    from aitrail.analyzer.parsers.gemini_cli import projects

    deep = "/d" * 20_000  # each of its 20,000 parents hashed and held whole: 400 million characters
    table = projects.ProjectMap()
    table.add_candidate(deep)
    assert len(table.by_hash) == projects.MAX_PARENT_LEVELS + 1 and not table.over_member
    monkeypatch.setattr(projects, "MAX_MAP_BYTES", 3 * projects.ENTRY_COST)
    trust = json.dumps({"/a/b/c/d": "TRUST_FOLDER", ROOT: "TRUST_FOLDER"}).encode()  # /a/b passes the budget
    legacy = f".gemini/tmp/{ROOT_HASH}/chats/session-2026-03-11T16-40-0a1b2c3d.json"
    files = {("gemini-cli.trusted_folders", ".gemini/trustedFolders.json"): trust,
             ("gemini-cli.chats_legacy", legacy): json.dumps({"sessionId": "s", "messages": []}).encode()}
    rows = drafts(FakeBundle(files), ".gemini/trustedFolders.json", "gemini_cli.trusted_folders.v1")
    assert parser_rows(rows) == [
        f"parser: project map over the limit (about {3 * projects.ENTRY_COST} bytes of paths and parent directories "
        "for this .gemini directory); 2 paths and folder names from this file on were counted, not held: a folder "
        "only they would name keeps an empty project_path"]
    assert [row.text.split("=")[0] for row in rows[1:]] == [
        "permission setting: trustedFolders[/a/b/c/d]", f"permission setting: trustedFolders[{ROOT}]"]
    mapped = drafts(FakeBundle(files), legacy, "gemini_cli.chat_legacy_json.v1")
    assert {row.project_path for row in mapped} == {""}  # ROOT came after the budget was spent: not held
