"""Kiro (IDE and Kiro CLI) parsers, one rule per test (docs/agents/kiro.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from aitrail.analyzer.parsers.kiro.ide import workspace_path
from aitrail.analyzer.parsers.kiro.values import kiro_time
from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records, every_output
from tests.test_golden import frozen_copy, timeline

CASES = FIXTURES / "kiro"
CLI = ".kiro/sessions/cli"
SESSION = "3a4b5c6d-0000-4000-8000-0000000000aa"
WORKSPACES = ".config/Kiro/User/globalStorage/kiro.kiroagent/workspace-sessions"


def golden(case: str) -> list[dict]:
    with open(CASES / case / "expected.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def line(kind: str, data: dict) -> bytes:
    return json.dumps({"version": "v1", "kind": kind, "data": data}).encode() + b"\n"


def session_rows(log: bytes, sidecar: bytes | None = None):
    files = {("kiro.cli_sessions", f"{CLI}/{SESSION}.jsonl"): log}
    if sidecar is not None:
        files[("kiro.cli_session_state", f"{CLI}/{SESSION}.json")] = sidecar
    return drafts(FakeBundle(files), f"{CLI}/{SESSION}.jsonl", "kiro.cli_session.v1")


# -- Kiro CLI session logs -----------------------------------------------------------------------------------------


def test_a_prompt_time_is_epoch_seconds_and_the_records_after_it_take_it_as_index():
    rows = session_rows(line("Prompt", {"meta": {"timestamp": 1788200000}, "content": [{"kind": "text", "data": "hi"}]})
                        + line("AssistantMessage", {"content": [{"kind": "text", "data": "hello"}]}))
    assert [(row.turn_type, row.timestamp_ns, row.timestamp_source) for row in rows] == [
        ("user", 1788200000 * 10**9, "record"), ("assistant", 1788200000 * 10**9, "index")]


def test_a_prompt_time_of_ms_magnitude_is_read_as_ms():
    assert kiro_time(1788200000123) == 1788200000123 * 10**6
    assert kiro_time("1788200000") == 1788200000 * 10**9
    assert kiro_time("2026-08-31T18:13:20") is None  # no zone: never given one


def test_tool_use_and_result_are_joined_by_tool_use_id_with_the_sidecars_project_and_model():
    sidecar = json.dumps({"session_id": SESSION, "cwd": "/home/lee/proj/api", "created_at": "2026-08-31T18:13:19Z",
                          "session_state": {"model_info": {"model_id": "claude-sonnet-4.6"}}}).encode()
    rows = session_rows(line("AssistantMessage", {"content": [{"kind": "toolUse", "data": {
        "toolUseId": "t1", "name": "fs_read", "input": {"path": "a"}}}]})
        + line("ToolResults", {"content": [{"kind": "toolResult", "data": {
            "toolUseId": "t1", "status": "error", "content": [{"kind": "text", "data": "denied"}]}}]}), sidecar)
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text, row.project_path, row.model) for row in rows] == [
        ("tool_use", "fs_read", "t1", '{"path":"a"}', "/home/lee/proj/api", "claude-sonnet-4.6"),
        ("tool_result", "fs_read", "t1", "[tool error] denied", "/home/lee/proj/api", "claude-sonnet-4.6")]
    assert rows[0].timestamp_source == "index"  # before any prompt: the sidecar's created_at


def test_an_envelope_line_and_an_acp_notification_are_read_not_dropped():
    rows = session_rows(b'{"AssistantMessage":{"content":[{"kind":"text","data":"from an envelope"}]}}\n'
                        b'{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call"}}}\n')
    assert [(row.turn_type, row.text[:40]) for row in rows] == [
        ("assistant", "from an envelope"), ("system", 'record session/update (tool_call): {"jso')]


def test_the_sidecar_gives_the_session_title_model_and_token_rows():
    rows = golden("cli-sessions")
    state = [row["text"].split(" (")[0] for row in rows if row["store"] == "kiro.cli_session_state"]
    assert state == ["session: Health endpoint", "model: claude-sonnet-4.6",
                     "tokens generated: model=claude-sonnet-4.6 input_token_count=5120 output_token_count=388 "
                     "credits=0.42", "tokens generated: model=claude-sonnet-4.6 input_token_count=6015 "
                     "output_token_count=97 credits=0.18"]


def test_the_v3_session_folders_are_collected_documentary():
    rows = golden("cli-sessions")
    unparsed = [row["store"] for row in rows if row["text"].startswith("integrity: not parsed")]
    assert unparsed.count("kiro.kas_sessions") == 2


# -- the IDE -----------------------------------------------------------------------------------------------------


def test_the_workspace_folder_name_is_the_base64url_project_path():
    assert workspace_path("L2hvbWUvbGVlL3Byb2ovYXBp") == "/home/lee/proj/api"
    assert workspace_path("L2hvbWUvbGVlL3NyYy9hcGk-djE") == "/home/lee/src/api>v1"  # '-' is base64url's '+'
    assert workspace_path("L1VzZXJzL2xlZS9Db2RlL3dpZGdldHM_") == "/Users/lee/Code/widgets?"  # '_' is '/'
    assert workspace_path("QzpcVXNlcnNcbGVlXHdlYg") == "C:\\Users\\lee\\web"
    assert workspace_path("bm90LWEtcGF0aA") == ""  # "not-a-path": decodes, but names no path


def test_ide_times_in_three_forms_are_each_read_as_written():
    rows = golden("ide-workspace-sessions")
    index = [row["text"] for row in rows if row["store"] == "kiro.ide_session_index"]
    assert "dateCreated=1788210000000 (epoch ms)" in index[0] and "dateCreated=1788213600 (epoch s)" in index[1]
    assert {row["project_path"] for row in rows} == {"/home/lee/proj/api", "/home/lee/dev/café"}
    timed = {row["text"]: (row["timestamp_utc"], row["timestamp_source"]) for row in rows}
    assert timed["Why is CORS failing on /health?"] == ("2026-08-31T22:00:05.000Z", "record")
    assert timed["The allowed origin list omits http://localhost:5173."] == ("2026-08-31T22:00:05.000Z", "index")
    assert timed["Translate the menu to French"] == ("2026-08-31T23:46:40.000Z", "record")


def test_a_message_without_its_own_time_takes_its_sessions_index_time():
    folder = f"{WORKSPACES}/L2hvbWUvbGVlL3Byb2ovYXBp"
    index = b'{"sessions":[{"id":"s1","createdAt":1788210000}]}'
    files = {("kiro.ide_session_index", f"{folder}/sessions.json"): index,
             ("kiro.ide_sessions", f"{folder}/s1.json"): b'{"history":[{"message":{"role":"user","content":"q"}}]}'}
    [row] = drafts(FakeBundle(files), f"{folder}/s1.json", "kiro.ide_session.v1")
    assert (row.timestamp_ns, row.timestamp_source, row.session_id) == (1788210000 * 10**9, "index", "s1")


# -- the legacy database and credentials --------------------------------------------------------------------------


def test_the_legacy_database_recovers_compacted_turns_from_the_wal_once():
    rows = golden("cli-legacy-db")
    secondary = [(row["turn_type"], row["locator"].split("/")[0]) for row in rows if row["origin"] == "secondary"]
    # turns the main file already held come from it read alone (wal:0); the rest from WAL commit 1
    assert secondary == [("user", "wal:0"), ("assistant", "wal:0"), ("tool_use", "wal:0"), ("tool_result", "wal:1"),
                         ("assistant", "wal:1")]
    assert "Why does the build warn about React keys?" in [row["text"] for row in rows if row["origin"] == "primary"]


def test_auth_kv_is_never_selected():
    class Traced(FakeBundle):
        statements: list[str] = []

        def open_sqlite(self, source):
            connection = super().open_sqlite(source)
            connection.set_trace_callback(self.statements.append)
            return connection

    database = CASES / "cli-legacy-db" / "home" / ".local/share/kiro-cli/data.sqlite3"
    path = ".local/share/kiro-cli/data.sqlite3"
    bundle = Traced({("kiro.cli_db", path): database.read_bytes()})
    rows = drafts(bundle, path, "kiro.cli_db.v1")
    assert rows and not [sql for sql in bundle.statements if "auth_kv" in sql]


def test_no_planted_credential_reaches_the_timelines_or_the_report(cli, tmp_path: Path):
    for case in ("cli-legacy-db", "config-and-credentials"):
        timeline(cli, CASES / case, tmp_path / case)
        outputs = every_output(cli, tmp_path / case / "case.tar.zst", tmp_path / case)
        assert len(outputs[0]) > 1000
        for produced in outputs:
            assert b"PLANTED" not in produced, case


def test_the_sign_in_token_is_never_collected_and_the_database_names_auth_kv(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    records = {}
    for case in ("cli-legacy-db", "config-and-credentials"):
        home = frozen_copy(CASES / case / "home", tmp_path / case / "home")
        bundle = tmp_path / case / "b.tar.zst"
        assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
        records.update({record["path"]: record for record in bundle_records(bundle) if record.get("agent") == "kiro"})
    assert records[".aws/sso/cache/kiro-auth-token.json"]["outcome"] == "never_collect"
    database = ".local/share/kiro-cli/data.sqlite3"
    assert records[database]["credential_tables"] == ["auth_kv"] == records[f"{database}-wal"]["credential_tables"]
    assert records[".kiro/settings/mcp.json"]["outcome"] == "collected"
