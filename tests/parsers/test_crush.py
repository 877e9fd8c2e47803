"""Crush parsers, one rule per test (docs/agents/crush.md)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES
from tests.fixture_sqlite import sqlite_bytes

DB = ".crush/crush.db"
FIRST_SCHEMA = (FIXTURES / "crush" / "schema" / "crush-2025-05.sql").read_text()
SCHEMA = FIRST_SCHEMA + (FIXTURES / "crush" / "schema" / "crush-2026-migrations.sql").read_text()
T0 = 1781082000  # 2026-06-10T09:00:00Z, in seconds as Crush writes it


def database(*statements: str, schema: str = SCHEMA) -> bytes:
    """The bytes of a crush.db built from Crush's schema and ``statements``."""
    return sqlite_bytes(schema + "\n".join(statements))


def session(session_id: str = "s1", parent: str | None = None, created: int = T0, **columns) -> str:
    values = {"id": session_id, "parent_session_id": parent, "title": "t", "updated_at": created + 60,
              "created_at": created, **columns}
    names = ", ".join(values)
    return f"INSERT INTO sessions ({names}) VALUES ({', '.join(_sql(value) for value in values.values())});"


def message(message_id: str, role: str, parts: list, session_id: str = "s1", created: int = T0, **columns) -> str:
    values = {"id": message_id, "session_id": session_id, "role": role,
              "parts": json.dumps([{"type": kind, "data": data} for kind, data in parts]),
              "created_at": created, "updated_at": created, **columns}
    names = ", ".join(values)
    return f"INSERT INTO messages ({names}) VALUES ({', '.join(_sql(value) for value in values.values())});"


