"""Kilo CLI parsers, one rule per test (docs/agents/kilo-cli.md)."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records
from tests.test_golden import timeline

CASES = FIXTURES / "kilo-cli"
DATA = ".local/share/kilo"
DB = f"{DATA}/kilo.db"
SCHEMA = (CASES / "schema" / "kilo-7.7.9.sql").read_text()
SESSION, PROJECT = "ses_1", "p1"
T = 1783328400000
# every value planted in credentials-present: in kilo.db (account, account_state, control_account,
# session_share, the -wal's credential row) and in the never-collected files beside it
PLANTED = ("PLANTED", "kilo-at-", "kilo-rt-", "ctl-at-", "ctl-rt-", "share-secret-", "sk-or-v1-", "authjson-",
           "sk-ant-", "mcp-at-", "mcp-rt-", "mcp-secret-", "legacy-cli-token-", "org-legacy-", "zoe.billing",
           "ctl.PLANTED", "legacy-share-secret-", "org-PLANTED")


def database(*statements: str) -> bytes:
    """A kilo.db of kilo 7.7.9's schema with one project and session, and then ``statements``."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "kilo.db"
        connection = sqlite3.connect(path)
        connection.executescript(SCHEMA)
        connection.execute("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) "
                           "VALUES (?, '/home/zoe/site', ?, ?, '[]')", (PROJECT, T, T))
        connection.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                           "time_updated, agent, model) VALUES (?, ?, 'brave-otter', '/home/zoe/site', 'A title', "
                           "'7.7.9', ?, ?, 'code', '{\"providerID\":\"kilo\",\"modelID\":\"m1\"}')",
                           (SESSION, PROJECT, T, T + 9000))
        for statement in statements:
            connection.execute(statement)
        connection.commit()
        connection.close()
        return path.read_bytes()


def rows_of(data: bytes):
    return drafts(FakeBundle({("kilo-cli.kilo_db", DB): data}), DB, "kilo_cli.db.v1")


def message(message_id: str, data: dict) -> str:
    return f"INSERT INTO message VALUES ('{message_id}', '{SESSION}', {T + 1}, {T + 1}, '{json.dumps(data)}')"


def part(part_id: str, message_id: str, data: dict) -> str:
    return f"INSERT INTO part VALUES ('{part_id}', '{message_id}', '{SESSION}', {T + 2}, {T + 2}, '{json.dumps(data)}')"


# -- kilo.db ------------------------------------------------------------------------------------------------


def test_a_schema_with_kilos_json_function_index_is_read_not_refused():
    rows = rows_of(database(message("msg_1", {"role": "user", "time": {"created": T}}),
                            part("prt_1", "msg_1", {"type": "text", "text": "stream the export"})))
    assert "part_session_step_finish_idx" in SCHEMA and "json_valid" in SCHEMA  # the index kilo 7.7.9 creates
    assert [row.text for row in rows if row.turn_type == "user"] == ["stream the export"]
    assert not [row for row in rows if row.text.startswith("parser:")]


REFUSED = ("parser: unparseable file (kilo.db: cannot read: malformed database schema "
           "(part_session_step_finish_idx) - unsafe use of json_valid())")


def test_a_view_or_trigger_beside_the_json_index_keeps_the_schema_refused():
    for extra in ("CREATE VIEW everything AS SELECT json_extract(data, '$.x') FROM part",
                  "CREATE TRIGGER noted AFTER INSERT ON todo BEGIN DELETE FROM todo; END"):
        assert [row.text for row in rows_of(database(extra))] == [REFUSED], extra


def test_an_index_calling_a_function_outside_the_pure_list_keeps_the_schema_refused():
    assert [row.text for row in rows_of(database("CREATE INDEX odd ON part (session_id) WHERE hex(data) <> ''"))] == [
        REFUSED]


def test_the_session_row_names_kilos_agent_and_model_columns():
    [row] = [row for row in rows_of(database()) if row.text.startswith("session metadata:")]
    assert "agent=code" in row.text and 'model={"providerID":"kilo","modelID":"m1"}' in row.text


