"""Cursor CLI parsers, one rule per test (docs/agents/cursor-cli.md)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records
from tests.test_golden import timeline

SESSION = "7e1b9c40-2f6d-4a8e-b3c5-91d0e4a6f213"
PROJECT = ".cursor/projects/home-alice-src-acme-api/"
TRANSCRIPT = f"{PROJECT}agent-transcripts/{SESSION}/{SESSION}.jsonl"
SUBAGENT = f"{PROJECT}agent-transcripts/{SESSION}/subagents/explore.jsonl"
TEXT = f"{PROJECT}agent-transcripts/{SESSION}.txt"
BUCKET = hashlib.md5(b"/home/alice/src/acme-api").hexdigest()
STORE = f".config/cursor/chats/{BUCKET}/{SESSION}/store.db"
EMAIL, USER_ID = "alice.lindqvist@example.com", "user_01J9ZK4Q7M2XW8N3T5R6"


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def user(text: str) -> dict:
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def assistant(*blocks) -> dict:
    return {"role": "assistant", "message": {"content": list(blocks)}}


def transcript_rows(data: bytes, path: str = TRANSCRIPT, extra: dict | None = None):
    files = {("cursor-cli.transcripts" if "subagents" not in path else "cursor-cli.subagent_transcripts", path): data}
    files.update(extra or {})
    return drafts(FakeBundle(files), path, "cursor_cli.transcript.v1")


def store_db(tmp_path: Path, meta: dict | None, blobs: list[bytes], raw_meta: str | None = None) -> bytes:
    path = tmp_path / "store.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    connection.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    if meta is not None or raw_meta is not None:
        value = raw_meta if raw_meta is not None else json.dumps(meta).encode().hex()
        connection.execute("INSERT INTO meta VALUES ('0', ?)", (value,))
    for blob in blobs:
        connection.execute("INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(blob).hexdigest(), blob))
    connection.commit()
    connection.close()
    return path.read_bytes()


def node(*children: bytes) -> bytes:
    return b"".join(b"\x0a\x20" + hashlib.sha256(child).digest() for child in children)


def store_rows(data: bytes, extra: dict | None = None):
    files = {("cursor-cli.chat_stores", STORE): data, **(extra or {})}
    return drafts(FakeBundle(files), STORE, "cursor_cli.chat_store.v1")


# -- transcripts ------------------------------------------------------------------------------------


def test_only_the_user_query_text_is_a_user_row_and_the_rest_is_context():
    text = "<attached_files>\na.py\n</attached_files>\n<user_query>\nfix it\n</user_query>"
    rows = transcript_rows(jsonl(user(text)))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("user", "fix it"), ("system", "context: <attached_files>\na.py\n</attached_files>")]


def test_a_user_message_without_a_user_query_is_never_a_user_row():
    rows = transcript_rows(jsonl(user("<system_reminder>the todo list is empty</system_reminder>")))
    assert [row.turn_type for row in rows] == ["system"] and rows[0].text.startswith("context: ")


def test_rows_have_the_file_mtime_and_no_invented_time():
    rows = transcript_rows(jsonl(user("<user_query>hi</user_query>"), assistant({"type": "text", "text": "Hello."})))
    assert {(row.timestamp_ns, row.timestamp_source) for row in rows} == {(1_700_000_000_000_000_000, "file-mtime")}


def test_a_tool_use_without_an_id_gets_a_positional_id_and_no_parser_row_the_format_keeps_no_results():
    for path in (TRANSCRIPT, SUBAGENT):
        rows = transcript_rows(jsonl(user("<user_query>find it</user_query>"),
                                     assistant({"type": "text", "text": "Searching."},
                                               {"type": "tool_use", "name": "Grep", "input": {"pattern": "x"}})), path)
        call = next(row for row in rows if row.turn_type == "tool_use")
        assert (call.tool_use_id, call.tool_name, call.locator) == ("pos:2.1", "Grep", "line:2/content/1")
        # the JSONL transcripts never record a result: a call without one is not a damaged file
        assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_tool_use_with_an_id_joins_its_result_by_id_and_the_result_is_never_a_user_row():
    rows = transcript_rows(jsonl(
        assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}},
                  {"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "b"}}),
        {"role": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                                                 {"type": "tool_result", "tool_use_id": "t1", "content": "A"}]}}))
    results = [(row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("t2", "B"), ("t1", "A")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_in_a_store_that_records_results_every_tool_use_has_its_result_or_one_parser_row(tmp_path):
    calls = json.dumps({"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "t1", "toolName": "Shell", "args": {}},
        {"type": "tool-call", "toolCallId": "t2", "toolName": "Shell", "args": {}}]}).encode()
    result = json.dumps({"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "t1", "toolName": "Shell", "result": "ok"}]}).encode()
    root = node(calls, result)
    rows = store_rows(store_db(tmp_path, {"agentId": SESSION, "latestRootBlobId": hashlib.sha256(root).hexdigest()},
                               [calls, result, root]))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call t2 (Shell)"]


def test_a_text_transcript_records_results_so_a_call_without_one_keeps_its_parser_row():
    rows = text_rows(b"user:\n<user_query>\nedit it\n</user_query>\n\nassistant:\n[Tool call] Edit\n  path: a.py\n\n"
                     b"Done.\n")
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call pos:7 (Edit)"]


def test_no_parser_row_in_the_timeline_of_well_formed_jsonl_transcripts(cli, tmp_path):
    produced = timeline(cli, FIXTURES / "cursor-cli" / "jsonl-transcripts", tmp_path).decode()
    rows = list(csv.DictReader(io.StringIO(produced)))
    assert [row["turn_type"] for row in rows].count("tool_use") == 6
    assert not [row["text"] for row in rows if row["text"].startswith("parser:")]


def test_a_result_with_no_call_is_reported():
    rows = transcript_rows(jsonl({"role": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "zz", "content": "late"}]}}))
    assert [row.turn_type for row in rows] == ["tool_result", "system"]
    assert rows[1].text == "parser: tool result for an unnamed tool with no tool call before it"


def test_a_sub_agents_prompt_is_not_a_user_row_and_its_session_names_the_agent():
    rows = transcript_rows(jsonl(user("List the endpoints."), assistant({"type": "text", "text": "Three."})), SUBAGENT)
    assert rows[0].turn_type == "system" and rows[0].text == "subagent prompt: List the endpoints."
    assert {row.session_id for row in rows} == {f"{SESSION}/explore"}


def test_an_unknown_record_type_is_a_row_naming_it():
    rows = transcript_rows(jsonl({"type": "status", "status": "running"}))
    assert rows[0].text.startswith("record status: ") and rows[0].locator == "line:1"


def test_a_torn_last_line_is_one_parser_row_and_the_complete_lines_are_read():
    data = jsonl(user("<user_query>first</user_query>")) + b'{"role":"assistant","message":{"content":[{"ty'
    rows = transcript_rows(data)
    assert rows[0].text == "first"
    assert rows[1].text.startswith("parser: unparseable line (torn last line, no newline")
    assert rows[1].locator == "line:2"


def test_every_nonblank_line_is_cited():
    data = jsonl(user("<user_query>a</user_query>"), {"role": "assistant", "message": {"content": []}},
                 {"x": 1}, ["list"]) + b"not json\n"
    cited = {row.locator.split("/")[0] for row in transcript_rows(data)}
    assert cited == {"line:1", "line:2", "line:3", "line:4", "line:5"}


def test_the_project_path_is_given_only_when_the_chat_bucket_proves_it():
    lone = transcript_rows(jsonl(user("<user_query>a</user_query>")))
    assert lone[0].project_path == ""
    proven = transcript_rows(jsonl(user("<user_query>a</user_query>")),
                             extra={("cursor-cli.chat_stores", STORE): b""})
    assert proven[0].project_path == "/home/alice/src/acme-api"
    wrong = f".config/cursor/chats/{'0' * 32}/{SESSION}/store.db"
    assert transcript_rows(jsonl(user("<user_query>a</user_query>")),
                           extra={("cursor-cli.chat_stores", wrong): b""})[0].project_path == ""


def test_a_name_with_many_dashes_is_not_tried():
    from aitrail.analyzer.parsers.cursor_cli.places import resolve

    assert resolve("-".join("a" * 20), hashlib.md5(b"/a").hexdigest()) == ""
    assert resolve("home-alice-src-acme-api", BUCKET) == "/home/alice/src/acme-api"


# -- the .txt generation ----------------------------------------------------------------------------


def text_rows(text: bytes):
    return drafts(FakeBundle({("cursor-cli.text_transcripts", TEXT): text}), TEXT, "cursor_cli.transcript_text.v1")


def test_text_transcript_blocks_and_a_result_joined_to_its_call():
    rows = text_rows(b"user:\n<user_query>\nls\n</user_query>\n\nassistant:\n[Thinking] list files\n"
                     b"[Tool call] Shell\n  command: ls\n\n[Tool result] Shell\nREADME.md\n\nOne file.\n")
    assert [(row.turn_type, row.text, row.tool_use_id) for row in rows] == [
        ("user", "ls", ""), ("thinking", "list files", ""), ("tool_use", "command: ls", "pos:8"),
        ("tool_result", "README.md", "pos:8"), ("assistant", "One file.", "")]


def test_text_transcript_result_without_a_call_and_text_before_a_role():
    rows = text_rows(b"header\nuser:\n[Tool result] Read\nx\n")
    assert [row.text.split(" (")[0] for row in rows if row.text.startswith("parser:")] == [
        "parser: unparseable record", "parser: tool result for Read with no tool call before it"]
    assert not [row for row in rows if row.turn_type == "user"]


# -- store.db ---------------------------------------------------------------------------------------


def test_store_walks_the_latest_root_and_reports_what_it_cannot_decode(tmp_path):
    prompt = json.dumps({"role": "user", "content": "why is it slow"}).encode()
    answer = json.dumps({"role": "assistant", "content": [{"type": "text", "text": "The pool."}]}).encode()
    old = json.dumps({"role": "assistant", "content": "bcrypt"}).encode()
    garbage = b"\x0f\xff\x00\x13"
    root = node(prompt, garbage, answer) + b"\x0a\x20" + bytes(32)  # the last child is missing
    meta = {"agentId": SESSION, "latestRootBlobId": hashlib.sha256(root).hexdigest(), "name": "Slow",
            "createdAt": 1_764_000_000_000, "lastUsedModel": "gpt-5"}
    rows = store_rows(store_db(tmp_path, meta, [prompt, old, garbage, answer, root]))
    texts = [row.text for row in rows]
    assert texts[0].startswith("session: Slow (from store.db meta") and texts[1].startswith("model: gpt-5")
    assert [row.text for row in rows if row.turn_type in ("user", "assistant")] == ["why is it slow", "The pool."]
    assert any("is neither a JSON message nor a tree node" in text for text in texts)
    assert any(f"blob {'00' * 32} referenced here is not in the blobs table" in text for text in texts)
    assert "not in the latest tree (assistant): bcrypt" in texts
    assert {row.timestamp_ns for row in rows if row.turn_type == "user"} == {1_764_000_000_000 * 1_000_000}
    assert {row.session_id for row in rows} == {SESSION}


def test_store_meta_that_is_not_hex_json_is_reported_and_the_blobs_still_read(tmp_path):
    prompt = json.dumps({"role": "user", "content": "hello"}).encode()
    rows = store_rows(store_db(tmp_path, None, [prompt], raw_meta="zz-not-hex"))
    assert rows[0].text.startswith("parser: unparseable record (meta value is not hex-encoded JSON")
    assert [row.text for row in rows if row.turn_type == "user"] == ["hello"]


def test_store_placeholder_model_names_no_model(tmp_path):
    meta = {"agentId": SESSION, "latestRootBlobId": "", "lastUsedModel": "default"}
    rows = store_rows(store_db(tmp_path, meta, []))
    assert not [row for row in rows if row.model or row.text.startswith("model:")]


def test_store_that_is_not_a_database_is_one_parser_row():
    rows = store_rows(b"not a database at all, just bytes" * 50)
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (store.db: cannot")


def test_newest_rows_only_in_the_wal_are_read(cli, tmp_path):
    case = FIXTURES / "cursor-cli" / "chat-store-wal"
    database = next((case / "home" / ".config" / "cursor" / "chats").glob("*/*/store.db"))
    alone = tmp_path / "alone.db"
    alone.write_bytes(database.read_bytes())  # the database file without its -wal
    connection = sqlite3.connect(alone)
    assert connection.execute("SELECT count(*) FROM blobs").fetchone()[0] == 3
    connection.close()
    rows = list(csv.DictReader(io.StringIO(timeline(cli, case, tmp_path).decode())))
    store = [row for row in rows if row["store"] == "cursor-cli.chat_stores"]
    assert "Raised POOL_SIZE to 20; p95 of /login at 100 users is now 310 ms." in [row["text"] for row in store]
    assert {row["model"] for row in store if row["turn_type"] == "user"} == {"claude-4.5-sonnet"}


# -- cli-config.json, permissions.json --------------------------------------------------------------


CONFIG = {"version": 1, "permissions": {"allow": ["Shell(ls)", "Read(src/**)"], "deny": []},
          "approvalMode": "allowlist", "model": {"modelId": "gpt-5", "displayName": "GPT-5"},
          "authInfo": {"email": EMAIL, "userId": USER_ID, "displayName": "Alice Lindqvist"}}


def config_rows(document) -> list:
    path = ".cursor/cli-config.json"
    data = json.dumps(document).encode()
    return drafts(FakeBundle({("cursor-cli.cli_config", path): data}), path, "cursor_cli.cli_config.v1")


def test_cli_config_permissions_approval_mode_and_model():
    rows = config_rows(CONFIG)
    assert [row.text.split(" (from")[0] for row in rows] == [
        'permission setting: permissions.allow="Shell(ls)"', 'permission setting: permissions.allow="Read(src/**)"',
        "permission setting: permissions.deny=[]", 'permission setting: approvalMode="allowlist"',
        "model: gpt-5 (selected in .cursor/cli-config.json, file mtime)"]
    assert rows[-1].model == "gpt-5" and rows[0].timestamp_source == "file-mtime"


def test_no_account_identity_from_auth_info_in_any_row():
    for document in (CONFIG, {**CONFIG, "permissions": {"allow": [], "authInfo": CONFIG["authInfo"]}},
                     {"authInfo": CONFIG["authInfo"]}, {**CONFIG, "model": {"authInfo": CONFIG["authInfo"]}}):
        for row in config_rows(document):
            for value in (row.text, row.model, row.locator, row.session_id, row.tool_name):
                assert EMAIL not in value and USER_ID not in value and "Lindqvist" not in value


def test_no_account_identity_in_the_timeline_of_the_cli_config_case_and_the_file_is_collected(cli, tmp_path):
    case = FIXTURES / "cursor-cli" / "cli-config"
    produced = timeline(cli, case, tmp_path).decode()
    assert "permission setting: permissions.deny" in produced
    assert EMAIL not in produced and USER_ID not in produced and "Lindqvist" not in produced
    collected = {record["path"]: record["class"] for record in bundle_records(tmp_path / "case.tar.zst")}
    assert collected[".cursor/cli-config.json"] == "collected"


def test_auth_json_stays_never_collected(cli, tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "cursor").mkdir(parents=True)
    (home / ".config" / "cursor" / "auth.json").write_text('{"accessToken":"secret-token-value"}')
    (home / ".config" / "cursor" / "cli-config.json").write_text(json.dumps(CONFIG))
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", out, "--quiet").exit_code == 0
    outcomes = {record["path"]: record["outcome"] for record in bundle_records(out)}
    assert outcomes[".config/cursor/auth.json"] == "never_collect"
    assert outcomes[".config/cursor/cli-config.json"] == "collected"


def test_editor_permissions_jsonc_gives_one_row_per_key():
    path = ".cursor/permissions.json"
    data = b'// allowlists\n{"terminalAllowlist": ["npm test"], "autoRun": true,}\n'
    rows = drafts(FakeBundle({("cursor-cli.editor_allowlists", path): data}), path, "cursor_cli.permissions.v1")
    assert [row.text.split(" (from")[0] for row in rows] == [
        'permission setting: terminalAllowlist=["npm test"]', "permission setting: autoRun=true"]


# -- prompt history, agent-tools, plans -------------------------------------------------------------


def test_prompt_history_rows_read_as_the_transcripts_user_rows():
    path = ".config/cursor/prompt_history.json"
    data = json.dumps(["  fix it  ", "", 3]).encode()
    rows = drafts(FakeBundle({("cursor-cli.prompt_history", path): data}), path, "cursor_cli.prompt_history.v1")
    assert [(row.turn_type, row.text) for row in rows][0] == ("user", "fix it")
    primary = transcript_rows(jsonl(user("<user_query>\nfix it\n</user_query>")))
    assert primary[0].text == rows[0].text and primary[0].turn_type == rows[0].turn_type
    assert rows[2].text.startswith("parser: unparseable record")


def test_a_tool_output_file_is_a_tool_result_never_a_user_row():
    path = f"{PROJECT}agent-tools/3c9f1e2a.txt"
    rows = drafts(FakeBundle({("cursor-cli.agent_tools", path): b"14 passed\n"}), path, "cursor_cli.agent_tool.v1")
    assert [(row.turn_type, row.tool_use_id, row.text) for row in rows] == [("tool_result", "3c9f1e2a", "14 passed\n")]


def test_a_plan_gives_plan_task_and_body_rows():
    path = ".cursor/plans/p.plan.md"
    data = (b"---\nname: P\noverview: |\n  line one\n  line two\ntodos:\n  - id: a\n    content: 'Do A'\n"
            b"    status: pending\nisProject: true\n---\nBody text.\n")
    rows = drafts(FakeBundle({("cursor-cli.plans", path): data}), path, "cursor_cli.plan.v1")
    assert [row.text for row in rows] == ["plan: P | line one\nline two", "task: Do A | status=pending id=a (plan P)",
                                          "plan field isProject: true", "Body text."]
    assert rows[-1].turn_type == "assistant"


def test_a_call_outside_the_latest_tree_neither_answers_nor_is_left_open_against_the_conversation(tmp_path):
    call = json.dumps({"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "c1", "toolName": "Shell", "args": {"command": "ls"}}]}).encode()
    old_result = json.dumps({"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "c1", "toolName": "Shell", "result": "old"}]}).encode()
    old_call = json.dumps({"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "c0", "toolName": "Read", "args": {}}]}).encode()
    root = node(call)
    meta = {"agentId": SESSION, "latestRootBlobId": hashlib.sha256(root).hexdigest()}
    rows = store_rows(store_db(tmp_path, meta, [call, old_result, old_call, root]))
    parser_rows = [row.text for row in rows if row.text.startswith("parser:")]
    assert parser_rows == ["parser: no result recorded for tool call c1 (Shell)"]
    assert [row.turn_type for row in rows if row.text.startswith("not in the latest tree")] == ["system", "system"]


def test_ai_tracking_summaries_deleted_files_and_commits_with_mixed_time_forms(tmp_path):
    path = tmp_path / "t.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE conversation_summaries (conversationId, title, tldr, overview, summaryBullets, "
                       "model, mode, updatedAt)")
    connection.execute("CREATE TABLE ai_deleted_files (gitPath, composerId, conversationId, model, deletedAt)")
    connection.execute("CREATE VIEW scored_commits AS SELECT 1 AS commitHash")  # a view is never read
    connection.execute("INSERT INTO conversation_summaries VALUES ('c1', 'T', NULL, NULL, NULL, 'm', NULL, "
                       "'2026-11-29T16:40:12Z')")
    connection.execute("INSERT INTO conversation_summaries VALUES ('c2', 'U', 'x', '', '[\"a\",\"b\"]', NULL, 'agent', "
                       "'2026-11-29T16:40:12')")  # no zone: not a time
    connection.execute("INSERT INTO ai_deleted_files VALUES ('a.py', 'k9', NULL, NULL, 1796000350000)")
    connection.commit()
    connection.close()
    name = ".cursor/ai-tracking/ai-code-tracking.db"
    rows = drafts(FakeBundle({("cursor-cli.ai_tracking", name): path.read_bytes()}), name, "cursor_cli.ai_tracking.v1")
    assert [(row.text.split(" (from")[0], row.timestamp_source, row.session_id) for row in rows] == [
        ("session: T", "record", "c1"), ("session: U", "none", "c2"), ("summary: x | a; b", "none", "c2"),
        ("file deleted by the agent: a.py", "record", "k9")]


def test_a_text_line_of_control_characters_is_still_a_row():
    rows = text_rows(b"user:\n\x1c\n")
    assert [row.text for row in rows] == ["empty user text"]
    assert [row.text for row in text_rows(b"\x1c\n")][0].startswith("parser: unparseable record")


def test_which_stores_record_results_is_the_catalogs_word_and_the_parsers():
    """The catalog's tool_results and the parsers' flags say the same of each store (docs/catalog.md)."""
    from aitrail.analyzer.parsers.cursor_cli import chat_store, transcript
    from aitrail.collector import catalog

    stores = {store.id: store.tool_results for store in catalog.load().agent("cursor-cli").stores}
    recorded = {"transcripts": transcript.JSONL_RECORDS_RESULTS,
                "subagent_transcripts": transcript.JSONL_RECORDS_RESULTS,
                "text_transcripts": transcript.TEXT_RECORDS_RESULTS, "chat_stores": chat_store.STORE_RECORDS_RESULTS}
    assert {store: stores[store] == "recorded" for store in recorded} == recorded


# -- budgets: what one file may make the parser hold (docs/agents/cursor-cli.md, Limits) -----------------


def test_a_text_block_over_its_budget_keeps_its_first_lines_and_counts_the_rest(monkeypatch):
    from aitrail.analyzer.parsers.cursor_cli import transcript

    monkeypatch.setattr(transcript, "BLOCK_BUDGET", 3 * (transcript.LINE_COST + 7))  # three lines of seven characters
    text = b"user:\n" + b"".join(b"line %02d\n" % number for number in range(1, 11)) + b"assistant:\nDone.\n"
    rows = text_rows(text)
    assert [(row.turn_type, row.text, row.locator) for row in rows] == [
        ("system", "context: line 01\nline 02\nline 03", "line:2"),
        ("system", f"parser: block over the limit ({transcript.BLOCK_BUDGET} characters held, each line counting "
                   "64 more); 7 lines from line 5 on were counted, not read: the block's row at line:2 holds the text "
                   "before them", "line:5"),
        ("assistant", "Done.", "line:13")]
    assert rows[1].timestamp_source == "none" and rows[1].session_id == SESSION


def test_a_store_over_its_blob_id_budget_reads_the_first_blobs_and_names_the_rest(tmp_path, monkeypatch):
    from aitrail.analyzer.parsers.cursor_cli import chat_store

    first = json.dumps({"role": "user", "content": "first"}).encode()
    second = json.dumps({"role": "assistant", "content": "second"}).encode()
    third = json.dumps({"role": "assistant", "content": "third"}).encode()
    root = node(first, second)
    meta = {"agentId": SESSION, "latestRootBlobId": hashlib.sha256(root).hexdigest(), "createdAt": 1_764_000_000_000}
    connection = sqlite3.connect(tmp_path / "plain.db")  # no index on id: the blobs are read in rowid order
    connection.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    connection.execute("CREATE TABLE blobs (id TEXT, data BLOB)")
    connection.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    connection.executemany("INSERT INTO blobs VALUES (?, ?)",
                           [(hashlib.sha256(blob).hexdigest(), blob) for blob in (root, first, second, third)])
    connection.commit()
    connection.close()
    data = (tmp_path / "plain.db").read_bytes()
    monkeypatch.setattr(chat_store, "BLOB_ID_BUDGET", 2 * (64 + chat_store.ID_COST))  # two ids: root and first
    rows = store_rows(data)
    texts = [row.text for row in rows]
    assert f"parser: blob ids over the limit ({chat_store.BLOB_ID_BUDGET} bytes held, each id costing 120 more than " \
           "its length); 2 blobs from this row on were counted, not read: a blob among them that the tree names is " \
           "reported missing" in texts
    assert [row.locator for row in rows if "blob ids over the limit" in row.text] == ["sqlite:blobs:3"]
    assert [row.text for row in rows if row.turn_type == "user"] == ["first"]
    assert any(f"blob {hashlib.sha256(second).hexdigest()} referenced here is not among the blobs read" in text
               for text in texts)
    assert not any("third" in text for text in texts)


def test_a_tree_with_more_blobs_waiting_than_its_budget_stops_and_reads_the_rest_as_unreached(tmp_path, monkeypatch):
    from aitrail.analyzer.parsers.cursor_cli import chat_store

    messages = [json.dumps({"role": "user", "content": f"prompt {n}"}).encode() for n in range(3)]
    root = node(*messages)
    meta = {"agentId": SESSION, "latestRootBlobId": hashlib.sha256(root).hexdigest(), "createdAt": 1_764_000_000_000}
    data = store_db(tmp_path, meta, [*messages, root])
    monkeypatch.setattr(chat_store, "MAX_WAITING", 2)
    rows = store_rows(data)
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: unparseable record (tree walk stopped: more than 2 blobs waiting to be walked; the blobs not "
        "reached follow)"]
    assert sorted(row.text for row in rows if "prompt" in row.text) == [
        f"not in the latest tree (user): prompt {n}" for n in range(3)]


def test_a_plan_over_its_front_matter_budget_keeps_the_first_entries_and_its_body(monkeypatch):
    from aitrail.analyzer.parsers.cursor_cli import plans

    monkeypatch.setattr(plans, "MAX_FRONT_ENTRIES", 4)
    path = ".cursor/plans/p.plan.md"
    data = (b"---\nname: P\ntodos:\n  - id: a\n    content: A\n  - id: b\n    content: B\n  - id: c\n"
            b"overview: late\n---\nBody text.\n")
    rows = drafts(FakeBundle({("cursor-cli.plans", path): data}), path, "cursor_cli.plan.v1")
    assert [(row.text, row.locator) for row in rows] == [  # name, todos, the first todo's two lines: four entries
        ("plan: P | ", "line:1"), ("task: A | id=a (plan P)", "line:4"),
        ("parser: front matter over the limit (4 fields, todos, todo fields, block lines and problems held); 4 lines "
         "from line 6 on were counted, not read", "line:6"),
        ("Body text.", "line:11")]


def test_a_transcript_over_the_call_id_budget_names_the_calls_it_did_not_hold(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 2)
    calls = [assistant({"type": "tool_use", "id": f"t{n}", "name": "Shell", "input": {}}) for n in range(4)]
    rows = transcript_rows(jsonl(*calls))
    assert [row.tool_use_id for row in rows if row.turn_type == "tool_use"] == ["t0", "t1", "t2", "t3"]
    assert [(row.text.split(";")[0], row.locator) for row in rows if row.text.startswith("parser:")] == [
        ("parser: tool calls over the limit (2 call ids held to pair calls with results)", "line:3/content/0")]