def _sql(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def rows(data: bytes, path: str = DB, store: str = "crush.crush_db", parser: str = "crush.db.v1"):
    return drafts(FakeBundle({(store, path): data}), path, parser)


def texts(found, turn: str | None = None) -> list[str]:
    return [row.text for row in found if turn is None or row.turn_type == turn]


def call(call_id: str, name: str, arguments: dict) -> tuple:
    return ("tool_call", {"id": call_id, "name": name, "input": json.dumps(arguments), "finished": True})


def result(call_id: str, content: str, is_error: bool = False, name: str = "bash") -> tuple:
    return ("tool_result", {"tool_call_id": call_id, "name": name, "content": content, "is_error": is_error})


# -- times -------------------------------------------------------------------------------------------------------


def test_times_are_seconds_although_the_schema_comments_say_milliseconds():
    found = rows(database(session(), message("m1", "user", [("text", {"text": "go"})], created=T0 + 5)))
    user = next(row for row in found if row.turn_type == "user")
    assert (user.timestamp_ns, user.timestamp_source) == ((T0 + 5) * 1_000_000_000, "record")


def test_a_value_in_the_milliseconds_range_is_read_as_milliseconds():
    found = rows(database(session(), message("m1", "user", [("text", {"text": "go"})], created=(T0 + 5) * 1000)))
    assert next(row for row in found if row.turn_type == "user").timestamp_ns == (T0 + 5) * 1_000_000_000


def test_a_finish_time_of_zero_is_no_time_and_the_message_finish_is_used():
    found = rows(database(session(), message("m1", "assistant", [("finish", {"reason": "canceled", "time": 0})],
                                              created=T0, finished_at=T0 + 9)))
    ended = next(row for row in found if row.text.startswith("reply ended"))
    assert (ended.text, ended.timestamp_ns) == ("reply ended (canceled)", (T0 + 9) * 1_000_000_000)


# -- parts ---------------------------------------------------------------------------------------------------------


def test_calls_and_results_join_by_id_across_messages_and_a_result_is_never_a_user_row():
    found = rows(database(session(),
                          message("m1", "assistant", [call("c1", "bash", {"command": "ls"}),
                                                      call("c2", "view", {"file_path": "a"})]),
                          message("m2", "tool", [result("c2", "file a", name="view"), result("c1", "a b")],
                                  created=T0 + 1)))
    assert [(row.turn_type, row.tool_use_id, row.tool_name) for row in found if row.turn_type == "tool_result"] == [
        ("tool_result", "c2", "view"), ("tool_result", "c1", "bash")]
    assert not texts(found, "user") and not [text for text in texts(found) if text.startswith("parser:")]


def test_a_call_left_open_and_a_result_with_no_call_each_get_their_parser_row():
    found = rows(database(session(), message("m1", "assistant", [call("c1", "bash", {"command": "ls"})]),
                          message("m2", "tool", [result("c9", "orphan")], created=T0 + 1)))
    assert [text for text in texts(found) if text.startswith("parser:")] == [
        "parser: tool result for bash with no tool call before it",
        "parser: no result recorded for tool call c1 (bash)"]


def test_an_old_result_without_a_name_takes_its_calls_name():
    found = rows(database(session(), message("m1", "assistant", [call("c1", "write", {"file_path": "x"})]),
                          message("m2", "tool", [("tool_result", {"tool_call_id": "c1", "content": "ok"})],
                                  created=T0 + 1)))
    assert [row.tool_name for row in found if row.turn_type == "tool_result"] == ["write"]


@pytest.mark.parametrize(("content", "decision"), [
    ("User denied permission", "permission decision: denied"),
    ("Permission denied", "permission decision: denied"),
    ("Tool call blocked by hook. Reason: no network",
     "permission decision: blocked by a PreToolUse hook (not asked): no network"),
    ("Turn halted by hook. Reason: quota", "permission decision: turn halted by a PreToolUse hook: quota"),
])
def test_refusal_texts_give_their_permission_decision(content, decision):
    found = rows(database(session(), message("m1", "assistant", [call("c1", "bash", {"command": "rm -rf /"})]),
                          message("m2", "tool", [result("c1", content, is_error=True)], created=T0 + 1)))
    decisions = [row for row in found if row.text.startswith("permission decision:")]
    assert [(row.text, row.tool_use_id, row.tool_name) for row in decisions] == [(decision, "c1", "bash")]
    assert texts(found, "tool_result") == [f"error: {content}"]


def test_a_cancelled_call_is_an_error_result_not_a_decision():
    found = rows(database(session(), message("m1", "assistant", [call("c1", "bash", {"command": "ls"})]),
                          message("m2", "tool", [result("c1", "Error: user cancelled assistant tool calling", True)],
                                  created=T0 + 1)))
    assert not [text for text in texts(found) if text.startswith("permission decision")]


def test_reasoning_is_thinking_and_its_signature_and_encrypted_data_are_never_shown():
    found = rows(database(session(), message("m1", "assistant", [
        ("reasoning", {"thinking": "check the pool", "signature": "SIG-SECRET",
                       "responses_data": {"encrypted_content": "ENC-SECRET"}, "started_at": T0 + 3}),
        ("reasoning", {"thinking": "", "signature": "SIG-ONLY"})])))
    assert [(row.turn_type, row.timestamp_ns) for row in found if row.turn_type == "thinking"] == [
        ("thinking", (T0 + 3) * 1_000_000_000), ("thinking", T0 * 1_000_000_000)]
    assert not [text for text in texts(found) if "SECRET" in text or "SIG-ONLY" in text]


def test_binary_and_image_parts_never_carry_their_bytes():
    payload = "QUJDREVGR0hJSktMTU5PUFFSU1RV" * 40  # 1120 characters: 840 bytes
    found = rows(database(session(), message("m1", "user", [
        ("text", {"text": "see"}), ("binary", {"Path": "/tmp/shot.png", "MIMEType": "image/png", "Data": payload}),
        ("image_url", {"url": f"data:image/png;base64,{payload}"})])))
    assert [text for text in texts(found) if text.startswith("attachment:")] == [
        "attachment: /tmp/shot.png (image/png, 840 bytes)", "attachment: [image image/png, 840 bytes]"]
    assert not [text for text in texts(found) if payload[:24] in text]


def test_a_shell_command_is_a_user_row_with_its_output_and_exit_code():
    found = rows(database(session(), message("m1", "user", [
        ("shell_command", {"command": "git status", "output": "clean", "exit_code": 1})])))
    assert [(row.turn_type, row.text) for row in found if "shell command" in row.text] == [
        ("user", "shell command: git status"), ("system", "shell command output (exit code 1): clean")]


def test_a_summary_message_gives_a_compaction_row_before_its_text():
    found = rows(database(session(), message("m9", "assistant", [("text", {"text": "so far"})],
                                              is_summary_message=1, model="m")))
    assert [text for text in texts(found) if not text.startswith(("model:", "session metadata"))][:2] == [
        "compaction: message m9 is the session's summary (is_summary_message); the messages before it are no longer "
        "sent to the model", "so far"]


def test_the_model_is_named_once_and_again_where_it_changes():
    found = rows(database(session(), *(message(f"m{n}", "assistant", [("text", {"text": str(n)})], created=T0 + n,
                                               model=model, provider="p") for n, model in enumerate("aab"))))
    assert [text for text in texts(found) if text.startswith("model:")] == ["model: a (provider p)",
                                                                           "model: a -> b (provider p)"]


# -- sessions ----------------------------------------------------------------------------------------------------


def test_a_sub_agent_runs_prompt_is_not_a_user_row_and_the_run_names_its_call():
    child = "msg1$$call_7"
    found = rows(database(session(), session(child, parent="s1", created=T0 + 5),
                          message("m1", "user", [("text", {"text": "find callers"})], session_id=child)))
    assert not texts(found, "user")
    assert "subagent prompt: find callers" in texts(found)
    link = next(row for row in found if row.text.startswith("subagent:"))
    assert (link.session_id, link.tool_use_id) == ("s1", "call_7")


def test_a_parent_id_no_session_holds_is_one_deletion_row_however_many_children_name_it():
    found = rows(database(session("a$$c1", parent="gone"), session("b$$c2", parent="gone", created=T0 + 1),
                          session("c$$c3", parent="a$$c1", created=T0 + 2)))
    deleted = [row for row in found if row.text.startswith("session deleted:")]
    assert [(row.session_id, row.timestamp_source) for row in deleted] == [("gone", "none")]


def test_todos_are_task_rows_at_the_sessions_last_update():
    todos = json.dumps([{"content": "profile", "status": "completed", "active_form": "profiling"}])
    found = rows(database(session(todos=todos)))
    task = next(row for row in found if row.text.startswith("task:"))
    assert task.text == "task: profile | status=completed active_form=profiling (as of the session's last update)"
    assert task.timestamp_ns == (T0 + 60) * 1_000_000_000


def test_session_totals_come_after_its_messages_with_the_last_model():
    found = rows(database(session(prompt_tokens=10, completion_tokens=2, cost=0.5),
                          message("m1", "assistant", [("text", {"text": "x"})], model="gpt-5")))
    assert texts(found)[-1] == ("tokens generated: model=gpt-5 input=10 output=2 cost=0.5 (session totals, as of its "
                                "last update)")


def test_file_versions_give_their_size_never_their_content():
    found = rows(database(session(), "INSERT INTO files (id, session_id, path, content, version, created_at, "
                                     f"updated_at) VALUES ('f1', 's1', '/a.go', 'SECRET CONTENT', 2, {T0}, {T0});"))
    assert "file history: /a.go version 2 (14 characters kept in the files table, not shown)" in texts(found)
    assert not [text for text in texts(found) if "SECRET CONTENT" in text]


def test_the_first_schema_generation_reads_without_its_missing_columns_and_table():
    found = rows(database("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 't', 1, 1);",
                          message("m1", "user", [("text", {"text": "hello"})]), schema=FIRST_SCHEMA))
    assert "hello" in texts(found, "user")
    assert not [text for text in texts(found) if text.startswith("parser:")]


def test_a_file_that_is_not_a_database_is_one_parser_row():
    assert texts(rows(b"not a database at all")) == [
        "parser: unparseable file (crush.db: cannot read: file is not a database)"]


# -- configs and projects ---------------------------------------------------------------------------------------------


def config_rows(document: dict):
    path = ".config/crush/crush.json"
    return drafts(FakeBundle({("crush.user_config", path): json.dumps(document).encode()}), path, "crush.config.v1")


def test_the_config_gives_allow_and_deny_lists_and_never_a_provider_key():
    found = config_rows({"permissions": {"allowed_tools": ["view", "bash:go test"]},
                         "options": {"disabled_tools": ["bash"], "data_directory": "/d"},
                         "models": {"large": {"model": "m", "provider": "p", "api_key": "sk-LEAK"}},
                         "providers": {"p": {"api_key": "sk-LEAK-2"}}})
    assert texts(found)[:2] == [
        'permission setting: permissions.allowed_tools=["view","bash:go test"] (from crush.json, file mtime: run '
        'without asking)',
        'permission setting: options.disabled_tools=["bash"] (from crush.json, file mtime: hidden from the agent)']
    assert not [text for text in texts(found) if "sk-LEAK" in text]


def test_a_project_time_with_a_zone_is_a_record_time_and_one_without_stays_text():
    path = ".local/share/crush/projects.json"
    document = {"projects": [{"path": "/a", "data_dir": "/a/.crush", "last_accessed": "2026-07-20T08:12:44.1Z"},
                             {"path": "/b", "data_dir": "/b/.crush", "last_accessed": "2026-07-20 08:12:44"}]}
    found = drafts(FakeBundle({("crush.projects", path): json.dumps(document).encode()}), path, "crush.projects.v1")
    assert [(row.project_path, row.timestamp_source) for row in found] == [("/a", "record"), ("/b", "none")]
    assert found[1].text.endswith("last accessed 2026-07-20 08:12:44)")


# -- the fixtures, end to end -------------------------------------------------------------------------------------


def test_rows_only_in_the_wal_are_read_and_the_database_file_alone_lacks_them(cli, tmp_path):
    case = FIXTURES / "crush" / "current-db" / "home"
    home = tmp_path / "home"
    shutil.copytree(case, home)
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", out, "--quiet").exit_code == 0
    assert b"shell command: git status --short" in out.read_bytes()
    assert b"git status --short" not in (case / ".crush" / "crush.db").read_bytes()


PLANTED = (b"sk-proj-FAKE-crush-global-data-Zq81vT0mKe3", b"hyper-FAKE-access-token-7Jd92LkQ",
           b"hyper-FAKE-refresh-token-Pw03Xn", b"gho_FAKEcrushMcpOauthToken4821",
           b"sk-FAKE-user-config-deepseek-Hq72Lm")


def test_no_credential_value_reaches_the_bundle_timeline_or_report(cli, tmp_path):
    """The global data crush.json is never collected; the user config's key is collected but never read."""
    from tests.conftest import all_decompressed

    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "crush" / "server-deleted-parent" / "home", home)
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    collected = all_decompressed(bundle)
    assert not [value for value in PLANTED[:4] if value in collected]
    timeline, lines, page = tmp_path / "t.csv", tmp_path / "t.jsonl", tmp_path / "r.html"
    assert cli("analyze", bundle, "-o", timeline, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", lines, "--format", "jsonl", "--quiet").exit_code == 0
    assert cli("report", bundle, "-o", page, "--jobs", "1").exit_code == 0
    assert b"permissions.allowed_tools" in timeline.read_bytes()  # the config was read
    leaks = {(output.name, value) for output in (timeline, lines, page) for value in PLANTED
             if value in output.read_bytes()}
    assert not leaks
