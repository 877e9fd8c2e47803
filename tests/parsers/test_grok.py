"""Grok parsers (Grok Build and grok-dev), one rule per test (docs/agents/grok.md)."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.fixture_sqlite import sqlite_bytes

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "grok"
PROJECT = ".grok/sessions/%2Fhome%2Falice%2Fsrc%2Facme-api"
SESSION = "01981c3a-6a10-7b22-9c33-4d445e556f60"
CHAT = f"{PROJECT}/{SESSION}/chat_history.jsonl"
HISTORY = f"{PROJECT}/prompt_history.jsonl"
SEARCH = ".grok/sessions/session_search.sqlite"
DB = ".grok/grok.db"


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def chat_rows(data: bytes):
    return drafts(FakeBundle({("grok.chat_history", CHAT): data}), CHAT, "grok.chat_history.v1")


# -- chat_history.jsonl ---------------------------------------------------------------------------


def test_a_tool_result_is_never_a_user_row_and_joins_its_call_by_id():
    rows = chat_rows(jsonl(
        {"type": "assistant", "content": "", "model_id": "grok-4",
         "tool_calls": [{"id": "c1", "function": {"name": "grep", "arguments": "{}"}},
                        {"id": "c2", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"type": "tool_result", "tool_call_id": "c2", "content": "file text"},
        {"type": "tool_result", "tool_call_id": "c1", "content": "match"},
    ))
    results = [(row.turn_type, row.tool_use_id, row.tool_name) for row in rows if row.turn_type == "tool_result"]
    assert results == [("tool_result", "c2", "read_file"), ("tool_result", "c1", "grep")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_a_call_without_its_result_gets_one_no_result_row():
    rows = chat_rows(jsonl({"type": "assistant", "tool_calls": [{"id": "c9", "function": {"name": "bash"}}]}))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call c9 (bash)"]


def test_injected_project_instructions_are_system_rows_not_user_rows():
    rows = chat_rows(jsonl({"type": "user", "content": "Follow AGENTS.md", "synthetic_reason": "project_instructions"},
                           {"type": "user", "content": "fix the bug"}))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "injected context (project_instructions): Follow AGENTS.md"), ("user", "fix the bug")]


def test_reasoning_summary_is_thinking_and_encrypted_content_is_never_shown():
    rows = chat_rows(jsonl({"type": "reasoning", "summary": [{"type": "summary_text", "text": "check pool"}],
                            "encrypted_content": "SECRETBLOB"},
                           {"type": "reasoning", "encrypted_content": "SECRETBLOB2"}))
    assert [row.turn_type for row in rows] == ["thinking", "thinking"]
    assert rows[0].text == "check pool"
    assert not [row for row in rows if "SECRETBLOB" in row.text]


def test_model_id_fills_the_model_column_and_a_change_is_a_model_row():
    rows = chat_rows(jsonl({"type": "assistant", "content": "a", "model_id": "m1"},
                           {"type": "assistant", "content": "b", "model_id": "m1"},
                           {"type": "assistant", "content": "c", "model_id": "m2"}))
    assert [row.text for row in rows if row.text.startswith("model:")] == ["model: m1", "model: m1 -> m2"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["m1", "m1", "m2"]


def test_lines_with_a_nanosecond_time_keep_it_and_lines_without_take_the_file_mtime():
    rows = chat_rows(jsonl({"type": "user", "content": "a", "timestamp": "2026-07-02T09:14:05.120384512Z"},
                           {"type": "user", "content": "b"}))
    assert (rows[0].timestamp_ns % 1_000_000_000, rows[0].timestamp_source) == (120384512, "record")
    assert (rows[1].timestamp_ns, rows[1].timestamp_source) == (1_700_000_000_000_000_000, "file-mtime")


def test_a_time_without_a_zone_is_not_a_time():
    rows = chat_rows(jsonl({"type": "user", "content": "a", "timestamp": "2026-07-02T09:14:05.120"}))
    assert rows[0].timestamp_source == "file-mtime"


def test_project_path_is_the_url_decoded_directory_and_session_the_session_directory():
    row = chat_rows(jsonl({"type": "user", "content": "a"}))[0]
    assert (row.project_path, row.session_id) == ("/home/alice/src/acme-api", SESSION)


def test_the_role_discriminator_and_the_tool_use_spelling_are_read():
    rows = chat_rows(jsonl({"role": "assistant", "content": "hi"},
                           {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "x"}},
                           {"type": "tool_result", "tool_call_id": "t1", "content": "y"}))
    assert [(row.turn_type, row.tool_use_id) for row in rows] == [("assistant", ""), ("tool_use", "t1"),
                                                                  ("tool_result", "t1")]


def test_an_unknown_record_type_is_a_system_row_naming_it():
    rows = chat_rows(jsonl({"type": "checkpoint", "turn": 2}))
    assert rows[0].turn_type == "system" and rows[0].text.startswith("entry checkpoint: ")


def test_torn_last_line_is_one_parser_row_and_the_complete_lines_are_read():
    rows = chat_rows(jsonl({"type": "user", "content": "first"}) + b'{"type":"assistant","content":"cut')
    assert [row.turn_type for row in rows] == ["user", "system"]
    assert rows[1].text.startswith("parser: unparseable line (torn last line") and rows[1].locator == "line:2"


# -- prompt_history.jsonl, summary.json, sub-agents ------------------------------------------------


def history_rows(*records):
    return drafts(FakeBundle({("grok.prompt_history", HISTORY): jsonl(*records)}), HISTORY, "grok.prompt_history.v1")


def test_a_prompt_is_written_as_the_chat_user_row_so_repeats_can_be_dropped():
    rows = history_rows({"timestamp": "2026-07-02T09:14:05.120384512Z", "session_id": SESSION,
                         "prompt": "fix the bug", "is_bash": False})
    primary = chat_rows(jsonl({"type": "user", "content": "fix the bug"}))
    assert (rows[0].turn_type, rows[0].text) == (primary[0].turn_type, primary[0].text)
    assert (rows[0].session_id, rows[0].project_path) == (SESSION, "/home/alice/src/acme-api")


def test_is_bash_is_kept_in_the_row():
    rows = history_rows({"session_id": "s", "prompt": "ls -la", "is_bash": True})
    assert rows[0].text == "shell command (is_bash): ls -la"


def test_secondary_repeats_are_dropped_and_unique_prompts_kept_in_the_golden():
    with open(FIXTURES / "prompt-history" / "expected.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    secondary = [row["text"] for row in rows if row["origin"] == "secondary"]
    assert "The login endpoint times out under load. Find the cause." not in secondary
    assert "Delete the old staging credentials from config/ and rotate the keys." in secondary
    assert [row["text"] for row in rows].count("The login endpoint times out under load. Find the cause.") == 1


def test_summary_git_remote_with_a_token_appears_in_no_row():
    path = f"{PROJECT}/{SESSION}/summary.json"
    document = {"id": SESSION, "cwd": "/home/alice/src/acme-api", "generated_title": "t",
                "git": {"branch": "main", "remote_url": "https://x:ghp_TOKEN123@github.com/a/b.git"}}
    rows = drafts(FakeBundle({("grok.session_summary", path): json.dumps(document).encode()}), path,
                  "grok.session_summary.v1")
    assert rows[0].text == "session: t (cwd=/home/alice/src/acme-api)" and rows[0].git_branch == "main"
    assert not [row for row in rows if "ghp_TOKEN123" in row.text]


def test_a_subagent_prompt_is_a_system_row_not_a_user_row():
    path = f"{PROJECT}/{SESSION}/subagents/x/meta.json"
    document = {"parent_session_id": SESSION, "subagent_type": "explore", "description": "d", "prompt": "look",
                "started_at": "2026-07-02T09:20:00Z", "effective_model_id": "grok-4"}
    rows = drafts(FakeBundle({("grok.subagents", path): json.dumps(document).encode()}), path,
                  "grok.subagent_meta.v1")
    assert [row.turn_type for row in rows] == ["system", "system"]
    assert rows[1].text == "subagent prompt: look" and rows[1].model == "grok-4"


# -- session_search.sqlite ------------------------------------------------------------------------


def database(sql: str) -> bytes:
    return sqlite_bytes(sql)


FTS = ("CREATE VIRTUAL TABLE session_docs USING fts5(session_id UNINDEXED, cwd UNINDEXED, updated_at UNINDEXED, "
       "title, content, content_hash UNINDEXED, last_indexed_offset UNINDEXED);")


def search_rows(sql: str, chat: bool = False):
    files = {("grok.session_search", SEARCH): database(sql)}
    if chat:
        files[("grok.chat_history", CHAT)] = jsonl({"type": "user", "content": "a"})
    return drafts(FakeBundle(files), SEARCH, "grok.session_search.v1")


def test_the_fts5_index_is_read_from_its_content_table_and_a_gone_session_gives_its_text():
    rows = search_rows(FTS + f"INSERT INTO session_docs VALUES ('{SESSION}', '/p', 1782983650, 'Title', "
                             "'full text', 'h', 1);")
    assert rows[0].text == "session: Title (cwd=/p)" and rows[0].locator == "sqlite:session_docs_content:1/title"
    assert rows[1].text.endswith("not in the bundle): full text")
    assert (rows[0].timestamp_ns, rows[0].timestamp_source) == (1782983650 * 1_000_000_000, "index")


def test_a_session_whose_transcript_is_in_the_bundle_is_not_doubled_by_the_index():
    rows = search_rows(FTS + f"INSERT INTO session_docs VALUES ('{SESSION}', '/p', 1, 'Title', 'full text', 'h', 1);",
                       chat=True)
    assert [row.text for row in rows] == ["session: Title (cwd=/p)"]


def test_a_contentless_index_is_one_parser_row():
    rows = search_rows("CREATE VIRTUAL TABLE session_docs USING fts5(title, content, content='');")
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (session_search.sqlite: session_docs "
                                                      "keeps no content table")


# -- grok.db (grok-dev) ---------------------------------------------------------------------------

SCHEMA = (FIXTURES / "grok-dev-db" / "sql" / "grok.db.sql").read_text().split("INSERT INTO workspaces")[0]
SESSION_ROW = ("INSERT INTO workspaces VALUES ('w', '/p', '/p', '/p', 'p', '2026-07-02T09:00:00.000Z');"
               "INSERT INTO sessions VALUES ('s1', 'w', 'T', NULL, NULL, NULL, 'grok-4', 'agent', '/p', '/p', "
               "'active', '2026-07-02T09:00:00.000Z', '2026-07-02T09:00:00.000Z');")


def message(seq: int, role: str, content) -> str:
    body = json.dumps({"role": role, "content": content}).replace("'", "''")
    return f"INSERT INTO messages VALUES ('s1', {seq}, '{role}', '{body}', '2026-07-02T09:00:0{seq}.000Z');"


CALL = {"type": "tool-call", "toolCallId": "k1", "toolName": "bash", "input": {"command": "ls"}}
RESULT = {"type": "tool-result", "toolCallId": "k1", "toolName": "bash", "output": {"type": "text", "value": "a.py"}}
STORED = ("INSERT INTO tool_calls VALUES (1, 's1', 1, 'k1', 'bash', '{\"command\":\"ls\"}', 'completed', "
          "'2026-07-02T09:00:01.000Z', NULL);"
          "INSERT INTO tool_results VALUES (1, 1, 'text', '\"a.py\"', 1, '2026-07-02T09:00:02.000Z');")


def db_rows(sql: str):
    return drafts(FakeBundle({("grok.dev_db", DB): database(SCHEMA + SESSION_ROW + sql)}), DB, "grok.dev_db.v1")


def test_a_call_stored_twice_is_one_tool_use_and_one_tool_result_row():
    rows = db_rows(message(1, "assistant", [CALL]) + message(2, "tool", [RESULT]) + STORED)
    assert [(row.turn_type, row.tool_use_id) for row in rows if row.tool_use_id] == [
        ("tool_use", "k1"), ("tool_result", "k1")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_a_call_whose_messages_are_lost_is_given_once_from_the_tool_tables():
    rows = db_rows(STORED)
    assert [(row.turn_type, row.locator) for row in rows if row.tool_use_id] == [
        ("tool_use", "sqlite:tool_calls:1"), ("tool_result", "sqlite:tool_results:1")]


def test_a_result_whose_call_message_is_lost_takes_its_call_from_tool_calls():
    rows = db_rows(message(2, "tool", [RESULT]) + STORED)
    assert [(row.turn_type, row.locator) for row in rows if row.tool_use_id] == [
        ("tool_use", "sqlite:tool_calls:1"), ("tool_result", "sqlite:messages:1/0")]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_dev_call_never_answered_gets_the_no_result_row():
    rows = db_rows(message(1, "assistant", [CALL]))
    assert rows[-1].text == "parser: no result recorded for tool call k1 (bash)"


def test_a_message_that_is_not_json_is_one_parser_row_and_the_rest_is_read():
    rows = db_rows("INSERT INTO messages VALUES ('s1', 0, 'user', '{broken', '2026-07-02T09:00:00.000Z');"
                   + message(1, "user", "hello"))
    assert [row.turn_type for row in rows[-2:]] == ["system", "user"]
    assert rows[-2].text.startswith("parser: unparseable record (message_json is not JSON")


def test_newest_rows_only_in_the_wal_are_read():
    """The fixture's seq 4-7 exist only in grok.db-wal: the database file alone lacks them; the golden has them."""
    folder = Path(tempfile.mkdtemp())
    try:
        shutil.copy(FIXTURES / "grok-dev-db" / "home" / ".grok" / "grok.db", folder / "grok.db")
        connection = sqlite3.connect(folder / "grok.db")
        seqs = [seq for (seq,) in connection.execute("SELECT seq FROM messages ORDER BY seq")]
        connection.close()
    finally:
        shutil.rmtree(folder)
    assert seqs == [0, 1, 2, 3]
    golden = (FIXTURES / "grok-dev-db" / "expected.csv").read_text()
    assert "Do it, then run the login tests." in golden and "sqlite:messages:8/0" in golden


