"""Warp's warp.sqlite parser, one rule per test (docs/agents/warp.md)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import every_output
from tests.fixture_sqlite import sqlite_bytes
from tests.test_golden import frozen_copy, timeline

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "warp"
SCHEMA = (CASES / "schema" / "warp-2026-08.sql").read_text()
DB = ".local/state/warp-terminal/warp.sqlite"
CONV = "e05f25f4-9a1b-4c2d-8e3f-0a1b2c3d4e5f"
# every value planted where no output may show it: the MCP secrets (database file and -wal), the never-collected
# ~/.warp/.mcp.json, the protobuf task blob's bytes and the server conversation token
PLANTED = ("ghp_PLANTEDmcpenv0000", "mcp-var-PLANTED-1111", "mcp-var-PLANTED-2222", "mcpjson-PLANTED-3333",
           "PLANTED-TASK-TEXT", "srv-conv-7d1e")


class TracedBundle(FakeBundle):
    """A FakeBundle whose SQLite connections record every statement they run."""

    statements: list[str]

    def open_sqlite(self, source):
        """The connection FakeBundle opens, with a trace callback appending to ``statements``."""
        connection = super().open_sqlite(source)
        connection.set_trace_callback(self.statements.append)
        return connection


def database(*statements: str, schema: str = SCHEMA) -> bytes:
    return sqlite_bytes(schema + "".join(f"{statement};\n" for statement in statements))


def rows_of(data: bytes):
    return drafts(FakeBundle({("warp.warp_db", DB): data}), DB, "warp.db.v1")


def texts(rows):
    return [row.text for row in rows]


def query(qid: int, text: str, context=(), status='"Completed"', model="m1", when="2026-08-27 19:22:03.120451",
          conversation=CONV, directory="/home/kim/svc") -> str:
    payload = json.dumps([{"Query": {"text": text, "context": list(context), "referenced_attachments": {}}}],
                         separators=(",", ":"))  # as serde_json writes it
    place = "NULL" if directory is None else f"'{directory}'"
    return (f"INSERT INTO ai_queries VALUES ({qid}, 'ex-{qid}', '{conversation}', '{when}', "
            f"'{payload.replace(chr(39), chr(39) * 2)}', {place}, '{status}', '{model}', '', '')")


def block(bid: int, command: bytes, output: bytes, metadata: dict | None, code=0, done="2026-08-27 19:22:10.25",
          did=1) -> str:
    meta = "NULL" if metadata is None else "'" + json.dumps(metadata) + "'"
    finished = "NULL" if done is None else f"'{done}'"
    return (f"INSERT INTO blocks (id, pane_leaf_uuid, stylized_command, stylized_output, pwd, git_branch, exit_code, "
            f"did_execute, completed_ts, start_ts, block_id, ai_metadata) VALUES ({bid}, X'00', X'{command.hex()}', "
            f"X'{output.hex()}', '/p', 'main', {code}, {did}, {finished}, '2026-08-27 19:22:09.5', 'b{bid}', {meta})")


# -- times ---------------------------------------------------------------------------------------------------------


def test_start_ts_is_utc_text_read_exactly_and_a_text_without_a_time_is_untimed():
    rows = rows_of(database(query(1, "hi"), query(2, "later", when="yesterday")))
    user = [row for row in rows if row.turn_type == "user"]
    assert (user[0].timestamp_ns, user[0].timestamp_source) == (1_787_858_523_120_451_000, "record")
    assert (user[1].timestamp_ns, user[1].timestamp_source) == (None, "none")


# -- prompts ---------------------------------------------------------------------------------------------------------


def test_a_prompt_is_a_user_row_with_its_conversation_project_branch_and_model():
    rows = rows_of(database(query(1, "why is port 8080 busy", [
        {"Directory": {"pwd": "/elsewhere"}}, {"Git": {"head": "abc1234", "branch": "main"}}])))
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.text, user.session_id, user.project_path, user.git_branch, user.model) == (
        "why is port 8080 busy", CONV, "/home/kim/svc", "main", "m1")


def test_without_a_working_directory_the_directory_context_is_the_project_and_head_the_branch():
    rows = rows_of(database(query(1, "x", [{"Directory": {"pwd": "/from/context"}}, {"Git": {"head": "3f9a1c7"}}],
                                  directory=None)))
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.project_path, user.git_branch) == ("/from/context", "3f9a1c7")


def test_model_rows_follow_each_conversation_and_start_again_for_the_next():
    rows = rows_of(database(query(1, "a", model="m1"), query(2, "b", model="m1", when="2026-08-27 19:22:04"),
                            query(3, "c", model="m2", when="2026-08-27 19:22:05"),
                            query(4, "d", model="m2", conversation="other")))
    assert [text for text in texts(rows) if text.startswith("model:")] == ["model: m1", "model: m1 -> m2", "model: m2"]


def test_only_statuses_other_than_completed_give_a_reply_status_row():
    rows = rows_of(database(query(1, "a"), query(2, "b", status='"Cancelled"'), query(3, "c", status='"Failed"'),
                            query(4, "d", status='"Pending"'), query(5, "e", status="weird")))
    assert [text for text in texts(rows) if text.startswith("reply status:")] == [
        "reply status: Cancelled (by the user)", "reply status: Failed (the output stream failed)",
        "reply status: Pending (not finished when last written)", 'reply status: "weird"']


def test_attached_context_is_an_attachment_row_and_ambient_context_is_not():
    rows = rows_of(database(query(1, "a", [{"SelectedText": "error: boom"}, {"CurrentTime": {"current_time": "x"}},
                                           {"File": {"path": "/p/a.py"}}, {"ExecutionEnvironment": {}}])))
    assert [text for text in texts(rows) if text.startswith("attachment:")] == [
        'attachment: SelectedText: "error: boom"', 'attachment: File: {"path":"/p/a.py"}']


def test_an_input_that_is_not_json_or_not_a_query_is_a_parser_row_and_the_rest_is_read():
    rows = rows_of(database("INSERT INTO ai_queries VALUES (1, 'e1', 'c', '2026-08-27 19:22:03', '[{\"Query\":', NULL,"
                            " '\"Completed\"', '', '', '')",
                            "INSERT INTO ai_queries VALUES (2, 'e2', 'c', '2026-08-27 19:22:04', '[{\"Other\":{}}]',"
                            " NULL, '\"Completed\"', '', '', '')", query(3, "still read")))
    problems = [text for text in texts(rows) if text.startswith("parser:")]
    assert len(problems) == 2 and "input is not JSON" in problems[0] and "an input that is not a Query" in problems[1]
    assert "still read" in texts(rows)


# -- blocks ----------------------------------------------------------------------------------------------------------


def test_an_agent_block_is_a_call_joined_to_its_result_by_the_action_id_with_escapes_removed():
    rows = rows_of(database(block(1, b"\x1b[1mlsof -i :8080\x1b[0m", b"\x1b[32mnode 4242\x1b[0m\r\n\x1b]0;t\x07",
                                  {"requested_command_action_id": "a1", "conversation_id": CONV})))
    calls = [(row.turn_type, row.tool_name, row.tool_use_id, row.text, row.session_id) for row in rows
             if row.turn_type in ("tool_use", "tool_result")]
    assert calls == [("tool_use", "run_shell_command", "a1", "lsof -i :8080", CONV),
                     ("tool_result", "run_shell_command", "a1", "node 4242\n[exit code 0]", CONV)]
    result = next(row for row in rows if row.turn_type == "tool_result")
    assert result.timestamp_ns == 1_787_858_530_250_000_000  # completed_ts


def test_the_older_action_id_key_joins_too_and_an_unfinished_or_unexecuted_block_says_so():
    rows = rows_of(database(block(1, b"sleep 100", b"", {"action_id": "old", "conversation_id": CONV}, done=None),
                            block(2, b"rm -rf x", b"", {"action_id": "n", "conversation_id": CONV}, did=0)))
    results = [(row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("old", "[no completion recorded: still running when the block was written]"),
                       ("n", "[not executed]")]


def test_a_block_without_ai_metadata_gives_no_row_and_one_without_an_action_is_a_terminal_block_row():
    rows = rows_of(database(block(1, b"ls", b"a", None),
                            block(2, b"git status", b"clean", {"conversation_id": CONV}, code=0)))
    assert texts(rows) == ["terminal block (no agent action): git status\nclean\n[exit code 0]"]


def test_escape_removal_is_linear_on_hostile_output():
    from aitrail.analyzer.parsers.warp.blocks import terminal_text

    hostile = "\x1b[" + "1;" * 500_000 + "\x1b]" + "x" * 500_000
    started = time.monotonic()
    terminal_text(hostile)
    assert time.monotonic() - started < 2


# -- conversations and tasks -------------------------------------------------------------------------------------


def conversation(data: dict, summary: dict | None = None, cid: str = CONV) -> str:
    summary_sql = "NULL" if summary is None else "'" + json.dumps(summary).replace("'", "''") + "'"
    return (f"INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at, summary) VALUES "
            f"('{cid}', '{json.dumps(data)}', '2026-08-27 19:26:02', {summary_sql})")


def test_a_conversation_gives_its_title_setting_tokens_usage_compaction_and_reverts():
    rows = rows_of(database(conversation(
        {"server_conversation_token": "srv-secretish", "autoexecute_override": "RunToCompletion",
         "reverted_action_ids": ["x1"], "parent_conversation_id": "p1",
         "conversation_usage_metadata": {"was_summarized": True, "credits_spent": 2.5,
                                         "token_usage": [{"model_id": "m1", "total_tokens": 10}],
                                         "tool_usage_metadata": {"grep_stats": {"count": 4}}}},
        {"title": "T", "initial_working_directory": "/w", "initial_query": "q"})))
    assert texts(rows) == [
        "session: T (initial_working_directory=/w, parent_conversation_id=p1)", "q",
        'permission setting: autoexecute_override="RunToCompletion" (from agent_conversations, conversation '
        f"{CONV})", "tokens generated: model=m1, warp_tokens=10 (conversation total)",
        "session usage: credits_spent=2.5, tool calls: grep=4",
        "compaction: the conversation was summarized (conversation_usage_metadata.was_summarized)",
        "reverted actions: x1"]
    assert all(row.project_path == "/w" and row.timestamp_ns for row in rows)
    assert not [row for row in rows if "srv-secretish" in row.text]
    assert next(row for row in rows if row.text == "q").origin == "secondary"


def test_the_initial_query_is_given_only_when_ai_queries_no_longer_holds_it():
    held = rows_of(database(query(1, "it's held"), conversation({}, {"title": "T", "initial_query": "it's held"})))
    assert texts(held).count("it's held") == 1
    gone = rows_of(database(query(1, "another"), conversation({}, {"title": "T", "initial_query": "it's gone"})))
    assert [row.origin for row in gone if row.text == "it's gone"] == ["secondary"]


def test_a_task_blob_is_one_parser_row_with_its_size_and_its_bytes_are_never_fetched():
    bundle = TracedBundle({("warp.warp_db", DB): database(
        f"INSERT INTO agent_tasks VALUES (1, '{CONV}', 't1', X'{b'SECRET-BYTES'.hex()}', '2026-08-27 19:23:10')")})
    bundle.statements = []
    rows = drafts(bundle, DB, "warp.db.v1")
    assert texts(rows) == ["parser: agent_tasks task t1 not decoded (protobuf warp.multi_agent.v1.Task, 12 bytes): "
                           "it holds the task's messages, the agent's replies among them"]
    assert rows[0].session_id == CONV and rows[0].timestamp_ns
    selects = [sql for sql in bundle.statements if sql.lstrip().upper().startswith("SELECT")]
    task_reads = [sql for sql in selects if '"task"' in sql]
    assert task_reads and all('length("task")' in sql or 'typeof("task")' in sql for sql in task_reads)
    assert all('CASE WHEN length("task")' not in sql for sql in selects)


def test_the_credential_tables_are_never_selected():
    bundle = TracedBundle({("warp.warp_db", DB): database(
        "INSERT INTO mcp_environment_variables VALUES (X'01', '{\"K\":\"tok-AAA\"}')",
        "INSERT INTO mcp_server_installations VALUES ('i', '{}', '2026-01-01 00:00:00', '{\"k\":\"tok-BBB\"}', 1, "
        "'2026-01-01 00:00:00')", query(1, "hi"))})
    bundle.statements = []
    rows = drafts(bundle, DB, "warp.db.v1")
    assert rows and not [row for row in rows if "tok-" in row.text]
    selects = " ".join(sql for sql in bundle.statements if sql.lstrip().upper().startswith("SELECT"))
    for table in ("mcp_environment_variables", "mcp_server_installations"):
        assert table not in selects


# -- schema drift and damage -------------------------------------------------------------------------------------


def test_missing_tables_and_columns_are_parser_rows_and_the_rest_is_read():
    rows = rows_of(sqlite_bytes(
        "CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, conversation_id TEXT, start_ts DATETIME, input TEXT);"
        "INSERT INTO ai_queries VALUES (1, 'c', '2026-08-27 19:22:03', '[{\"Query\":{\"text\":\"old prompt\"}}]');"))
    problems = [text for text in texts(rows) if text.startswith("parser:")]
    assert "parser: table agent_conversations is missing (a Warp build from before it, or another schema): nothing " \
           "was read from it" in problems
    assert "parser: table ai_queries has no column model_id (a Warp build from before it, or another schema): its " \
           "rows are read without it" in problems
    assert "old prompt" in texts(rows)


def test_a_view_named_like_a_table_is_never_read():
    rows = rows_of(sqlite_bytes("CREATE TABLE t (x); CREATE VIEW ai_queries AS SELECT 'x' AS input;"))
    assert "parser: table ai_queries is missing (a Warp build from before it, or another schema): nothing was read " \
           "from it" in texts(rows)


def test_a_file_that_is_not_a_database_is_one_row():
    assert texts(rows_of(b"not a database at all, just text" * 10)) == [
        "parser: unparseable file (warp.sqlite: cannot read: file is not a database)"]


# -- the fixture home: WAL, credentials, output bytes ----------------------------------------------------------------


def test_the_newest_rows_only_in_the_wal_are_read(cli, tmp_path: Path):
    case = CASES / "agent-session-wal"
    with_wal = timeline(cli, case, tmp_path / "a").decode()
    cut = tmp_path / "cut"
    shutil.copytree(case / "home", cut / "home")
    (cut / "home" / (DB + "-wal")).unlink()
    without = timeline(cli, cut, tmp_path / "b").decode()
    for only_in_wal in ("it says operation not permitted; try again with sudo", "kill 4242", "Port 8080 busy",
                        "reverted actions: toolu_01EditCfg", "5c2e7d3f-1a4b-4f6c-9d8e-0f1a2b3c4d5e"):
        assert only_in_wal in with_wal and only_in_wal not in without


def test_no_planted_secret_or_blob_byte_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    from aitrail.collector.bundle.reader import BundleReader

    home = frozen_copy(CASES / "agent-session-wal" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    with BundleReader(bundle) as reader:
        files = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
    outcomes = {item["path"].rsplit("/", 1)[-1]: item for item in files}
    assert outcomes[".mcp.json"]["outcome"] == "never_collect"
    assert outcomes["warp.sqlite"]["credential_tables"] == ["mcp_environment_variables", "mcp_server_installations"]
    outputs = every_output(cli, bundle, tmp_path)
    assert b"why is port 8080 busy" in outputs[0] and b"run_shell_command" in outputs[2]
    for planted in PLANTED:
        assert not [output for output in outputs if planted.encode() in output], planted
