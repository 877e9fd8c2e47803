"""Goose parsers, one rule per test (docs/agents/goose.md)."""

from __future__ import annotations

import json
import shutil
import time

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, every_output
from tests.fixture_sqlite import rowids_without_wal, sqlite_bytes

CASES = FIXTURES / "goose"
DB = ".local/share/goose/sessions/sessions.db"
LEGACY = ".local/share/goose/sessions/20250325_101320.jsonl"
PERMISSION = ".config/goose/permission.yaml"
CONFIG = ".config/goose/config.yaml"
SCHEMA = (FIXTURES / "goose" / "schema" / "v13-upgraded.sql").read_text()
SESSION = ("INSERT INTO sessions (id, name, working_dir, created_at, updated_at, provider_name, model_config_json, "
           "goose_mode) VALUES ('20260314_3', 'T', '/p', '2026-03-14 08:02:11', '2026-03-14 08:09:40', 'anthropic', "
           "'{\"model_name\":\"m1\"}', 'approve');")


def database(sql: str) -> bytes:
    return sqlite_bytes(sql)


def message(rowid: int, role: str, content, created: int = 1773475340, session: str = "20260314_3",
            metadata: str = '{"userVisible":true,"agentVisible":true}') -> str:
    body = json.dumps(content).replace("'", "''")
    return (f"INSERT INTO messages (id, message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            f"VALUES ({rowid}, 'msg_{rowid}', '{session}', '{role}', '{body}', {created}, '{metadata}');")


def db_rows(sql: str, session: str = SESSION):
    return drafts(FakeBundle({("goose.sessions_db", DB): database(SCHEMA + session + sql)}), DB,
                  "goose.sessions_db.v1")


def request(call_id: str, name: str = "developer__shell", arguments=None) -> dict:
    return {"type": "toolRequest", "id": call_id,
            "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments or {"command": "ls"}}}}


def response(call_id: str, text: str, error: bool = False, bare: bool = False) -> dict:
    items = [{"type": "text", "text": text}]
    value = items if bare else {"content": items, "isError": error}
    return {"type": "toolResponse", "id": call_id, "toolResult": {"status": "success", "value": value}}


# -- sessions.db ----------------------------------------------------------------------------------


def test_a_tool_response_joins_its_request_by_id_and_is_never_a_user_row():
    rows = db_rows(message(1, "assistant", [request("t1"), request("t2", "developer__text_editor")])
                   + message(2, "user", [response("t2", "edited"), response("t1", "a.rs")], 1773475341))
    results = [(row.turn_type, row.tool_use_id, row.tool_name, row.text) for row in rows
               if row.turn_type == "tool_result"]
    assert results == [("tool_result", "t2", "developer__text_editor", "edited"),
                       ("tool_result", "t1", "developer__shell", "a.rs")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_a_request_never_answered_gets_one_no_result_row_per_session():
    rows = db_rows(message(1, "assistant", [request("t1")]))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call t1 (developer__shell)"]


def test_created_timestamp_is_unix_seconds_and_sessions_times_are_sqlite_utc_text():
    rows = db_rows(message(1, "user", [{"type": "text", "text": "hi"}], created=1773475340))
    user = next(row for row in rows if row.turn_type == "user")
    assert user.timestamp_ns == 1773475340 * 1_000_000_000
    session = next(row for row in rows if row.text.startswith("session:"))
    assert session.timestamp_ns == 1773475331 * 1_000_000_000  # '2026-03-14 08:02:11' read as UTC


def test_rfc3339_created_at_of_an_imported_session_is_read_and_other_text_is_not_a_time():
    imported = SESSION.replace("'2026-03-14 08:02:11'", "'2026-03-14T08:02:11.5+00:00'")
    rows = db_rows("", imported)
    assert rows[0].timestamp_ns == 1773475331_500_000_000
    broken = SESSION.replace("'2026-03-14 08:09:40'", "'yesterday'")
    model = next(row for row in db_rows("", broken) if row.text.startswith("model:"))
    assert (model.timestamp_ns, model.timestamp_source) == (None, "none")


def test_declined_and_chat_mode_responses_are_permission_decisions_on_the_call():
    declined = "The user has declined to run this tool. DO NOT attempt to call this tool again."
    skipped = "Let the user know the tool call was skipped in goose chat mode. DO NOT apologize."
    rows = db_rows(message(1, "assistant", [request("t1"), request("t2")])
                   + message(2, "user", [response("t1", declined), response("t2", skipped)], 1773475341))
    decisions = [(row.text, row.tool_name, row.tool_use_id) for row in rows
                 if row.text.startswith("permission decision")]
    assert decisions == [("permission decision: denied", "developer__shell", "t1"),
                         ("permission decision: not run (chat mode skips every tool call)", "developer__shell", "t2")]


def test_the_older_bare_array_result_reads_as_the_call_tool_result_form():
    old = db_rows(message(1, "assistant", [request("t1")]) + message(2, "user", [response("t1", "x", bare=True)]))
    new = db_rows(message(1, "assistant", [request("t1")]) + message(2, "user", [response("t1", "x")]))
    assert [row.text for row in old] == [row.text for row in new]


def test_an_error_result_and_an_invalid_call_say_so():
    invalid = {"type": "toolRequest", "id": "t9", "toolCall": {"status": "error", "error": "bad params"}}
    rows = db_rows(message(1, "assistant", [request("t1"), invalid])
                   + message(2, "user", [response("t1", "denied", error=True),
                                         {"type": "toolResponse", "id": "t9",
                                          "toolResult": {"status": "error", "error": "bad params"}}]))
    texts = [row.text for row in rows if row.turn_type in ("tool_use", "tool_result")]
    assert texts == ['{"command":"ls"}', "invalid tool call: bad params", "[tool error] denied",
                     "[tool error] bad params"]


def test_model_and_project_are_carried_by_every_message_row():
    rows = db_rows(message(1, "user", [{"type": "text", "text": "hi"}]))
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.model, user.project_path, user.session_id) == ("m1", "/p", "20260314_3")


def test_text_hidden_from_the_user_is_context_and_the_continuation_text_marks_a_compaction():
    hidden = '{"userVisible":false,"agentVisible":true}'
    rows = db_rows(message(1, "user", [{"type": "text", "text": "Summary: ..."}], metadata=hidden)
                   + message(2, "assistant", [{"type": "text", "text": "Your context was compacted. The previous"}],
                             metadata=hidden)
                   + message(3, "assistant", [{"type": "text", "text": "for the model",
                                               "annotations": {"audience": ["assistant"]}}]))
    texts = [(row.turn_type, row.text) for row in rows if row.locator.startswith("sqlite:messages")]
    assert texts == [("system", "context (not shown to the user): Summary: ..."),
                     ("system", "compaction: Your context was compacted. The previous"),
                     ("system", "context (not shown to the user): for the model")]


def test_thinking_is_a_thinking_row_and_an_image_is_a_placeholder_never_its_base64():
    payload = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    rows = db_rows(message(1, "assistant", [{"type": "thinking", "thinking": "plan", "signature": "SIGSECRET"},
                                            {"type": "redactedThinking", "data": "OPAQUE"},
                                            {"type": "image", "data": payload, "mimeType": "image/png"}]))
    texts = [(row.turn_type, row.text) for row in rows if row.locator.startswith("sqlite:messages")]
    assert texts[:2] == [("thinking", "plan"), ("thinking", "[redacted thinking: not readable]")]
    assert texts[2][1].startswith("[image image/png")
    assert not [row for row in rows if payload in row.text or "SIGSECRET" in row.text or "OPAQUE" in row.text]


def test_todo_list_recipe_and_tokens_come_from_the_session_row():
    session = SESSION.replace("'approve');", "'approve');") + (
        "UPDATE sessions SET extension_data = '{\"todo.v0\":{\"content\":\"- [ ] ship\"}}', "
        "accumulated_total_tokens = 99, recipe_json = '{\"title\":\"R\"}';")
    texts = [row.text for row in db_rows("", session)]
    assert any(text.startswith("task: - [ ] ship (") for text in texts)
    assert any(text.startswith("tokens generated: model=m1 accumulated_total_tokens=99 ") for text in texts)
    assert 'recipe: {"title":"R"}' in texts


def test_a_database_of_schema_version_5_is_read_with_the_columns_it_has():
    sql = (CASES / "sqlite-v5" / "sql" / "sessions.db.sql").read_text()
    rows = drafts(FakeBundle({("goose.sessions_db", DB): database(sql)}), DB, "goose.sessions_db.v1")
    assert [row.turn_type for row in rows].count("tool_use") == 3
    assert not [row for row in rows if row.text.startswith(("parser:", "model:"))]


def test_newest_rows_only_in_the_wal_are_read():
    """Messages 12 and 13 are in sessions.db-wal only: the file alone lacks them; the golden has them."""
    ids = rowids_without_wal(CASES / "sqlite-current" / "home" / DB, "messages")
    assert ids == list(range(1, 12))
    golden = (CASES / "sqlite-current" / "expected.csv").read_text()
    assert "sqlite:messages:12/content_json/0" in golden and "Running the jwt tests." in golden


def test_a_thread_copy_gives_rows_only_when_its_message_is_gone_and_they_are_secondary():
    copies = ("INSERT INTO threads (id, name, working_dir) VALUES ('th', 'Thread', '/t');"
              "INSERT INTO thread_messages VALUES (1, 'th', '20260314_3', 'msg_1', 'user', "
              "'[{\"type\":\"text\",\"text\":\"kept\"}]', 1773475340, '{}');"
              "INSERT INTO thread_messages VALUES (2, 'th', '20260313_9', 'msg_gone', 'user', "
              "'[{\"type\":\"text\",\"text\":\"recovered\"}]', 1773475000, '{}');")
    for unindexed in ("", "DROP INDEX idx_messages_message_id;"):  # an indexed probe, or the ids read once
        rows = db_rows(message(1, "user", [{"type": "text", "text": "kept"}]) + copies + unindexed)
        copied = [(row.text, row.origin, row.project_path) for row in rows
                  if row.locator.startswith("sqlite:thread_m")]
        assert copied == [("recovered", "secondary", "/t")], unindexed


def test_content_that_is_not_json_is_one_parser_row_and_the_next_message_is_read():
    rows = db_rows("INSERT INTO messages (id, session_id, role, content_json, created_timestamp) VALUES "
                   "(1, '20260314_3', 'user', '[{\"type\":', 1773475340);"
                   + message(2, "user", [{"type": "text", "text": "next"}], 1773475341))
    texts = [row.text for row in rows if row.locator.startswith("sqlite:messages")]
    assert texts[0].startswith("parser: unparseable record (content_json is not JSON") and texts[1] == "next"


def test_sessions_over_their_budget_are_named_and_their_messages_keep_their_session_id(monkeypatch):
    from aitrail.analyzer.formats import sqlite_chat

    monkeypatch.setattr(sqlite_chat, "SESSIONS_HELD_BYTES", 1)
    rows = db_rows(message(1, "user", [{"type": "text", "text": "hi"}]))
    assert [row.text for row in rows if row.text.startswith("parser: sessions over the limit")]
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.session_id, user.project_path) == ("20260314_3", "")


def test_a_view_named_messages_is_not_read():
    rows = drafts(FakeBundle({("goose.sessions_db", DB): database(
        "CREATE TABLE m (x); CREATE VIEW messages AS SELECT * FROM m;")}), DB, "goose.sessions_db.v1")
    assert [row.text for row in rows] == ["parser: unparseable file (sessions.db: no messages table)"]


# -- legacy JSONL ---------------------------------------------------------------------------------


def legacy_rows(data: bytes, path: str = LEGACY):
    return drafts(FakeBundle({("goose.legacy_sessions", path): data}), path, "goose.legacy_session.v1")


def test_the_metadata_line_gives_the_session_and_the_project_of_every_row():
    data = (b'{"working_dir":"/w","description":"d","schedule_id":null,"message_count":1}\n'
            b'{"role":"user","created":1742900000,"content":[{"type":"text","text":"hi"}]}\n')
    rows = legacy_rows(data)
    assert rows[0].text.startswith("session: d (") and rows[0].timestamp_source == "file-mtime"
    assert (rows[1].session_id, rows[1].project_path, rows[1].timestamp_ns) == (
        "20250325_101320", "/w", 1742900000 * 1_000_000_000)


def test_a_first_line_that_is_a_message_is_read_as_one():
    rows = legacy_rows(b'{"role":"user","created":1,"content":[{"type":"text","text":"first"}]}\n')
    assert [(row.turn_type, row.text) for row in rows] == [("user", "first")]


def test_a_legacy_message_gives_the_rows_of_its_database_copy():
    content = [request("t1"), {"type": "text", "text": "ok"}]
    line = json.dumps({"role": "assistant", "created": 1773475340, "content": content}).encode() + b"\n"
    legacy = [(row.turn_type, row.text, row.tool_use_id) for row in legacy_rows(line)
              if not row.text.startswith("parser:")]
    database_rows = [(row.turn_type, row.text, row.tool_use_id) for row in db_rows(message(1, "assistant", content))
                     if row.locator.startswith("sqlite:messages") and not row.text.startswith("parser:")]
    assert legacy == database_rows


def test_a_torn_last_line_is_one_parser_row():
    rows = legacy_rows(b'{"role":"user","created":1,"content":[{"type":"text","text":"a"}]}\n{"role":"us')
    assert rows[-1].text.startswith("parser: unparseable line (torn last line")


# -- settings -------------------------------------------------------------------------------------


def settings_rows(path: str, store: str, parser: str, data: bytes):
    return drafts(FakeBundle({(store, path): data}), path, parser)


def test_each_permission_entry_is_a_permission_setting_naming_its_tool():
    rows = settings_rows(PERMISSION, "goose.permission", "goose.permission.v1",
                         (CASES / "sqlite-current" / "home" / PERMISSION).read_bytes())
    assert [(row.text.split(" (")[0], row.tool_name) for row in rows] == [
        ('permission setting: user.always_allow="developer__text_editor"', "developer__text_editor"),
        ('permission setting: user.never_allow="developer__shell"', "developer__shell"),
        ('permission setting: smart_approve.ask_before="github__create_pull_request"', "github__create_pull_request")]


def test_config_gives_mode_model_and_extensions_and_never_an_extension_env():
    data = (CASES / "sqlite-current" / "home" / CONFIG).read_bytes()
    rows = settings_rows(CONFIG, "goose.config", "goose.config.v1", data)
    texts = [row.text for row in rows]
    assert texts[0].startswith('permission setting: GOOSE_MODE="smart_approve"')
    assert texts[1].startswith("model: claude-sonnet-4-5 (provider=anthropic;")
    assert not [text for text in texts if "ghp_" in text or "server-github" in text]


def test_nested_yaml_aliases_cost_their_text_not_their_expansion():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    data = ("\n".join(lines) + "\nuser:\n  always_allow: *a8\n").encode()
    started = time.monotonic()
    rows = settings_rows(PERMISSION, "goose.permission", "goose.permission.v1", data)
    assert time.monotonic() - started < 5
    assert len(rows) == 1 + 10 + 8  # categories a0..a8 are not mappings; user's 10 entries are lists, not text


# -- credentials ----------------------------------------------------------------------------------

FAKE_SECRETS = (b"ghp_FAKEgooseconfig0000000000000000000", b"sk-ant-FAKE-goose-secrets-0000000000")


def test_secrets_yaml_is_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    from aitrail.analyzer.view.bundle import Bundle

    home = shutil.copytree(CASES / "sqlite-current" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    with Bundle(str(bundle)) as opened:
        paths = sorted(source.path for source in opened.sources)
    assert ".local/share/goose/sessions/sessions.db-wal" in paths
    assert not [path for path in paths if path.endswith("secrets.yaml")]
    outputs = every_output(cli, bundle, tmp_path)
    assert b"developer__shell" in outputs[0] and b"developer__shell" in outputs[1]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret
