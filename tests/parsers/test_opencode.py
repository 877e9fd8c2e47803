"""OpenCode parsers, one rule per test (docs/agents/opencode.md)."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from aitrail.analyzer.parsers.opencode import parse_legacy_storage
from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES
from tests.test_golden import timeline, without_bundle_columns

DATA = ".local/share/opencode"
DB = f"{DATA}/opencode.db"
SESSION = "ses_3f8a61c2dffeRt5Yh7Kq2Wn9Xb"
USER, ASSISTANT = "msg_c9e4a8f1b001Lm3Np5Qr7St9Uv", "msg_c9e4a8f1c005Pp1Qq2Rr3Ss4Tt"
SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT,
    version TEXT, share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
    permission TEXT, time_created INTEGER, time_updated INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER,
    data TEXT);
CREATE TABLE todo (session_id TEXT, content TEXT, status TEXT, priority TEXT, position INTEGER, time_created INTEGER,
    time_updated INTEGER);
CREATE TABLE session_share (session_id TEXT PRIMARY KEY, id TEXT, secret TEXT, url TEXT);
"""
T = 1773050400000


def database(messages: list[tuple[str, dict]], parts: list[tuple[str, str, dict]], version: str = "1.2.10",
             extra: str = "") -> bytes:
    """An opencode.db with one session, the given (id, data) messages and (id, message id, data) parts."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "opencode.db"
        connection = sqlite3.connect(path)
        connection.executescript(SCHEMA + extra)
        connection.execute("INSERT INTO session VALUES (?, 'p1', NULL, 'amber-falcon', '/home/alice/src/app', "
                           "'A title', ?, NULL, NULL, NULL, NULL, NULL, ?, ?, NULL)", (SESSION, version, T, T + 9000))
        for number, (message_id, data) in enumerate(messages):
            connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                               (message_id, SESSION, T + number, T + number, json.dumps(data)))
        for number, (part_id, message_id, data) in enumerate(parts):
            connection.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                               (part_id, message_id, SESSION, T + 50 + number, T + 50 + number, json.dumps(data)))
        connection.commit()
        connection.close()
        return path.read_bytes()


def user(model: str = "claude-sonnet-4-5") -> dict:
    return {"role": "user", "time": {"created": T}, "model": {"providerID": "anthropic", "modelID": model}}


def assistant(model: str = "claude-sonnet-4-5", created: int = T + 100) -> dict:
    return {"role": "assistant", "time": {"created": created}, "modelID": model, "providerID": "anthropic",
            "path": {"cwd": "/home/alice/src/app", "root": "/home/alice/src/app"}}


def tool(status: str, call_id: str = "toolu_01A", **state) -> dict:
    return {"type": "tool", "callID": call_id, "tool": "bash",
            "state": {"status": status, "input": {"command": "rm -rf build"},
                      "time": {"start": T + 200, "end": T + 300}, **state}}


def db_rows(data: bytes, extra: dict | None = None):
    bundle = FakeBundle({("opencode.opencode_db", DB): data, **(extra or {})})
    return drafts(bundle, DB, "opencode.db.v1")


def one_exchange(*assistant_parts: dict) -> bytes:
    parts = [("prt_1", USER, {"type": "text", "text": "clean the build folder"})]
    parts += [(f"prt_{number + 2}", ASSISTANT, part) for number, part in enumerate(assistant_parts)]
    return database([(USER, user()), (ASSISTANT, assistant())], parts)


# -- opencode.db -------------------------------------------------------------------------------------------


def test_a_tool_part_is_a_call_and_a_result_sharing_its_call_id_and_the_result_is_never_a_user_row():
    rows = db_rows(one_exchange(tool("completed", output="removed 12 files")))
    calls = [(row.turn_type, row.tool_use_id, row.text) for row in rows if row.tool_use_id]
    assert calls == [("tool_use", "toolu_01A", '{"command":"rm -rf build"}'),
                     ("tool_result", "toolu_01A", "removed 12 files")]
    assert [row.text for row in rows if row.turn_type == "user"] == ["clean the build folder"]


def test_a_rejected_tool_part_is_a_denied_permission_decision():
    refusal = "The user rejected permission to use this specific tool call."
    feedback = refusal[:-1] + " with the following feedback: keep build/static"
    rule = "The user has specified a rule which prevents you from using this specific tool call. Here are some"
    rows = db_rows(one_exchange(tool("error", "c1", error=refusal), tool("error", "c2", error=feedback),
                                tool("error", "c3", error=rule), tool("error", "c4", error="exit status 1")))
    decisions = [(row.tool_use_id, row.text) for row in rows if row.text.startswith("permission decision:")]
    assert decisions == [("c1", "permission decision: denied"), ("c2", "permission decision: denied with feedback"),
                         ("c3", "permission decision: denied by a permission rule (not asked)")]


def test_reasoning_is_a_thinking_row_never_assistant_text():
    rows = db_rows(one_exchange({"type": "reasoning", "text": "floats are summed first"},
                                {"type": "text", "text": "Fixed."}))
    assert [(row.turn_type, row.text) for row in rows if row.turn_type in ("thinking", "assistant")] == [
        ("thinking", "floats are summed first"), ("assistant", "Fixed.")]


def test_a_tool_part_still_running_gets_the_no_result_row():
    rows = db_rows(one_exchange(tool("running")))
    assert rows[-1].text == "parser: no result recorded for tool call toolu_01A (bash)"
    assert rows[-1].session_id == SESSION and rows[-1].timestamp_ns == (T + 200) * 1_000_000


def test_the_model_column_comes_from_the_message_and_a_change_is_a_model_row():
    data = database([(USER, user("claude-opus-4-1")), (ASSISTANT, assistant("claude-sonnet-4-5")),
                     ("msg_3", assistant("claude-opus-4-1", T + 500))],
                    [("prt_1", USER, {"type": "text", "text": "hi"}),
                     ("prt_2", ASSISTANT, {"type": "text", "text": "a"}),
                     ("prt_3", "msg_3", {"type": "text", "text": "b"})])
    rows = db_rows(data)
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: claude-sonnet-4-5", "model: claude-sonnet-4-5 -> claude-opus-4-1"]
    assert [(row.text, row.model) for row in rows if row.turn_type in ("user", "assistant")] == [
        ("hi", "claude-opus-4-1"), ("a", "claude-sonnet-4-5"), ("b", "claude-opus-4-1")]


def test_synthetic_text_and_unknown_part_types_are_system_rows_naming_them():
    parts = [("prt_1", USER, {"type": "text", "synthetic": True, "text": "file body"}),
             ("prt_2", USER, {"type": "hologram", "x": 1})]
    rows = db_rows(database([(USER, user())], parts))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("system", "synthetic text: file body"), ("system", 'unknown part type hologram: {"type":"hologram","x":1}')]


def test_text_of_a_message_whose_role_is_unknown_is_a_system_row_naming_it():
    rows = db_rows(database([(USER, {"role": "narrator"})], [("prt_1", USER, {"type": "text", "text": "once"})]))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [("system", "text (message role narrator): once")]


def test_messages_of_a_without_rowid_table_stay_apart_and_a_partless_message_says_so():
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "opencode.db"
        connection = sqlite3.connect(path)
        connection.executescript(SCHEMA.replace("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, "
                                                "time_created INTEGER, time_updated INTEGER, data TEXT);",
                                                "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, "
                                                "time_created INTEGER, time_updated INTEGER, data TEXT) "
                                                "WITHOUT ROWID;"))
        for number, (message_id, data) in enumerate([(USER, user()), (ASSISTANT, assistant())]):
            connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                               (message_id, SESSION, T + number, T + number, json.dumps(data)))
        connection.execute("INSERT INTO part VALUES ('prt_2', ?, ?, ?, ?, ?)",
                           (ASSISTANT, SESSION, T, T, json.dumps({"type": "text", "text": "reply"})))
        connection.commit()
        connection.close()
        rows = db_rows(path.read_bytes())
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", f"message without parts: {USER} (user)"), ("system", "model: claude-sonnet-4-5"),
        ("assistant", "reply")]


def altered(data: bytes, *statements: str) -> bytes:
    """The database ``data`` after ``statements`` (a scratch copy is changed, the bytes read back)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "opencode.db"
        path.write_bytes(data)
        connection = sqlite3.connect(path)
        for statement in statements:
            connection.execute(statement)
        connection.commit()
        connection.close()
        return path.read_bytes()


def test_a_message_whose_session_row_is_gone_is_still_read():
    data = database([(USER, user())], [("prt_1", USER, {"type": "text", "text": "kept"})])
    data = altered(data, "DELETE FROM session")
    rows = db_rows(data)
    assert [(row.turn_type, row.text, row.session_id) for row in rows] == [("user", "kept", SESSION)]


def test_a_bad_part_is_a_parser_row_and_the_next_part_is_read():
    data = one_exchange({"type": "text", "text": "after"})
    data = altered(data, "UPDATE part SET data = '{\"type\": \"text\", ' WHERE id = 'prt_1'")
    rows = db_rows(data)
    assert rows[1].text.startswith("parser: unparseable record (not JSON") and rows[1].locator.endswith("/data")
    assert rows[-1].text == "after"


def test_blob_values_where_text_is_expected_are_read_as_text():
    data = one_exchange({"type": "text", "text": "done"})
    data = altered(data, "UPDATE session SET title = X'4120626c6f62', id = X'73657331'",
                   "UPDATE message SET session_id = X'73657331'")
    rows = db_rows(data)
    assert rows[0].text.startswith("session metadata: A blob (") and rows[0].session_id == "ses1"
    assert rows[-1].text == "done" and rows[-1].session_id == "ses1"


def test_share_secrets_in_the_database_are_never_read():
    data = one_exchange({"type": "text", "text": "done"})
    data = altered(data, f"INSERT INTO session_share VALUES ('{SESSION}', 'Hq3k', 'b7e2c9f4-secret', "
                         "'https://opncd.ai/s/Hq3k')")
    assert not [row for row in db_rows(data) if "b7e2c9f4" in row.text]


def test_messages_and_parts_are_read_in_one_query_whatever_the_number_of_messages():
    messages = [(f"msg_{number:03d}", assistant(created=T + number)) for number in range(40)]
    parts = [(f"prt_{number:03d}", f"msg_{number:03d}", {"type": "text", "text": f"step {number}"})
             for number in range(40)]
    bundle = FakeBundle({("opencode.opencode_db", DB): database(messages, parts)})
    statements: list[str] = []
    original = bundle.open_sqlite

    def traced(source):
        connection = original(source)
        connection.set_trace_callback(statements.append)
        return connection

    bundle.open_sqlite = traced
    rows = drafts(bundle, DB, "opencode.db.v1")
    assert [row.text for row in rows if row.turn_type == "assistant"] == [f"step {number}" for number in range(40)]
    assert len([sql for sql in statements if "FROM part" in sql or "JOIN part" in sql]) <= 3  # not one per message


def test_the_newest_rows_only_in_the_wal_are_read(cli, tmp_path: Path):
    case = FIXTURES / "opencode" / "db-only"
    with_wal = timeline(cli, case, tmp_path / "a").decode()
    cut = tmp_path / "cut"
    shutil.copytree(case / "home", cut / "home")
    (cut / "home" / DATA / "opencode.db-wal").unlink()
    without = timeline(cli, cut, tmp_path / "b").decode()
    newest = "Run the test suite, and the slow tests too."
    assert newest in with_wal and newest not in without
    assert "Invoice totals off by a cent (tests)" in with_wal  # the -wal's update of the session row


# -- the storage/ tree -------------------------------------------------------------------------------------

LEGACY_SESSION = f"{DATA}/storage/session/p1/{SESSION}.json"
LEGACY_MESSAGE = f"{DATA}/storage/message/{SESSION}/{ASSISTANT}.json"
LEGACY_PART = f"{DATA}/storage/part/{ASSISTANT}/prt_2.json"


def legacy_files(part: dict | None = None) -> dict:
    message = {"id": ASSISTANT, "sessionID": SESSION, **assistant("claude-sonnet-4-5", T + 100)}
    part = part or {"id": "prt_2", "sessionID": SESSION, "messageID": ASSISTANT, "type": "text", "text": "Fixed."}
    session = {"id": SESSION, "title": "A title", "directory": "/home/alice/src/app", "version": "1.1.3",
               "time": {"created": T}}
    return {("opencode.legacy_sessions", LEGACY_SESSION): json.dumps(session).encode(),
            ("opencode.legacy_sessions", LEGACY_MESSAGE): json.dumps(message).encode(),
            ("opencode.legacy_sessions", LEGACY_PART): json.dumps(part).encode()}


def test_a_legacy_part_takes_its_message_role_model_project_and_time():
    rows = drafts(FakeBundle(legacy_files()), LEGACY_PART, "opencode.legacy_storage.v1")
    assert [(row.turn_type, row.text, row.model, row.session_id, row.project_path, row.timestamp_ns)
            for row in rows] == [("assistant", "Fixed.", "claude-sonnet-4-5", SESSION, "/home/alice/src/app",
                                  (T + 100) * 1_000_000)]


def test_legacy_files_whose_ids_the_database_holds_give_no_conversation_rows():
    files = {**legacy_files(), ("opencode.opencode_db", DB): database(
        [(ASSISTANT, assistant())], [("prt_2", ASSISTANT, {"type": "text", "text": "Fixed."})], version="1.1.3")}
    bundle = FakeBundle(files)
    assert drafts(bundle, LEGACY_PART, "opencode.legacy_storage.v1") == []
    assert drafts(bundle, LEGACY_MESSAGE, "opencode.legacy_storage.v1") == []
    [copy] = drafts(bundle, LEGACY_SESSION, "opencode.legacy_storage.v1")
    assert copy.text.startswith(f"legacy copy: session {SESSION} (A title) is also in opencode.db")


def test_a_session_only_in_the_legacy_tree_is_kept_and_says_it_is_not_in_the_database():
    files = {**legacy_files(), ("opencode.opencode_db", DB): database([], [])}
    other = f"{DATA}/storage/session/p1/ses_gone.json"
    files[("opencode.legacy_sessions", other)] = json.dumps({"id": "ses_gone", "title": "Deleted later"}).encode()
    rows = drafts(FakeBundle(files), other, "opencode.legacy_storage.v1")
    assert rows[0].session_id == "ses_gone"
    assert rows[0].text.endswith("not in opencode.db: deleted after the migration, or never migrated)")


def test_the_database_ids_are_read_once_per_worker():
    files = {**legacy_files(), ("opencode.opencode_db", DB): database([], [])}
    bundle, cache, opened = FakeBundle(files), {}, []
    original = bundle.open_sqlite
    bundle.open_sqlite = lambda source: opened.append(source.path) or original(source)
    for path in (LEGACY_SESSION, LEGACY_MESSAGE, LEGACY_PART):
        list(parse_legacy_storage(ParseContext(bundle, bundle.source(path), cache)))
    assert opened == [DB]


