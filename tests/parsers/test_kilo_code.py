"""Kilo Code (legacy extension) parsers, one rule per test (docs/agents/kilo-code.md)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts, run
from tests.conftest import FIXTURES, bundle_records, every_output
from tests.fixture_sqlite import build, sqlite_bytes
from tests.test_golden import timeline

CASES = FIXTURES / "kilo-code"
GLOBAL = ".config/Code/User/globalStorage/"
TASK_ID = "0197b2c0-4444-7ccc-8ddd-000000000004"
TASK = f"{GLOBAL}kilocode.kilo-code/tasks/{TASK_ID}/"
API = TASK + "api_conversation_history.json"
UI = TASK + "ui_messages.json"
STATE = GLOBAL + "state.vscdb"
HEADER = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);\n"
PLANTED = ("kilo-FAKE-token-5c1e8d3a9b7f", "sk-or-v1-FAKE-planted-image-key-77a1", "ghp_FAKEplantedMcpToken000111")


def encode(value: object) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def task_rows(files: dict[str, object], path: str = API, extra: dict | None = None):
    bundle = FakeBundle({("kilo-code.tasks", name): encode(value) for name, value in files.items()} | (extra or {}))
    return drafts(bundle, path, "kilo_code.task.v1")


def quoted(value: dict) -> str:
    return json.dumps(value).replace("'", "''")


def state_sql(value: dict) -> str:
    return HEADER + f"INSERT INTO ItemTable VALUES ('kilocode.kilo-code', '{quoted(value)}');\n"


def state_db(value: dict) -> bytes:
    return sqlite_bytes(state_sql(value) + "INSERT INTO ItemTable VALUES ('secret://{\"extensionId\":"
                        "\"kilocode.kilo-code\",\"key\":\"kilocodeToken\"}', 'kilo-FAKE-token-5c1e8d3a9b7f');")


def wal_db(tmp_path: Path, versions: list[dict]) -> tuple[bytes, bytes]:
    """A state.vscdb whose file holds ``versions[0]`` and whose -wal commits each later version."""
    sql = tmp_path / "state.sql"
    updates = "".join(f"UPDATE ItemTable SET value = '{quoted(value)}' "
                      "WHERE key = 'kilocode.kilo-code';\n" for value in versions[1:])
    sql.write_text("-- target: unused\n" + state_sql(versions[0]) + "-- wal\n" + updates)
    database = tmp_path / "state.vscdb"
    build(sql, database)
    return database.read_bytes(), (tmp_path / "state.vscdb-wal").read_bytes()


def user(*blocks, **extra):
    return {"role": "user", "content": list(blocks), "ts": 1788400000000, **extra}


def assistant(*blocks, **extra):
    return {"role": "assistant", "content": list(blocks), "ts": 1788400001000, **extra}


def call(call_id: str, name: str = "execute_command", **tool_input):
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input or {"command": "ls"}}


def result(call_id: str, content: str):
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def text(value: str):
    return {"type": "text", "text": value}


def item(task_id: str, **extra):
    return {"id": task_id, "number": 1, "ts": 1788400090000, "task": "t", "tokensIn": 1, "tokensOut": 2,
            "totalCost": 0.5, "workspace": "/w", **extra}


# -- the task walk ---------------------------------------------------------------------------------


def test_native_results_join_their_call_by_id_anywhere_later_in_the_file():
    rows = task_rows({API: [user(text("<task>\nlist it\n</task>")),
                            assistant(call("toolu_a", "read_file", path="a.py"), call("toolu_b")),
                            user(text("a note between")),
                            user(result("toolu_b", "b output"), result("toolu_a", "a output"))]})
    results = {row.tool_use_id: (row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"}
    assert results == {"toolu_a": ("read_file", "a output"), "toolu_b": ("execute_command", "b output")}
    assert [row.text for row in rows if row.turn_type == "user"] == ["list it", "a note between"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_json_statuses_are_permission_decisions_and_an_error_is_none():
    statuses = [('{"status":"denied","message":"The user denied this operation."}', "denied"),
                ('{"status":"denied","message":"m","feedback":"not now"}', "denied with feedback"),
                ('{"status":"approved","message":"m","feedback":"ok"}\n\nCommand executed', "approved with feedback"),
                ('{"status":"error","message":"The tool execution failed","error":"boom"}', None),
                ('{"status":"error","type":"access_denied","message":"Access blocked by .kilocodeignore"}', None)]
    history = []
    for number, (content, _) in enumerate(statuses):
        history += [assistant(call(f"toolu_{number}")), user(result(f"toolu_{number}", content))]
    rows = task_rows({API: history})
    decisions = {row.tool_use_id: row.text for row in rows if row.text.startswith("permission decision:")}
    assert decisions == {f"toolu_{number}": f"permission decision: {decision}"
                         for number, (_, decision) in enumerate(statuses) if decision}


def test_reasoning_blocks_are_thinking_rows_and_signatures_give_none():
    rows = task_rows({API: [assistant({"type": "reasoning", "text": "plain reasoning", "summary": []},
                                      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "sum"}]},
                                      {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
                                      {"type": "thinking", "thinking": "anthropic", "signature": "s"},
                                      {"type": "thoughtSignature", "thoughtSignature": "opaque"},
                                      text("answer"),
                                      reasoning_content="deepseek")]})
    assert [(row.turn_type, row.text) for row in rows] == [
        ("thinking", "deepseek"), ("thinking", "plain reasoning"), ("thinking", "sum"),
        ("thinking", "[encrypted reasoning]"), ("thinking", "anthropic"), ("assistant", "answer")]


def test_xml_calls_take_positional_ids_and_plain_denials_are_decisions():
    rows = task_rows({API: [user(text("<task>\nrun the tests\n</task>")),
                            assistant(text("<execute_command>\n<command>npm test</command>\n</execute_command>")),
                            user(text("[execute_command for 'npm test'] Result:"),
                                 text("The user denied this operation."))]})
    call_row = next(row for row in rows if row.turn_type == "tool_use")
    assert (call_row.tool_name, call_row.tool_use_id) == ("execute_command", "1")
    assert [row.text for row in rows if row.tool_use_id == "1" and row.turn_type == "system"] == [
        "permission decision: denied"]


def test_xml_tags_in_a_native_task_are_prose_not_calls():
    rows = task_rows({API: [assistant(text("use <read_file><path>x</path></read_file> next"), call("toolu_a")),
                            user(result("toolu_a", "done"))]})
    assert [row.turn_type for row in rows] == ["assistant", "tool_use", "tool_result"]


def test_condensed_messages_stay_marked_and_the_summary_copy_of_a_call_is_no_second_call():
    rows = task_rows({API: [assistant(call("toolu_a"), condenseParent="c1"),
                            assistant(text("the summary"), call("toolu_a"), isSummary=True, condenseId="c1"),
                            user(result("toolu_a", "out")),
                            user(text("[Sliding window truncation: 1 messages hidden]"), isTruncationMarker=True,
                                 truncationId="t1"),
                            user(text("hidden note"), truncationParent="t1")]})
    assert [(row.turn_type, row.text) for row in rows] == [
        ("tool_use", 'condensed: {"command": "ls"}'), ("system", "condense summary: the summary"),
        ("tool_result", "out"), ("system", "truncation marker: [Sliding window truncation: 1 messages hidden]"),
        ("user", "truncated: hidden note")]


def test_a_call_never_answered_gets_one_no_result_row():
    rows = task_rows({API: [assistant(call("toolu_a", "apply_diff")), user(text("stop"))]})
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call toolu_a (apply_diff)"]


def test_the_project_is_the_task_lists_workspace_else_the_environment_details():
    details = text("<environment_details>\n# Current Workspace Directory (/home/ana/shop) Files\n"
                   "</environment_details>")
    alone = task_rows({API: [user(details)]})
    assert {row.project_path for row in alone} == {"/home/ana/shop"}
    listed = task_rows({API: [user(details)]}, extra={("kilo-code.global_state", STATE): state_db(
        {"taskHistory": [item(TASK_ID, workspace="/home/ana/listed")]})})
    assert {row.project_path for row in listed} == {"/home/ana/listed"}
    assert {row.session_id for row in listed} == {TASK_ID}


def test_ui_messages_beside_the_api_history_give_only_a_cut_stream():
    rows = task_rows({API: [user(text("<task>\nx\n</task>"))],
                      UI: [{"ts": 1, "type": "say", "say": "text", "text": "x"},
                           {"ts": 2, "type": "say", "say": "text", "text": "cut here", "partial": True}]}, path=UI)
    assert [row.text for row in rows] == ["partial: cut here"]


def test_ui_messages_stand_in_when_the_api_history_is_damaged():
    rows = task_rows({API: b"[{not json", UI: [{"ts": 1, "type": "say", "say": "text", "text": "the prompt"}]},
                     path=UI)
    assert [(row.turn_type, row.text) for row in rows] == [("user", "the prompt")]


def test_fields_of_the_wrong_type_never_raise():
    odd = [["x"], {"a": 1}, 3, None, "s"]
    history = [assistant({"type": "reasoning", "summary": value, "text": value}, condenseParent=value,
                         reasoning_content=value) for value in odd]
    history += [assistant(text("s"), isSummary=True, condenseId=value) for value in odd]
    history += [user(result("toolu_a", '{"status":["denied"],"feedback":"x"}')), "not a message", 5,
                {"role": "assistant", "content": 7}]
    rows = task_rows({API: history})
    assert rows and all(isinstance(row.text, str) for row in rows)


# -- the task list and standing permissions ------------------------------------------------------------


def test_approval_keys_are_permission_settings_and_no_credential_is_read():
    state = {"yoloMode": True, "alwaysAllowDelete": False, "allowedCommands": ["git log"],
             "openRouterImageApiKey": "sk-or-v1-FAKE-planted-image-key-77a1", "taskHistory": []}
    bundle = FakeBundle({("kilo-code.global_state", STATE): state_db(state)})
    assert [row.text for row in drafts(bundle, STATE, "kilo_code.global_state.v1")] == [
        "permission setting: yoloMode=true (from state.vscdb kilocode.kilo-code, file mtime)",
        "permission setting: alwaysAllowDelete=false (from state.vscdb kilocode.kilo-code, file mtime)",
        'permission setting: allowedCommands=["git log"] (from state.vscdb kilocode.kilo-code, file mtime)']
    joined = json.dumps([list(row) for row in run(bundle, STATE, "kilo_code.global_state.v1")])
    assert not [value for value in PLANTED if value in joined]


def test_a_task_row_carries_kilos_own_fields_at_its_ts():
    bundle = FakeBundle({("kilo-code.global_state", STATE): state_db({"taskHistory": [item(
        TASK_ID, mode="code", status="delegated", toolProtocol="native", apiConfigName="fast", isFavorited=True,
        parentTaskId="p1", childIds=["c1", "c2"], cacheReads=9)]})})
    row = drafts(bundle, STATE, "kilo_code.global_state.v1")[0]
    assert row.text == ("task: t | tokensIn=1 tokensOut=2 totalCost=0.5 number=1 | mode=code status=delegated "
                        "toolProtocol=native profile=fast parent=p1 favorited children=c1,c2 cacheReads=9")
    assert (row.timestamp_ns, row.session_id, row.project_path) == (1788400090000 * 10**6, TASK_ID, "/w")


def test_a_task_deleted_since_is_recovered_from_an_earlier_wal_commit_once(tmp_path: Path):
    kept, deleted = item("kept"), item("gone", task="drop the audit table")
    # the fake bundle opens the main file without its -wal: the file holds the last version, as after a checkpoint
    versions = [{"taskHistory": [kept]}, {"taskHistory": [kept, deleted]}, {"taskHistory": [kept, deleted]},
                {"taskHistory": [kept]}]
    database, wal = wal_db(tmp_path, versions)
    bundle = FakeBundle({("kilo-code.global_state", STATE): database, ("kilo-code.global_state", STATE + "-wal"): wal})
    rows = drafts(bundle, STATE, "kilo_code.global_state.v1")
    assert [(row.session_id, row.origin, row.locator) for row in rows] == [
        ("kept", None, "sqlite:ItemTable:1/taskHistory/0"),
        ("gone", "secondary", "wal:1/sqlite:ItemTable:1/taskHistory/1")]  # commit 2 repeats it: written once


def test_the_backup_is_read_by_the_same_parser():
    bundle = FakeBundle({("kilo-code.global_state_backup", STATE + ".backup"): state_db(
        {"taskHistory": [item("gone")]})})
    assert [row.session_id for row in drafts(bundle, STATE + ".backup", "kilo_code.global_state.v1")] == ["gone"]


def test_a_damaged_database_row_or_list_is_one_parser_row():
    for data, reason in ((b"not a database at all" * 10, "cannot query ItemTable"),
                         (sqlite_bytes("CREATE TABLE other (x);"), "no such table: ItemTable"),
                         (sqlite_bytes(HEADER + "INSERT INTO ItemTable VALUES ('kilocode.kilo-code', '{oops');"),
                          "is not readable JSON"),
                         (state_db({"taskHistory": {"not": "a list"}}), "taskHistory is not an array")):
        rows = drafts(FakeBundle({("kilo-code.global_state", STATE): data}), STATE, "kilo_code.global_state.v1")
        assert len(rows) == 1 and rows[0].text.startswith("parser: ") and reason in rows[0].text, rows


def test_settings_command_lists_and_mcp_always_allow_without_secrets():
    settings = GLOBAL.replace("globalStorage/", "settings.json")
    mcp = GLOBAL + "kilocode.kilo-code/settings/mcp_settings.json"
    bundle = FakeBundle({("kilo-code.user_settings", settings): b'{"kilo-code.allowedCommands": ["npm test"], // c\n'
                                                                b'"kilo-code.customStoragePath": "~/k"}',
                         ("kilo-code.mcp_settings", mcp): encode({"mcpServers": {"gh": {
                             "command": "npx", "env": {"GITHUB_TOKEN": "ghp_FAKEplantedMcpToken000111"},
                             "alwaysAllow": ["get_issue"]}}})})
    assert [row.text for row in drafts(bundle, settings, "kilo_code.user_settings.v1")] == [
        'permission setting: kilo-code.allowedCommands=["npm test"] (from settings.json, file mtime)']
    texts = [row.text for row in drafts(bundle, mcp, "kilo_code.mcp_settings.v1")]
    assert 'permission setting: mcpServers[gh].alwaysAllow=["get_issue"] (from mcp_settings.json, file mtime)' in texts
    assert "ghp_" not in "\n".join(texts)


def test_task_history_json_gives_a_task_row_per_entry_and_says_when_damaged():
    path = GLOBAL + "kilocode.kilo-code/task_history.json"
    bundle = FakeBundle({("kilo-code.task_history_file", path): encode([item("a"), "junk"])})
    rows = drafts(bundle, path, "kilo_code.task_history.v1")
    assert [row.text[:7] for row in rows] == ["task: t", "parser:"]
    damaged = FakeBundle({("kilo-code.task_history_file", path): b"{}"})
    assert drafts(damaged, path, "kilo_code.task_history.v1")[0].text.startswith("parser: unparseable file")


# -- whole runs ----------------------------------------------------------------------------------------------


def test_the_deleted_tasks_case_recovers_one_task_from_the_backup_and_one_from_a_wal_frame(cli, tmp_path: Path):
    rows = list(csv.DictReader(io.StringIO(timeline(cli, CASES / "deleted-tasks", tmp_path).decode())))
    tasks = [(row["session_id"][-1], row["origin"], row["store"], row["locator"].split("/")[0]) for row in rows
             if row["text"].startswith("task: ")]
    assert ("2", "secondary", "kilo-code.global_state_backup", "sqlite:ItemTable:1") in tasks
    assert ("3", "secondary", "kilo-code.global_state", "wal:1") in tasks
    assert [task for task in tasks if task[1] == "primary"] == [("1", "primary", "kilo-code.global_state",
                                                                  "sqlite:ItemTable:1")]


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    timeline(cli, CASES / "native-task", tmp_path)
    outputs = every_output(cli, tmp_path / "case.tar.zst", tmp_path)
    assert b"Remove the legacy retry helper" in outputs[0]
    for produced in outputs:
        assert not [value for value in PLANTED if value.encode() in produced]


def test_the_checkpoint_repository_is_collected_without_its_objects(cli, tmp_path: Path):
    git = tmp_path / "home" / GLOBAL / "kilocode.kilo-code" / "tasks" / TASK_ID / "checkpoints" / ".git"
    for name, content in (("HEAD", "ref: refs/heads/master\n"), ("config", "[core]\n\tworktree = /home/ana/b\n"),
                          ("logs/HEAD", "0 1 Kilo <n@e> 1788400001 +0000\tcommit (initial): initial commit\n"),
                          ("objects/3f/1c2a", "snapshot bytes")):
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(content)
    bundle = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", tmp_path / "home", "-o", bundle, "--agent", "kilo-code", "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    records = [record for record in bundle_records(bundle) if ".git/" in record.get("path", "")]
    assert {record["path"].split(".git/")[-1] for record in records if record.get("outcome") == "collected"} == {
        "HEAD", "config", "logs/HEAD"}
    assert {record.get("store") for record in records} == {"kilo-code.checkpoint_repos"}
    assert not [record for record in records if "/objects/" in record["path"]]
