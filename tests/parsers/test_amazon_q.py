"""Amazon Q Developer CLI parsers, one rule per test (docs/agents/amazon-q.md)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records, every_output
from tests.fixture_sqlite import sqlite_bytes
from tests.test_golden import frozen_copy, timeline

CASES = FIXTURES / "amazon-q"
DATA = ".local/share/amazon-q"
DB = f"{DATA}/data.sqlite3"
SCHEMA = (CASES / "schema" / "data-15cc8f3.sql").read_text()
PLANTED = ("PLANTED",)  # every secret of config-and-credentials carries it


def golden(case: str) -> list[dict]:
    with open(CASES / case / "expected.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def conversation(history: list, **extra) -> str:
    return json.dumps({"conversation_id": "c-1", "history": history, "transcript": [], **extra})


def entry(content: dict, assistant: dict, timestamp: str | None = None, meta: dict | None = None) -> dict:
    return {"user": {"additional_context": "", "env_context": {"env_state": {"current_working_directory": "/w"}},
                     "content": content, "timestamp": timestamp, "images": None},
            "assistant": assistant, "request_metadata": meta}


def rows_of(value: str, *statements: str):
    sql = SCHEMA + f"\nINSERT INTO conversations (key, value) VALUES ('/w', '{value.replace(chr(39), chr(39) * 2)}');"
    data = sqlite_bytes(sql + "\n" + "\n".join(statements))
    return drafts(FakeBundle({("amazon-q.data_db", DB): data}), DB, "amazon_q.data_db.v1")


# -- the conversation walk ---------------------------------------------------------------------------------------


def test_a_prompt_is_timed_by_its_own_offset_and_a_reply_by_the_stream_end_in_ms():
    meta = {"request_start_timestamp_ms": 1788350531204, "stream_end_timestamp_ms": 1788350534920, "model_id": "m"}
    rows = rows_of(conversation([entry({"Prompt": {"prompt": "hi"}}, {"Response": {"content": "hello"}},
                                       "2026-09-02T14:02:11.204+02:00", meta)]))
    turns = {row.turn_type: row for row in rows if row.turn_type in ("user", "assistant")}
    assert turns["user"].timestamp_ns == 1788350531204 * 1_000_000  # 14:02:11.204+02:00 is 12:02:11.204Z
    assert turns["assistant"].timestamp_ns == 1788350534920 * 1_000_000
    assert (turns["user"].timestamp_source, turns["assistant"].project_path) == ("record", "/w")


def test_a_call_is_joined_to_the_next_entrys_result_by_tool_use_id_and_an_error_is_marked():
    call = {"ToolUse": {"content": "", "tool_uses": [{"id": "t1", "name": "execute_bash", "args": {"command": "ls"}}]}}
    failed = {"tool_use_id": "t1", "content": [{"Json": {"exit_status": "2"}}], "status": "Error"}
    results = {"ToolUseResults": {"tool_use_results": [failed]}}
    rows = rows_of(conversation([entry({"Prompt": {"prompt": "list"}}, call),
                                 entry(results, {"Response": {"content": "failed"}})]))
    joined = [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows if row.tool_use_id]
    assert joined == [("tool_use", "execute_bash", "t1", '{"command":"ls"}'),
                      ("tool_result", "execute_bash", "t1", '[tool error] {"exit_status":"2"}')]


def test_the_three_answers_to_a_confirmation_are_three_different_rows():
    call = {"ToolUse": {"content": "", "tool_uses": [{"id": "t1", "name": "fs_write", "args": {}}]}}
    stamp = "2026-09-02T10:00:00Z"

    def answered(prompt):
        cancelled = {"CancelledToolUses": {"prompt": prompt, "tool_use_results": [
            {"tool_use_id": "t1", "content": [{"Text": "Tool use was cancelled by the user"}], "status": "Error"}]}}
        rows = rows_of(conversation([entry({"Prompt": {"prompt": "go"}}, call, stamp),
                                     entry(cancelled, {"Response": {"content": "ok"}}, stamp)]))
        return [(row.turn_type, row.text, row.tool_use_id) for row in rows if "history/1/user" in row.locator]

    denial = "I deny this tool request. Ask a follow up question clarifying the expected action"
    assert answered(denial)[1:] == [("system", "permission decision: denied", "t1"),
                                    ("system", f"injected prompt (denial): {denial}", "")]
    assert answered("use git mv")[1:] == [("system", "permission decision: denied with feedback", "t1"),
                                          ("user", "use git mv", "")]
    assert answered("The user interrupted the tool execution.")[1:] == [
        ("system", "interrupted: The user interrupted the tool execution.", "")]


def test_an_mcp_tool_is_named_by_its_server_from_the_tools_map():
    tools = {"native___": [], "github": [{"ToolSpecification": {"name": "get_issue"}}]}
    call = {"ToolUse": {"content": "", "tool_uses": [{"id": "t1", "name": "get_issue", "orig_name": "get_issue",
                                                      "args": {}}]}}
    rows = rows_of(conversation([entry({"Prompt": {"prompt": "issue 4"}}, call)], tools=tools))
    assert [row.tool_name for row in rows if row.turn_type == "tool_use"] == ["@github/get_issue"]


def test_transcript_lines_are_given_only_for_turns_the_history_no_longer_holds():
    value = conversation([entry({"Prompt": {"prompt": "kept"}}, {"Response": {"content": "answer"}})],
                         transcript=["> gone", "lost reply\n[Tool uses: fs_read]", "> kept",
                                     "answer\n[Tool uses: none]"])
    secondary = [(row.turn_type, row.text) for row in rows_of(value) if row.origin == "secondary"]
    assert secondary == [("user", "gone"), ("assistant", "lost reply")]


def test_credential_state_keys_and_auth_kv_are_never_selected():
    class Traced(FakeBundle):
        statements: list[str] = []

        def open_sqlite(self, source):
            connection = super().open_sqlite(source)
            connection.set_trace_callback(self.statements.append)
            return connection

    data = sqlite_bytes("\n".join([
        SCHEMA, "INSERT INTO state VALUES ('telemetry-cognito-credentials', '{\"secret_key\":\"S-X\"}');",
        "INSERT INTO state VALUES ('my.apiKey', 'K-X');", "INSERT INTO state VALUES ('ok', 'v');",
        "INSERT INTO auth_kv VALUES ('codewhisperer:odic:token', 'T-X');"]))
    bundle = Traced({("amazon-q.data_db", DB): data})
    rows = drafts(bundle, DB, "amazon_q.data_db.v1")
    assert 'state: ok="v"' in [row.text for row in rows]
    assert not [row for row in rows if "-X" in row.text]
    selects = [sql for sql in bundle.statements if sql.lstrip().upper().startswith("SELECT")]
    assert not [sql for sql in selects if "auth_kv" in sql]
    value_selects = [sql for sql in selects if '"value"' in sql and '"state"' in sql]
    assert [sql.rsplit(" ", 1)[-1] for sql in value_selects] == ["3"]  # only the value of 'ok' (rowid 3) is selected


def test_the_last_version_is_read_from_the_wal_and_earlier_versions_add_only_what_it_lacks():
    rows = golden("conversation-rewrites")
    live = [row["text"] for row in rows if row["origin"] == "primary" and row["turn_type"] == "user"]
    assert live == ["Which tests are failing?", "Fix test_reorder.",
                    "Start over: list the HTTP endpoints of the billing service."]
    recovered = [(row["text"], row["locator"].split("/", 1)[0]) for row in rows
                 if row["origin"] == "secondary" and row["turn_type"] == "user"]
    # the oldest version holding each turn is the main file read alone (wal:0)
    assert recovered == [("Summarise the invoice module.", "wal:0"), ("Delete the legacy exporter.", "wal:0"),
                         ("n", "wal:0")]
    texts = [row["text"] for row in rows]
    assert texts.count("Which tests are failing?") == 1 and texts.count("Summarise the invoice module.") == 1


def test_without_the_wal_the_replaced_conversation_is_live_and_the_new_one_absent(cli, tmp_path: Path):
    case = CASES / "conversation-rewrites"
    cut = tmp_path / "cut"
    shutil.copytree(case / "home", cut / "home")
    (cut / "home" / f"{DB}-wal").unlink()
    without = timeline(cli, cut, tmp_path / "b").decode()
    assert "Start over: list the HTTP endpoints" not in without
    assert ",primary," in without.split("Summarise the invoice module.")[1].split("\n")[0]


# -- settings and files ------------------------------------------------------------------------------------------------


def test_settings_rows_mark_the_default_agent_as_a_permission_and_withhold_a_token():
    rows = golden("config-and-credentials")
    settings = [row["text"].split(" (")[0] for row in rows if row["store"] == "amazon-q.settings"]
    assert 'permission setting: chat.defaultAgent="reviewer"' in settings
    assert "setting: mcp.githubToken=[withheld: a credential, 24 characters]" in settings
    assert "model: claude-sonnet-4" in settings


def test_agent_and_mcp_files_give_permission_rows_without_env_values():
    agent = (CASES / "config-and-credentials" / "home" / ".aws/amazonq/cli-agents/reviewer.json").read_bytes()
    mcp = (CASES / "config-and-credentials" / "home" / ".aws/amazonq/mcp.json").read_bytes()
    path, mcp_path = ".aws/amazonq/cli-agents/reviewer.json", ".aws/amazonq/mcp.json"
    bundle = FakeBundle({("amazon-q.agents", path): agent, ("amazon-q.mcp", mcp_path): mcp})
    agent_rows = [row.text for row in drafts(bundle, path, "amazon_q.agent.v1")]
    mcp_rows = [row.text for row in drafts(bundle, mcp_path, "amazon_q.mcp.v1")]
    allowed = 'permission setting: allowedTools=["fs_read","@github/get_issue"]'
    assert any(text.startswith(allowed) for text in agent_rows)
    assert any('"deniedCommands":["git push .*"]' in text for text in agent_rows)
    assert any(text.startswith('permission setting: mcpServers[github]={"command":"docker"') for text in agent_rows)
    assert any('"env":["PGPASSWORD"]' in text for text in mcp_rows)
    assert not [text for text in agent_rows + mcp_rows if "PLANTED" in text]


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    case = CASES / "config-and-credentials"
    timeline(cli, case, tmp_path)
    outputs = every_output(cli, tmp_path / "case.tar.zst", tmp_path)
    assert b"Show the reviewer agent" in outputs[0]
    for produced in outputs:
        assert not [value for value in PLANTED if value.encode() in produced]


def test_the_token_caches_are_never_collected_and_the_database_names_auth_kv(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    home = frozen_copy(CASES / "config-and-credentials" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
    records = {record["path"]: record for record in bundle_records(bundle) if record.get("agent") == "amazon-q"}
    assert records[".aws/sso/cache/d033e22ae348aeb5660fc2140aec35850c4da997.json"]["outcome"] == "never_collect"
    assert records[DB]["credential_tables"] == ["auth_kv"] == records[f"{DB}-wal"]["credential_tables"]