def test_a_saved_always_approval_is_a_permission_setting_for_its_permission():
    rows = rows_of(database(f"INSERT INTO permission VALUES ('psv_1', '{PROJECT}', 'bash', 'git status*', {T}, {T})"))
    [row] = [row for row in rows if row.text.startswith("permission setting:")]
    assert row.text == ('permission setting: approved[p1].bash="git status*" (from kilo.db permission table: '
                        'saved "always" approval psv_1)')
    assert (row.tool_name, row.timestamp_ns) == ("bash", T * 1_000_000)


def test_a_refused_tool_part_is_a_permission_decision_and_its_result_is_not_a_user_row():
    refused = "The user rejected permission to use this specific tool call."
    rows = rows_of(database(
        message("msg_1", {"role": "assistant", "time": {"created": T}, "modelID": "m1"}),
        part("prt_1", "msg_1", {"type": "tool", "callID": "c1", "tool": "edit",
                                "state": {"status": "error", "input": {}, "error": refused, "time": {"start": T}}})))
    assert [(row.turn_type, row.tool_use_id) for row in rows if row.tool_use_id] == [
        ("tool_use", "c1"), ("tool_result", "c1"), ("system", "c1")]
    assert "permission decision: denied" in [row.text for row in rows]
    assert not [row for row in rows if row.turn_type == "user"]


def test_board_posts_are_rows_in_the_senders_session_at_their_time():
    rows = rows_of(database(
        f"INSERT INTO kilo_board (root_session_id, objective, message_count, time_created, time_updated) "
        f"VALUES ('{SESSION}', 'Ship it', 1, {T}, {T})",
        f"INSERT INTO kilo_board_message VALUES ('kbm_1', '{SESSION}', 1, {T + 5}, 'ses_child', 'ALL', 'HOLD', "
        f"'wait for the migration', NULL, 'msg_9', 'toolu_9')"))
    board = [(row.text, row.session_id, row.timestamp_ns) for row in rows if row.text.startswith("board")]
    assert board == [
        (f"board: Ship it (root session {SESSION}, messages=1)", SESSION, T * 1_000_000),
        (f"board message: HOLD from ses_child to ALL: wait for the migration (board {SESSION} seq 1; posted by tool "
         "call toolu_9)", "ses_child", (T + 5) * 1_000_000)]


class TracedBundle(FakeBundle):
    """A FakeBundle whose SQLite connections record every statement they run."""

    statements: list[str]

    def open_sqlite(self, source):
        """The connection FakeBundle opens, with a trace callback appending to ``statements``."""
        connection = super().open_sqlite(source)
        connection.set_trace_callback(self.statements.append)
        return connection


def test_the_credential_tables_are_never_selected():
    bundle = TracedBundle({("kilo-cli.kilo_db", DB): database(
        "INSERT INTO account VALUES ('a1', 'z@example.org', 'u', 'tok-AAA', 'tok-BBB', NULL, 1, 1)",
        "INSERT INTO credential (id, label, value, time_created, time_updated) VALUES ('c', 'l', 'tok-CCC', 1, 1)")})
    bundle.statements = []
    rows = drafts(bundle, DB, "kilo_cli.db.v1")
    assert rows and not [row for row in rows if "tok-" in row.text or "z@example.org" in row.text]
    selects = " ".join(sql for sql in bundle.statements if sql.lstrip().upper().startswith("SELECT"))
    for table in ("account", "control_account", "credential", "session_share"):
        assert f'FROM "{table}"' not in selects and f"FROM {table} " not in selects and f"JOIN {table} " not in selects


def test_the_newest_rows_only_in_the_wal_are_read(cli, tmp_path: Path):
    case = CASES / "db-sessions"
    with_wal = timeline(cli, case, tmp_path / "a").decode()
    cut = tmp_path / "cut"
    shutil.copytree(case / "home", cut / "home")
    (cut / "home" / DATA / "kilo.db-wal").unlink()
    without = timeline(cli, cut, tmp_path / "b").decode()
    for only_in_wal in ("Also gzip the response and benchmark it.", "board message: RESULT from",
                        "model: anthropic/claude-sonnet-4.5 -> anthropic/claude-opus-4.1"):
        assert only_in_wal in with_wal and only_in_wal not in without