# -- grok-dev side files and credentials -----------------------------------------------------------


def test_no_credential_value_in_any_row():
    secret = "ghp_FAKEsandboxsecret000000000000000000"
    delegation = {"id": "d", "description": "x", "prompt": "p", "cwd": "/p", "model": "m",
                  "sandboxSettings": {"secrets": [{"name": "GITHUB_TOKEN", "value": secret}]},
                  "startedAt": "2026-07-02T10:00:00Z"}
    path = ".grok/delegations/p-0123456789/d.json"
    rows = drafts(FakeBundle({("grok.dev_delegations", path): json.dumps(delegation).encode()}), path,
                  "grok.dev_delegation.v1")
    assert rows and not [row for row in rows if secret in row.text or "GITHUB_TOKEN" in row.text]
    for case in FIXTURES.iterdir():
        if (case / "expected.csv").is_file():
            text = (case / "expected.csv").read_text()
            assert "ghp_" not in text and "x-access-token" not in text, case.name


def test_user_settings_is_never_collected():
    import yaml

    catalog = yaml.safe_load((Path(__file__).resolve().parents[2] / "catalog" / "grok.yaml").read_text())
    stores = {store["id"]: store for store in catalog["stores"]}
    assert stores["dev_user_settings"]["include"] == ["user-settings.json"]
    assert stores["dev_user_settings"]["collect"] == "never"
    assert stores["auth"]["collect"] == "never"


