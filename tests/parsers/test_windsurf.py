"""Windsurf parsers, one rule per test (docs/agents/windsurf.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import bundle_records, every_output
from tests.fixture_sqlite import dump, sqlite_bytes
from tests.parsers.protobuf_encode import b64, data, summary, summary_map
from tests.test_golden import frozen_copy

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "windsurf"
GLOBAL = ".config/Windsurf/User/globalStorage/state.vscdb"
WS = "7a4e1c0f9b2d4e55b6c3d2a1f0e9d8c7"
MAP = f".config/Windsurf/User/workspaceStorage/{WS}/workspace.json"
CASCADE = "4d3c2b1a-0000-4000-8000-00000000beef"
PB = f".codeium/windsurf/cascade/{CASCADE}.pb"
SCHEMA = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"


def state_db(state: dict, *more: tuple[str, str]) -> bytes:
    rows = [("codeium.windsurf", json.dumps(state)), *more]
    values = " ".join(f"INSERT INTO ItemTable VALUES ('{key}', '{value.replace(chr(39), chr(39) * 2)}');"
                      for key, value in rows)
    return sqlite_bytes(f"{SCHEMA} {values}")


def state_rows(state: dict, *more: tuple[str, str], files: dict | None = None):
    bundle = {("windsurf.global_state", GLOBAL): state_db(state, *more), **(files or {})}
    return drafts(FakeBundle(bundle), GLOBAL, "windsurf.state_vscdb.v1")


def one_summary(**fields) -> dict:
    body = summary(fields.pop("title", "Fix flaky retry test"), 12, 1787040000, 1787040131, **fields)
    return {f"windsurf.state.cachedTrajectorySummaries:{WS}": summary_map([(CASCADE, body)], wrapped=False)}


# -- trajectory summaries ----------------------------------------------------------------------------------


def test_a_summary_is_a_session_row_at_its_earliest_timestamp_and_a_model_row_at_its_latest():
    rows = state_rows(one_summary(workspace="file:///home/dana/src/billing-api", model="MODEL_SWE_1_5_SLOW"))
    session, model = rows
    assert session.text.startswith("session: Fix flaky retry test (trajectory summary: 12 steps; timestamps "
                                   "2026-08-18T08:00:00.000Z to 2026-08-18T08:02:11.500Z; workspace "
                                   "file:///home/dana/src/billing-api; model MODEL_SWE_1_5_SLOW; ")
    assert (session.session_id, session.project_path, session.timestamp_ns) == (
        CASCADE, "/home/dana/src/billing-api", 1787040000 * 10**9)
    assert model.text == "model: MODEL_SWE_1_5_SLOW (trajectory summary)"
    assert model.timestamp_ns == 1787040131_500_000_000 and model.session_id == CASCADE


def test_the_summary_row_says_whether_the_opaque_conversation_file_is_in_the_bundle():
    present = state_rows(one_summary(), files={("windsurf.cascade", PB): b"\x8f\x11"})[0].text
    absent = state_rows(one_summary())[0].text
    assert present.endswith(f"its conversation file {PB} is in the bundle (encrypted at rest, not read))")
    assert absent.endswith("; no conversation file for it is in the bundle)")


def test_without_a_workspace_uri_the_project_is_the_windows_workspace_json():
    files = {("windsurf.workspace_map", MAP): b'{"folder": "file:///home/dana/src/ledger"}'}
    rows = state_rows(one_summary(), files=files)
    assert rows[0].project_path == "/home/dana/src/ledger"
    uri = state_rows(one_summary(workspace="file:///home/dana/src/own"), files=files)
    assert uri[0].project_path == "/home/dana/src/own"


def test_the_active_trajectory_is_not_decoded_but_said_to_exist_with_its_size():
    rows = state_rows({f"windsurf.state.cachedActiveTrajectory:{WS}": b64(b"\x0a\x24" + b"x" * 36)})
    assert [row.text for row in rows] == [
        f"parser: codeium.windsurf windsurf.state.cachedActiveTrajectory:{WS} cannot be read: protobuf trajectory "
        "with no public schema; 38 bytes"]
    assert rows[0].timestamp_source == "none"


def test_other_keys_of_the_row_and_other_rows_are_never_read():
    state = {**one_summary(), "windsurf.state.apiKey": "FAKE_KEY_IN_STATE"}
    rows = state_rows(state, ("windsurfAuthStatus", '{"apiKey":"FAKE_AUTH_STATUS"}'),
                      ('secret://{"extensionId":"codeium.windsurf","key":"k"}', "FAKE_SECRET_ROW"))
    assert len(rows) == 1 and not [row for row in rows if "FAKE" in row.text]


def test_damaged_values_are_parser_rows_and_the_next_value_is_still_read():
    good = one_summary()
    state = {"windsurf.state.cachedTrajectorySummaries:aaaa": "%% not base64 %%",
             "windsurf.state.cachedTrajectorySummaries:bbbb": b64(data(1, data(1, CASCADE) + data(2, b"\x0a\xff"))),
             "windsurf.state.cachedTrajectorySummaries:cccc": 7, **good}
    rows = state_rows(state)
    texts = [row.text for row in rows]
    assert texts[0] == "parser: unparseable record (not base64, or over 33554432 bytes decoded)"
    assert texts[1].startswith("session: (untitled) (trajectory summary; ")  # the id survives the broken summary
    assert texts[2] == ("parser: unparseable record (summary stops early: field 1: length is not a complete varint "
                        "at byte 1)")
    assert texts[3] == ("parser: unparseable record (windsurf.state.cachedTrajectorySummaries:cccc is a JSON int, "
                        "not base64 text)")
    assert texts[4].startswith("session: Fix flaky retry test")


def test_a_database_without_itemtable_is_one_parser_row():
    bundle = FakeBundle({("windsurf.global_state", GLOBAL): sqlite_bytes("CREATE TABLE other (a);")})
    rows = drafts(bundle, GLOBAL, "windsurf.state_vscdb.v1")
    assert [row.text for row in rows] == [
        "parser: unparseable file (state.vscdb: cannot query ItemTable: no such table: ItemTable)"]


# -- MCP servers -------------------------------------------------------------------------------------------


def mcp_rows(document: dict | bytes):
    raw = document if isinstance(document, bytes) else json.dumps(document).encode()
    path = ".codeium/windsurf/mcp_config.json"
    return drafts(FakeBundle({("windsurf.mcp_config", path): raw}), path, "windsurf.mcp_config.v1")


def test_server_url_is_read_without_its_query_and_env_and_header_values_never_appear():
    rows = mcp_rows({"mcpServers": {
        "docs": {"serverUrl": "https://mcp.example.invalid/sse?key=SECRETQ", "headers": {"Authorization": "SECRETH"}},
        "gh": {"command": "docker", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "SECRETE"}}}})
    assert [row.text for row in rows] == [
        'permission setting: mcpServers[docs]={"url":"https://mcp.example.invalid/sse","headers":["Authorization"]} '
        "(from mcp_config.json, file mtime)",
        'permission setting: mcpServers[gh]={"command":"docker","env":["GITHUB_PERSONAL_ACCESS_TOKEN"]} '
        "(from mcp_config.json, file mtime)"]
    assert all(row.timestamp_source == "file-mtime" for row in rows)


def test_an_mcp_config_that_is_not_json_is_one_parser_row_that_never_quotes_it():
    rows = mcp_rows(b'{"mcpServers": {"x": {"env": {"K": "SECRET_IN_BROKEN_FILE"')
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (MCP settings are not JSON")
    assert "SECRET_IN_BROKEN_FILE" not in rows[0].text


# -- fixtures through collect and analyze ------------------------------------------------------------------


def _bundle(cli, tmp_path: Path, case: str) -> Path:
    home = frozen_copy(CASES / case / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    return bundle


def _analyzed(cli, tmp_path: Path, case: str) -> tuple[dict, list[dict]]:
    bundle = _bundle(cli, tmp_path, case)
    summary, timeline = tmp_path / "s.json", tmp_path / "t.jsonl"
    result = cli("analyze", bundle, "-o", timeline, "--format", "jsonl", "--summary", summary, "--quiet")
    assert result.exit_code == 0, result.stderr
    return json.loads(summary.read_text()), [json.loads(line) for line in timeline.read_text().splitlines()]


def test_the_cascade_files_are_opaque_in_the_summary_with_reason_size_and_a_timeline_row(cli, tmp_path):
    summary, rows = _analyzed(cli, tmp_path, "cascade-summaries")
    entries = {item["path"].rsplit("/", 1)[-1]: item for item in summary["not_parsed"]}
    beef = entries[f"{CASCADE}.pb"]
    assert beef["opaque"] is True and beef["size"] == 4096 and beef["store"] == "windsurf.cascade"
    assert "entropy 7.8-8.0" in beef["reason"] and "per-UUID key held by the Windsurf language server" in beef["reason"]
    assert beef["modified_utc"] == "2025-10-03T00:00:00.000Z"
    assert entries["4d3c2b1a-0000-4000-8000-00000000c0de.pb"]["store"] == "windsurf.implicit"
    opaque = [row for row in rows if row["store"] == "windsurf.cascade"]
    assert len(opaque) == 3 and all(row["text"].startswith("integrity: not parsed: cannot be read: encrypted or "
                                                           "obfuscated at rest") for row in opaque)
    assert f"; 4096 bytes, SHA-256 {beef['sha256']}" in " ".join(row["text"] for row in opaque)


def test_earlier_versions_in_the_wal_and_the_backup_are_secondary_rows_given_once(cli, tmp_path):
    _, rows = _analyzed(cli, tmp_path, "cascade-summaries")
    sessions = sorted((row["session_id"][-5:], row["origin"], row["locator"].split("/", 1)[0])
                      for row in rows if row["text"].startswith("session:"))
    assert sessions == [
        ("0beef", "secondary", "wal:0"),  # in the main file; dropped by the last commit; the backup's copy not repeated
        ("0c0de", "primary", "sqlite:ItemTable:3"),  # the live version (11 steps)
        ("0c0de", "secondary", "wal:1"),  # its earlier version (7 steps)
        ("dead0", "secondary", "sqlite:ItemTable:1")]  # only in the backup
    models = [row for row in rows if row["text"] == "model: MODEL_PRIVATE_10 (trajectory summary)"]
    assert [row["origin"] for row in models] == ["primary"]  # the same row in commit 1 is not repeated


def test_the_summary_only_in_the_wal_is_read():
    database = CASES / "cascade-summaries" / "home" / GLOBAL

    def windsurf_value(lines: list[str]) -> dict:
        row = next(line for line in lines if "'codeium.windsurf'" in line)
        return json.loads(row.split("'codeium.windsurf',", 1)[1].strip().rstrip(");").strip("'").replace("''", "'"))
    assert f"windsurf.state.cachedActiveTrajectory:{WS}" not in windsurf_value(dump(database, with_wal=False))
    assert f"windsurf.state.cachedActiveTrajectory:{WS}" in windsurf_value(dump(database))
    expected = (CASES / "cascade-summaries" / "expected.csv").read_text()
    assert "session: Add idempotency keys to POST /charges (trajectory summary: 11 steps;" in expected


FAKE_SECRETS = (b"ghp_FAKEWINDSURFENVTOKEN0001", b"FAKE_WINDSURF_HEADER_TOKEN", b"FAKE_QUERY_KEY_42",
                b"FAKE_PG_PASSWORD_WS", b"FAKE_CODEIUM_API_KEY_7777", b"FAKE_STATE_API_KEY_8888",
                b"FAKE_AUTH_STATUS_KEY_9999")


def test_credential_files_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    bundle = _bundle(cli, tmp_path, "mcp-memories-credentials")
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == {".codeium/windsurf/auth_token.json"}
    outputs = every_output(cli, bundle, tmp_path)
    assert b"mcpServers[github]" in outputs[0] and b"Explain the retry policy" in outputs[1]
    for output in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in output, secret