# -- credentials on the output bytes --------------------------------------------------------------------------


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    case = CASES / "credentials-present"
    csv_bytes = timeline(cli, case, tmp_path)
    bundle = tmp_path / "case.tar.zst"
    jsonl = tmp_path / "t.jsonl"
    report = tmp_path / "r.html"
    assert cli("analyze", bundle, "-o", jsonl, "--format", "jsonl", "--quiet").exit_code == 0
    assert cli("report", bundle, "-o", report, "--jobs", "1").exit_code == 0
    outputs = {"csv": csv_bytes, "jsonl": jsonl.read_bytes(), "report": report.read_bytes()}
    assert b"Summarise notes/2026-07-03.md" in outputs["csv"] and b"amber-lynx" in outputs["report"]
    for name, produced in outputs.items():
        leaked = [value for value in PLANTED if value.encode() in produced]
        assert not leaked, (name, leaked)


def test_the_token_files_are_never_collected_and_the_database_names_its_credential_tables(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main
    from tests.test_golden import frozen_copy

    home = frozen_copy(CASES / "credentials-present" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
    records = {record["path"]: record for record in bundle_records(bundle) if record.get("agent") == "kilo-cli"}
    for never in (f"{DATA}/auth.json", f"{DATA}/mcp-auth.json", ".kilocode/cli/config.json",
                  f"{DATA}/storage/session_share/ses_5d19f4c2affeC3dE5fG7hJ9kL2.json"):
        assert records[never]["outcome"] == "never_collect", never
    tables = ["account", "control_account", "credential", "session_share"]
    assert records[DB]["credential_tables"] == tables
    assert records[f"{DB}-wal"]["credential_tables"] == tables


# -- the TUI files, the config and plans ----------------------------------------------------------------------


def golden(case: str) -> list[dict]:
    with open(CASES / case / "expected.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_prompt_the_database_holds_is_one_row_and_a_deleted_sessions_prompt_stays_secondary():
    rows = golden("tui-config")
    prompts = [(row["text"][:40], row["origin"]) for row in rows if row["turn_type"] == "user"]
    assert prompts == [("Why does the nightly build fail on Node ", "primary"),
                       ("Error [ERR_REQUIRE_ESM]: require() of ES", "secondary")]


def test_every_config_rule_is_a_permission_setting_and_the_inline_api_key_is_in_no_row():
    rows = golden("tui-config")
    settings = [row["text"].split(" (from")[0] for row in rows if row["text"].startswith("permission setting:")]
    assert settings == ['permission setting: permission.edit="ask"',
                        'permission setting: permission.bash={"*":"ask","git status":"allow","rm -rf *":"deny"}',
                        'permission setting: permission.webfetch="allow"', "permission setting: tools.websearch=false",
                        'permission setting: agent.plan.permission.edit="deny"']
    assert not [row for row in rows if "sk-or-config" in "".join(row.values())]


def test_a_plan_names_the_session_slug_and_creation_time_of_its_file_name():
    files = {("kilo-cli.plans", f"{DATA}/plans/1783328600000-swift-crane.md"): b"# Plan\n\n1. do it\n",
             ("kilo-cli.plans", f"{DATA}/plans/notes.md"): b"free text"}
    bundle = FakeBundle(files)
    [named] = drafts(bundle, f"{DATA}/plans/1783328600000-swift-crane.md", "kilo_cli.plan.v1")
    [other] = drafts(bundle, f"{DATA}/plans/notes.md", "kilo_cli.plan.v1")
    assert named.text == "plan: (session slug swift-crane, created 2026-07-06T09:03:20.000Z) # Plan\n\n1. do it"
    assert other.text == "plan: free text" and named.timestamp_source == "file-mtime"


def test_a_plan_that_is_not_utf8_is_one_parser_row():
    bundle = FakeBundle({("kilo-cli.plans", f"{DATA}/plans/1-x.md"): b"ok \xff"})
    assert [row.text for row in drafts(bundle, f"{DATA}/plans/1-x.md", "kilo_cli.plan.v1")] == [
        "parser: unparseable file (1-x.md is not UTF-8 at byte 3)"]