def test_workspace_trust_is_a_permission_setting_per_folder():
    path = ".grok/workspace-trust.json"
    entry = {"sandboxMode": "shuru", "updatedAt": "2026-07-02T09:00:00Z"}
    document = {"version": 1, "workspaces": {"/home/alice/x": entry, "/bad": "nope"}}
    rows = drafts(FakeBundle({("grok.dev_workspace_trust", path): json.dumps(document).encode()}), path,
                  "grok.dev_workspace_trust.v1")
    assert rows[0].text == 'permission setting: sandboxMode="shuru" (from workspace-trust.json, for /home/alice/x)'
    assert rows[1].text.startswith("parser: unparseable record")


def test_collection_skips_the_credential_files_and_keeps_the_wal(cli, tmp_path):
    """user-settings.json (API key) and auth.json are not in the bundle; grok.db's -wal is, beside it."""
    from aitrail.analyzer.view.bundle import Bundle

    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "grok-dev-db" / "home", home)
    settings = {"apiKey": "xai-FAKEapikey0000", "defaultModel": "m"}
    (home / ".grok" / "user-settings.json").write_text(json.dumps(settings))
    (home / ".grok" / "auth.json").write_text(json.dumps({"access_token": "FAKEaccess"}))
    bundle_path = tmp_path / "grok.bundle"
    result = cli("collect", "--home", home, "-o", bundle_path, "--quiet")
    assert result.exit_code == 0, result.output
    with Bundle(str(bundle_path)) as bundle:
        paths = sorted(source.path for source in bundle.sources)
    assert ".grok/grok.db" in paths and ".grok/grok.db-wal" in paths
    assert not [path for path in paths if path.endswith(("user-settings.json", "auth.json"))]