def test_a_torn_legacy_file_is_one_parser_row():
    files = legacy_files()
    files[("opencode.legacy_sessions", LEGACY_PART)] = b'{"id": "prt_2", "type": "reasoning", "text": "A sm'
    rows = drafts(FakeBundle(files), LEGACY_PART, "opencode.legacy_storage.v1")
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (part file is not JSON")
    assert drafts(FakeBundle(files), LEGACY_MESSAGE, "opencode.legacy_storage.v1")[0].text == \
        "model: claude-sonnet-4-5"


def test_a_legacy_running_tool_gets_the_no_result_row():
    part = {"id": "prt_2", "sessionID": SESSION, "messageID": ASSISTANT, **tool("pending", "toolu_9")}
    rows = drafts(FakeBundle(legacy_files(part)), LEGACY_PART, "opencode.legacy_storage.v1")
    assert [row.turn_type for row in rows] == ["tool_use", "system"]
    assert rows[1].text == "parser: no result recorded for tool call toolu_9 (bash)"


def test_the_oldest_layout_copy_that_storage_also_holds_gives_no_rows():
    old_part = f"{DATA}/project/home-alice-src-app/storage/session/part/{SESSION}/{ASSISTANT}/prt_2.json"
    files = legacy_files()
    files[("opencode.project_storage_sessions", old_part)] = files[("opencode.legacy_sessions", LEGACY_PART)]
    assert drafts(FakeBundle(files), old_part, "opencode.project_storage.v1") == []
    del files[("opencode.legacy_sessions", LEGACY_PART)]
    assert [row.text for row in drafts(FakeBundle(files), old_part, "opencode.project_storage.v1")] == ["Fixed."]


def test_a_legacy_todo_gives_task_rows_at_the_file_mtime():
    path = f"{DATA}/storage/todo/{SESSION}.json"
    data = json.dumps([{"content": "Add a cache", "status": "pending", "priority": "high", "id": "1"}, 3]).encode()
    rows = drafts(FakeBundle({("opencode.legacy_todos", path): data}), path, "opencode.legacy_todo.v1")
    assert rows[0].text == "task: Add a cache | status=pending priority=high"
    assert rows[0].timestamp_source == "file-mtime" and rows[1].text.startswith("parser: unparseable record")


# -- TUI state and config ----------------------------------------------------------------------------------

HISTORY = ".local/state/opencode/prompt-history.jsonl"


def test_a_history_prompt_is_written_like_the_sessions_user_row_with_pastes_put_back():
    pasted = {"input": "see [Pasted ~2 lines] ok", "parts": [
        {"type": "text", "text": "a\nb", "source": {"text": {"start": 4, "end": 21, "value": "[Pasted ~2 lines]"}}}]}
    lines = [pasted, {"input": "!ls", "mode": "shell", "parts": []}, {"no": "input"}]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    rows = drafts(FakeBundle({("opencode.prompt_history", HISTORY): data}), HISTORY, "opencode.prompt_history.v1")
    assert [(row.turn_type, row.text, row.locator) for row in rows] == [
        ("user", "see a\nb ok", "line:1"), ("system", "shell prompt: !ls", "line:2"),
        ("system", 'parser: unparseable line (no input text): {"no": "input"}', "line:3")]


def test_a_stashed_prompt_is_a_system_row_at_its_time():
    path = ".local/state/opencode/prompt-stash.jsonl"
    data = json.dumps({"input": "later", "parts": [], "timestamp": T}).encode() + b"\n"
    [row] = drafts(FakeBundle({("opencode.prompt_stash", path): data}), path, "opencode.prompt_stash.v1")
    assert (row.turn_type, row.text, row.timestamp_ns) == ("system", "stashed prompt: later", T * 1_000_000)


def test_config_permission_rules_are_setting_rows_and_provider_keys_never_appear():
    path = ".config/opencode/opencode.json"
    data = json.dumps({"permission": {"bash": {"rm *": "deny"}, "edit": "ask"},
                       "provider": {"x": {"options": {"apiKey": "sk-SECRET"}}},
                       "mcp": {"m": {"headers": {"Authorization": "Bearer SECRET"}}}}).encode()
    rows = drafts(FakeBundle({("opencode.global_config", path): data}), path, "opencode.config.v1")
    assert [row.text for row in rows] == [
        'permission setting: permission.bash={"rm *":"deny"} (from .config/opencode/opencode.json, file mtime)',
        'permission setting: permission.edit="ask" (from .config/opencode/opencode.json, file mtime)']
    assert not [row for row in rows if "SECRET" in row.text]


def test_no_credential_share_secret_or_account_value_reaches_a_golden_timeline():
    secrets = ("b7e2c9f4-1a6d-4e8b-9c3f-5d0a2e7b4c1f", "e4a1d8c3-7b2f-4a9e-8d5c-1f6b3a0e9c7d", "oc_at_4Jm9",
               "oc_rt_8Hd2", "alice@example.com", "sk-ant-", "sk-or-v1-", "lin_api_", "Bearer")
    for case in ("secrets-present", "config-permissions"):
        with open(FIXTURES / "opencode" / case / "expected.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert rows
        for row in rows:
            assert not [secret for secret in secrets if secret in "".join(row.values())], (case, row["locator"])
            assert not row["source"].endswith("auth.json") and "session_share" not in row["source"]


def test_a_migrated_home_gives_the_same_timeline_with_one_or_two_workers(cli, tmp_path: Path):
    """Each worker builds the database ids and the storage index itself (ctx.cached): the rows must not differ."""
    case = FIXTURES / "opencode" / "migrated"
    one = timeline(cli, case, tmp_path / "one", "--jobs", "1", name="one.csv")
    two = timeline(cli, case, tmp_path / "two", "--jobs", "2", name="two.csv")
    # two collections: their bundle digests (the last column) differ, the rows must not
    one = without_bundle_columns(one, tmp_path / "one" / "case.tar.zst")
    assert one == without_bundle_columns(two, tmp_path / "two" / "case.tar.zst")
    rows = list(csv.DictReader(one.decode().splitlines()))
    prompts = [row["session_id"] for row in rows if row["turn_type"] == "user"]
    assert sorted(prompts) == sorted(set(prompts))  # each session's one prompt once: the migrated copy adds none


# -- budgets (docs/agents/opencode.md, Bad-line rows) -------------------------------------------------------


def test_sessions_past_the_held_budget_are_counted_and_their_messages_read_without_their_directory(monkeypatch):
    from aitrail.analyzer.parsers.opencode import database as module

    monkeypatch.setattr(module, "SESSIONS_HELD_BYTES", 300)  # the first session (by time) costs 249: ses_2 does not fit
    later = ("INSERT INTO session (id, directory, title, version, time_created) VALUES "
             f"('ses_2', '/home/bob/other', 'Later', '1.1.0', {T + 1000});"
             f"INSERT INTO message VALUES ('msg_2', 'ses_2', {T + 1001}, {T + 1001}, "
             "'{\"role\": \"user\", \"time\": {\"created\": " + str(T + 1001) + "}}');"
             f"INSERT INTO part VALUES ('prt_9', 'msg_2', 'ses_2', {T + 1002}, {T + 1002}, "
             "'{\"type\": \"text\", \"text\": \"and this\"}');")
    rows = db_rows(database([(USER, user())], [("prt_1", USER, {"type": "text", "text": "clean up"})], extra=later))
    texts = [(row.text, row.session_id, row.project_path) for row in rows if row.turn_type == "user"]
    assert texts == [("and this", "ses_2", ""), ("clean up", SESSION, "/home/alice/src/app")]
    [limit] = [row for row in rows if "over the limit" in row.text]
    assert limit.text.startswith("parser: sessions over the limit (300 bytes of session ids and directories held")
    assert "(1 in all)" in limit.text and (limit.locator, limit.timestamp_source) == ("sqlite:session:1", "none")
    assert [row.text for row in rows].index(limit.text) == 2  # after the session rows, before the messages


def test_a_sessions_calls_past_the_call_budget_are_written_and_counted_not_held(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    rows = db_rows(one_exchange(tool("running", "c1"), tool("running", "c2"), {"type": "text", "text": "Stopped."}))
    notes = [(row.text, row.locator) for row in rows if row.text.startswith("parser:")]
    assert notes[0] == ("parser: no result recorded for tool call c1 (bash)", "sqlite:part:2")
    assert notes[1][0].startswith("parser: tool calls over the limit (1 call ids") and "(1 in all)" in notes[1][0]
    assert notes[1][1] == "sqlite:part:3" and len(notes) == 2 and "Stopped." in [row.text for row in rows]


def test_of_the_database_ids_only_those_the_storage_tree_names_are_held():
    from aitrail.analyzer.parsers.opencode.storage import database_copies

    files = {**legacy_files(), ("opencode.opencode_db", DB): one_exchange(tool("completed", output="x"))}
    bundle = FakeBundle(files)
    held = database_copies(ParseContext(bundle, bundle.source(LEGACY_PART), {}))
    assert held == {SESSION, ASSISTANT, "prt_2"}  # not the user message, prt_1 or prt_3 the tree has no file for