def test_the_ordinary_session_docs_table_of_1_0_25_is_read_beside_its_fts_index():
    rows = search_rows("CREATE TABLE session_docs (session_id TEXT, cwd TEXT, updated_at INTEGER, title TEXT, "
                       "content TEXT, content_hash TEXT, last_indexed_offset INTEGER);"
                       "CREATE VIRTUAL TABLE session_docs_fts USING fts5(title, content, content='session_docs');"
                       f"INSERT INTO session_docs VALUES ('{SESSION}', '/p', 1, 'Title', 'text', 'h', 1);")
    assert [(row.text, row.locator) for row in rows] == [
        ("session: Title (cwd=/p)", "sqlite:session_docs:1/title"),
        ("session content (from session_search.sqlite; the session's chat_history.jsonl is not in the bundle): text",
         "sqlite:session_docs:1/content")]


def test_an_interrupted_prior_turn_is_a_row_after_the_prompt():
    rows = chat_rows(jsonl({"type": "user", "content": "go on", "prompt_index": 1, "prior_turn_interrupt": True}))
    assert [row.turn_type for row in rows] == ["user", "system"] and rows[1].text.startswith("interrupted: ")


def test_a_backend_tool_call_is_named_by_its_kind_and_needs_no_result():
    rows = chat_rows(jsonl({"type": "backend_tool_call", "kind": "web_search"}))
    assert [(row.turn_type, row.tool_name, row.tool_use_id) for row in rows] == [("tool_use", "web_search", "")]


def test_a_backend_tool_call_is_named_by_its_tool_type_keyed_by_its_id_and_carries_its_own_result():
    # Grok Build writes BackendToolCallItem{kind: BackendToolKind} tagged by tool_type
    # (xai-org/grok-build crates/codegen/xai-grok-sampling-types/src/conversation.rs)
    rows = chat_rows(jsonl({"type": "backend_tool_call", "kind": {
        "tool_type": "web_search", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "grok build", "sources": [{"type": "url", "url": "https://x.ai/a"}]}}}))
    assert [(row.turn_type, row.tool_name, row.tool_use_id) for row in rows] == [
        ("tool_use", "web_search", "ws_1"), ("tool_result", "web_search", "ws_1")]
    assert rows[0].text == '{"action":{"type":"search","query":"grok build"}}'
    assert rows[1].text == '{"status":"completed","sources":[{"type":"url","url":"https://x.ai/a"}]}'


def test_a_backend_tool_type_that_is_not_a_short_string_never_lands_in_the_tool_name():
    rows = chat_rows(jsonl({"type": "backend_tool_call", "kind": {"tool_type": {"nested": "x" * 50}, "id": ["a"]}}))
    assert {(row.tool_name, row.tool_use_id) for row in rows} == {("backend_tool_call", "")}


def test_an_image_part_is_a_placeholder_never_its_base64():
    payload = "QUJD" * 1000  # 3000 bytes
    rows = chat_rows(jsonl(
        {"type": "user", "content": [{"type": "text", "text": "what is wrong here?"},
                                     {"type": "image", "url": f"data:image/png;base64,{payload}"}]},
        {"type": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{}"}]},
        {"type": "tool_result", "tool_call_id": "c1", "content": "Image file a.png",
         "images": [{"type": "image", "url": "https://example.com/a.png"}]},
    ))
    assert rows[0].text == "what is wrong here?\n[image image/png, 3000 bytes]"
    assert [row.text for row in rows if row.turn_type == "tool_result"] == [
        "Image file a.png\n[image https://example.com/a.png]"]
    assert not [row for row in rows if "QUJD" in row.text]


def test_a_tool_use_line_whose_content_is_a_text_block_shows_the_text():
    rows = chat_rows(jsonl({"type": "tool_use", "content": [{"type": "text", "text": "running git log -3"}]}))
    assert [(row.turn_type, row.text) for row in rows] == [("tool_use", "running git log -3")]


# -- budgets: what one file may make the parser hold (docs/agents/grok.md, Limits) --------------------


def test_a_chat_over_the_call_id_budget_names_the_calls_it_did_not_hold(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    rows = chat_rows(jsonl({"type": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "bash"}},
                                                                 {"id": "c2", "function": {"name": "bash"}}]},
                           {"type": "tool_result", "tool_call_id": "c1", "content": "ok"}))
    assert [(row.text.split(";")[0], row.locator) for row in rows if row.text.startswith("parser:")] == [
        ("parser: tool calls over the limit (1 call ids held to pair calls with results)", "line:1/tool_calls/1")]


SECOND_SESSION = ("INSERT INTO sessions VALUES ('s2', 'w', 'U', NULL, NULL, NULL, 'grok-4', 'agent', '/q', '/q', "
                  "'active', '2026-07-02T09:00:00.000Z', '2026-07-02T09:00:00.000Z');"
                  "INSERT INTO messages VALUES ('s2', 0, 'user', '{\"role\":\"user\",\"content\":\"hi\"}', "
                  "'2026-07-02T09:00:05.000Z');")


def test_sessions_over_their_budget_keep_their_own_row_and_name_what_later_rows_lack(monkeypatch):
    from aitrail.analyzer.parsers.grok import dev_db

    monkeypatch.setattr(dev_db, "SESSIONS_BUDGET", len("s1") + len("/p") + dev_db.ENTRY_COST)
    rows = db_rows(SECOND_SESSION)
    assert [(row.text.split(" (")[0], row.session_id, row.project_path) for row in rows] == [
        ("session: T", "s1", "/p"), ("model: grok-4", "s1", "/p"), ("session: U", "s2", "/q"),
        ("model: grok-4", "s2", "/q"), ("parser: sessions over the limit", "", ""), ("hi", "s2", "")]
    assert rows[4].locator == "sqlite:sessions:2" and rows[4].text.endswith(
        "1 from this row on were counted, not held: the later sessions' messages, calls and events carry no "
        "project_path (their session: rows still do)")


def test_stored_calls_over_their_budget_give_a_result_without_its_call_before_it(monkeypatch):
    from aitrail.analyzer.parsers.grok import dev_db

    monkeypatch.setattr(dev_db, "STORED_CALLS_BUDGET", len("s1\0k1") + dev_db.ENTRY_COST)  # k1 held, k2 not
    second = ("INSERT INTO tool_calls VALUES (2, 's1', 3, 'k2', 'bash', '{}', 'completed', '2026-07-02T09:00:03.000Z', "
              "NULL);")
    rows = db_rows(message(2, "tool", [RESULT]) + message(4, "tool", [{**RESULT, "toolCallId": "k2"}]) + STORED
                   + second)
    assert [(row.turn_type, row.tool_use_id, row.locator) for row in rows if row.tool_use_id] == [
        ("tool_use", "k1", "sqlite:tool_calls:1"), ("tool_result", "k1", "sqlite:messages:1/0"),
        ("tool_result", "k2", "sqlite:messages:2/0"), ("system", "k2", "sqlite:messages:2/0"),
        ("tool_use", "k2", "sqlite:tool_calls:2")]
    assert [(row.text.split(";")[0], row.locator) for row in rows if row.text.startswith("parser:")] == [
        (f"parser: tool_calls ids over the limit ({dev_db.STORED_CALLS_BUDGET} bytes held, each entry costing 128 "
         "more than its text)", "sqlite:tool_calls:2"),
        ("parser: tool result for bash with no tool call before it", "sqlite:messages:2/0")]


def test_message_models_over_their_budget_leave_the_later_messages_without_one(monkeypatch):
    from aitrail.analyzer.parsers.grok import dev_db

    usage = "".join(f"INSERT INTO usage_events (session_id, message_seq, source, model, created_at) VALUES "
                    f"('s1', {seq}, 'message', 'grok-{seq}', '2026-07-02T09:00:0{seq}.000Z');" for seq in (1, 2))
    monkeypatch.setattr(dev_db, "MODELS_BUDGET", len("s1") + len("grok-1") + dev_db.ENTRY_COST)
    rows = db_rows(message(1, "assistant", "one") + message(2, "assistant", "two") + usage)
    assert [(row.text, row.model) for row in rows if row.turn_type == "assistant"] == [("one", "grok-1"), ("two", "")]
    assert [row.locator for row in rows if row.text.startswith("parser: usage_events models over the limit")] == [
        "sqlite:usage_events:2"]


def test_answered_ids_over_their_budget_may_give_a_result_twice(monkeypatch):
    from aitrail.analyzer.parsers.grok import dev_db

    monkeypatch.setattr(dev_db, "ANSWERED_BUDGET", 0)
    rows = db_rows(message(1, "assistant", [CALL]) + message(2, "tool", [RESULT]) + STORED)
    assert [(row.turn_type, row.locator) for row in rows if row.tool_use_id] == [
        ("tool_use", "sqlite:messages:1/0"), ("tool_result", "sqlite:messages:2/0"),
        ("tool_result", "sqlite:tool_results:1")]
    assert [row.text.split(";")[0] for row in rows if row.text.startswith("parser:")] == [
        "parser: answered call ids over the limit (0 bytes held, each entry costing 128 more than its text)"]
