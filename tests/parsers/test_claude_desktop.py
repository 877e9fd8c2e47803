"""Claude Desktop parsers, one rule per test (docs/agents/claude-desktop.md)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records, every_output
from tests.test_golden import frozen_copy, timeline

CASES = FIXTURES / "claude-desktop"
ORG = ".config/Claude/claude-code-sessions/acct/org"
CORG = ".config/Claude/local-agent-mode-sessions/acct/org"
CLI = "6e5d4c3b-2a19-4f08-9e7d-1c2b3a4f5e6d"
PRIOR = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
LOCAL = "local_1b2c3d4e-0000-4000-8000-00000000c0de"
COWORK = "local_7c7c7c7c-0000-4000-8000-000000000007"
AUDIT = f"{CORG}/{COWORK}/audit.jsonl"
KEY_PATH = f"{CORG}/{COWORK}/.audit-key"
KEY = bytes(range(7, 39))


def jbytes(value) -> bytes:
    return json.dumps(value).encode()


def code_record(**extra) -> dict:
    return {"sessionId": LOCAL, "cliSessionId": CLI, "priorCliSessionIds": [PRIOR], "title": "Fix flaky login test",
            "cwd": "/home/dana/src/webshop", "createdAt": 1788000000000, "lastActivityAt": 1788000912345, **extra}


def code_rows(record: dict, transcripts: tuple[str, ...] = ()):
    path = f"{ORG}/{LOCAL}.json"
    files = {("claude-desktop.code_sessions", path): jbytes(record)}
    for session in transcripts:
        files[("claude-code.transcripts", f".claude/projects/-home-dana-src-webshop/{session}.jsonl")] = b"{}\n"
    return drafts(FakeBundle(files), path, "claude_desktop.code_session.v1")


# -- Code-tab records -------------------------------------------------------------------------------


def test_a_code_tab_record_names_each_transcript_in_its_own_session_and_where_the_bundle_holds_it():
    rows = code_rows(code_record(), transcripts=(CLI,))
    named = {row.session_id: row.text for row in rows if row.text.startswith("session transcript:")}
    assert named[CLI].endswith(f"in the bundle at .claude/projects/-home-dana-src-webshop/{CLI}.jsonl")
    assert named[PRIOR].endswith(f"{PRIOR}.jsonl not in the bundle")
    session = next(row for row in rows if row.text.startswith("session: Fix flaky login test"))
    assert session.session_id == CLI and session.project_path == "/home/dana/src/webshop"
    assert "project from cwd" in session.text and LOCAL in session.text


def test_a_transcript_missing_from_the_bundle_gives_one_session_missing_row_and_none_when_all_are_held():
    missing = [row.text for row in code_rows(code_record(), transcripts=(CLI,)) if row.text.startswith("integrity:")]
    assert len(missing) == 1 and missing[0].startswith("integrity: session missing: ")
    assert f"{PRIOR}.jsonl" in missing[0] and "evidence the session existed" in missing[0]
    assert not [row for row in code_rows(code_record(), transcripts=(CLI, PRIOR)) if row.text.startswith("integrity:")]


def test_epoch_milliseconds_time_the_session_and_a_string_time_is_not_used():
    rows = code_rows(code_record())
    session = next(row for row in rows if row.text.startswith("session:"))
    assert (session.timestamp_ns, session.timestamp_source) == (1788000000000 * 1_000_000, "record")
    rows = code_rows(code_record(createdAt="1788000000000"))
    session = next(row for row in rows if row.text.startswith("session:"))
    assert session.timestamp_source == "file-mtime" and "(a string, not an epoch-ms number)" in session.text


def test_the_initial_message_is_a_system_row_and_permission_fields_are_permission_settings():
    rows = code_rows(code_record(initialMessage="Find out why", permissionMode="bypassPermissions"))
    assert not [row for row in rows if row.turn_type == "user"]
    assert any(row.text == "initial message: Find out why" for row in rows)
    assert any(row.text.startswith('permission setting: permissionMode="bypassPermissions" (from ') for row in rows)


def test_an_auth_token_in_a_record_never_reaches_a_row():
    secret = "PLANTED-AUTH-TOKEN-0123"
    rows = code_rows(code_record(authToken=secret, sessionSettings={"accessToken": secret},
                                 error={"authToken": secret}, sessionPermissionUpdates=[{"token": secret}]))
    rows += cowork_rows({"sessionId": COWORK, "authToken": secret, "cliSessionId": CLI, "createdAt": 1})
    assert not [row for row in rows if secret in row.text]


# -- tombstones ----------------------------------------------------------------------------------------


def tombstone_rows(content: bytes, extra: dict | None = None):
    path = f"{ORG}/deleted_55aa66bb-0000-4000-8000-000000000001"
    files = {("claude-desktop.tombstones", path): content, **(extra or {})}
    return drafts(FakeBundle(files), path, "claude_desktop.tombstone.v1")


def test_a_tombstone_is_a_session_deleted_row_timed_by_its_epoch_ms_content():
    rows = tombstone_rows(b"1788003600123")
    assert len(rows) == 1
    assert rows[0].text.startswith("session deleted: 55aa66bb-0000-4000-8000-000000000001 at 2026-08-29T11:40:00.123Z")
    assert (rows[0].timestamp_ns, rows[0].timestamp_source) == (1788003600123 * 1_000_000, "record")
    assert "no copy of its record is in the bundle" in rows[0].text


def test_a_tombstone_names_a_surviving_copy_of_its_record_and_that_copys_transcript():
    copy = ".config/Claude/claude-code-sessions/acct/other-org/local_55aa66bb-0000-4000-8000-000000000001.json"
    extra = {("claude-desktop.code_sessions", copy): jbytes({"cliSessionId": CLI, "title": "Rotate the key"}),
             ("claude-code.transcripts", f".claude/projects/-x/{CLI}.jsonl"): b"{}\n"}
    rows = tombstone_rows(b"1788003600123", extra)
    assert rows[0].session_id == CLI
    assert f"a copy of its record survives at {copy}" in rows[0].text and '"Rotate the key"' in rows[0].text
    assert f"transcript {CLI}.jsonl in the bundle at .claude/projects/-x/{CLI}.jsonl" in rows[0].text


def test_a_tombstone_that_is_not_thirteen_digits_is_a_parser_row_and_is_timed_by_its_mtime():
    rows = tombstone_rows(b"yesterday\n")
    assert rows[0].text.startswith("parser: unparseable file (a tombstone is 13 bytes")
    assert rows[1].text.startswith("session deleted: 55aa66bb") and rows[1].timestamp_source == "file-mtime"


# -- Cowork records ----------------------------------------------------------------------------------


def cowork_rows(record: dict, extra: dict | None = None):
    path = f"{CORG}/{COWORK}.json"
    files = {("claude-desktop.cowork_sessions", path): jbytes(record), **(extra or {})}
    return drafts(FakeBundle(files), path, "claude_desktop.cowork_session.v1")


def test_the_cowork_project_is_the_users_folder_not_the_sandbox_cwd_and_the_row_says_which():
    record = {"sessionId": COWORK, "cliSessionId": CLI, "processName": "quiet-otter", "cwd": "/sandbox/outputs",
              "userSelectedFolders": ["/Users/dana/Documents/invoices"], "createdAt": 1788081240000}
    rows = cowork_rows(record)
    assert {row.project_path for row in rows if row.session_id == CLI} == {"/Users/dana/Documents/invoices"}
    assert "project from userSelectedFolders[0]" in rows[0].text
    del record["userSelectedFolders"]
    rows = cowork_rows(record)
    assert rows[0].project_path == "/sandbox/outputs" and "not a folder of the user's" in rows[0].text


def test_a_cowork_record_finds_its_engine_transcript_only_in_its_own_directory():
    own = f"{CORG}/{COWORK}/.claude/projects/-sessions-quiet-otter/{CLI}.jsonl"
    elsewhere = f"{CORG}/local_other/.claude/projects/-sessions-x/{CLI}.jsonl"
    record = {"sessionId": COWORK, "cliSessionId": CLI, "createdAt": 1788081240000}
    held = cowork_rows(record, {("claude-code.cowork_transcripts", own): b"{}\n"})
    assert any(row.text.endswith(f"in the bundle at {own}") for row in held)
    stray = cowork_rows(record, {("claude-code.cowork_transcripts", elsewhere): b"{}\n"})
    assert any(row.text.endswith(f"{CLI}.jsonl not in the bundle") for row in stray)
    assert any(row.text.startswith("integrity: session missing:") for row in stray)


# -- audit.jsonl: the message stream ------------------------------------------------------------------


def sign(records: list[dict], key: bytes = KEY) -> bytes:
    """The app's construction (one community analysis): HMAC(key, previous digest || JSON of the record)."""
    previous, lines = "", []
    for record in records:
        rest = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        digest = hmac.new(key, (previous + rest).encode(), hashlib.sha256).hexdigest()
        lines.append(json.dumps({**record, "_audit_hmac": digest}, ensure_ascii=False, separators=(",", ":")))
        previous = digest
    return ("\n".join(lines) + "\n").encode()


def audit_rows(data: bytes, key: bytes | None = KEY, record: dict | None = None):
    files = {("claude-desktop.cowork_audit", AUDIT): data}
    if key is not None:
        files[("claude-desktop.cowork_audit_key", KEY_PATH)] = key
    if record is not None:
        files[("claude-desktop.cowork_sessions", f"{CORG}/{COWORK}.json")] = jbytes(record)
    return drafts(FakeBundle(files), AUDIT, "claude_desktop.audit.v1")


def stream(count: int = 4) -> list[dict]:
    base = {"session_id": CLI}
    records = [
        {"type": "user", **base, "message": {"role": "user", "content": "list invoices"},
         "_audit_timestamp": "2026-08-30T09:14:02.118Z"},
        {"type": "assistant", **base, "message": {"role": "assistant", "model": "claude-sonnet-4-6", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*.pdf"}}]},
         "_audit_timestamp": "2026-08-30T09:14:04.503Z"},
        {"type": "user", **base, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.pdf"}]},
         "_audit_timestamp": "2026-08-30T09:14:04.911Z"},
        {"type": "assistant", **base, "message": {"role": "assistant", "model": "claude-sonnet-4-6",
                                                  "content": [{"type": "text", "text": "One invoice."}]},
         "_audit_timestamp": "2026-08-30T09:14:06.000Z"},
    ]
    return records[:count]


def test_calls_and_results_are_joined_by_tool_use_id_and_timed_by_audit_timestamp():
    rows = audit_rows(sign(stream()))
    call = next(row for row in rows if row.turn_type == "tool_use")
    result = next(row for row in rows if row.turn_type == "tool_result")
    assert (call.tool_name, call.tool_use_id, result.tool_name, result.tool_use_id) == ("Glob", "toolu_1") * 2
    assert result.timestamp_ns is not None and result.timestamp_source == "record"
    assert [row.text for row in rows if row.turn_type == "user"] == ["list invoices"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_replayed_prompt_is_not_a_second_user_turn_and_a_subagent_prompt_is_not_the_users():
    records = stream(1) + [
        {"type": "user", "session_id": CLI, "isReplay": True, "message": {"role": "user", "content": "list invoices"}},
        {"type": "user", "session_id": CLI, "parent_tool_use_id": "toolu_9",
         "message": {"role": "user", "content": [{"type": "text", "text": "search the drive"}]}}]
    rows = audit_rows(sign(records))
    assert [row.text for row in rows if row.turn_type == "user"] == ["list invoices"]
    assert "repeated (isReplay): list invoices" in [row.text for row in rows]
    assert "subagent prompt: search the drive" in [row.text for row in rows]


def test_a_refused_call_and_the_results_permission_denials_are_permission_decisions():
    records = stream(2) + [
        {"type": "user", "session_id": CLI, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": "The user doesn't want to proceed with this tool use."}]}},
        {"type": "result", "subtype": "success", "session_id": CLI, "num_turns": 2, "total_cost_usd": 0.01,
         "permission_denials": [{"tool_name": "Glob", "tool_use_id": "toolu_1", "tool_input": {"pattern": "*.pdf"}}]}]
    rows = audit_rows(sign(records))
    decisions = [(row.tool_name, row.tool_use_id) for row in rows if row.text.startswith("permission decision: denied")]
    assert decisions == [("Glob", "toolu_1"), ("Glob", "toolu_1")]
    assert any(row.text.startswith("result (success): num_turns=2, total_cost_usd=0.01") for row in rows)


def test_the_system_init_line_gives_the_permission_mode_and_the_model_and_the_vm_cwd_only_as_a_fallback():
    init = {"type": "system", "subtype": "init", "session_id": CLI, "cwd": "/sessions/quiet-otter",
            "model": "claude-sonnet-4-6", "permissionMode": "acceptEdits"}
    rows = audit_rows(sign([init] + stream(1)))
    texts = [row.text for row in rows]
    assert 'permission setting: permissionMode="acceptEdits" (from audit.jsonl system init)' in texts
    assert "model: claude-sonnet-4-6" in texts
    assert next(row for row in rows if row.turn_type == "user").project_path == "/sessions/quiet-otter"
    record = {"sessionId": COWORK, "userSelectedFolders": ["/Users/dana/Documents"]}
    rows = audit_rows(sign([init] + stream(1)), record=record)
    assert {row.project_path for row in rows} == {"/Users/dana/Documents"}
    assert rows[0].text.startswith("project: /Users/dana/Documents (from userSelectedFolders[0] of ")


# -- audit.jsonl: the chain ------------------------------------------------------------------------------


def chain_rows(rows):
    return [row for row in rows if row.text.startswith(("audit chain:", "integrity: chain break:"))]


def test_an_intact_chain_verifies_with_the_key_beside_it():
    found = chain_rows(audit_rows(sign(stream())))
    assert len(found) == 1 and found[0].text.startswith("audit chain: verified: all 4 records verify (4 by the line")


def test_an_edited_record_is_a_chain_break_at_its_own_line_and_time_and_the_others_still_verify():
    lines = sign(stream()).decode().splitlines()
    lines[2] = lines[2].replace("a.pdf", "b.pdf")
    found = chain_rows(audit_rows(("\n".join(lines) + "\n").encode()))
    assert len(found) == 1 and found[0].text.startswith(
        "integrity: chain break: line 3 is the first record of this audit log whose _audit_hmac does not verify")
    assert "1 of 4 records fail" in found[0].text and "3 verify" in found[0].text
    assert found[0].locator == "line:3" and found[0].timestamp_source == "record"


def test_a_removed_record_breaks_the_chain_at_the_record_after_it():
    lines = sign(stream()).decode().splitlines()
    del lines[1]
    found = chain_rows(audit_rows(("\n".join(lines) + "\n").encode()))
    assert found[0].text.startswith("integrity: chain break: line 2 is the first record")


def test_without_the_key_the_chain_is_said_not_checked_once():
    found = chain_rows(audit_rows(sign(stream()), key=None))
    assert [row.text.split(":", 2)[1] for row in found] == [" not checked"]


def test_a_key_that_verifies_no_record_proves_nothing_and_is_not_a_chain_break():
    found = chain_rows(audit_rows(sign(stream()), key=b"another key entirely"))
    assert len(found) == 1 and found[0].text.startswith("audit chain: not verified: none of the 4 records verifies")


def test_a_chain_signed_over_sorted_keys_verifies_and_says_which_spelling_did():
    previous, lines = "", []
    for record in stream():
        body = json.dumps(record, sort_keys=True, separators=(",", ":"))
        digest = hmac.new(KEY, (previous + body).encode(), hashlib.sha256).hexdigest()
        lines.append(json.dumps({**record, "_audit_hmac": digest}))  # spaced JSON: the line spelling cannot match
        previous = digest
    found = chain_rows(audit_rows(("\n".join(lines) + "\n").encode()))
    assert found[0].text.startswith("audit chain: verified: all 4 records verify (4 by the sorted spelling")


def test_the_keys_bytes_never_reach_a_row():
    rows = audit_rows(sign(stream()))
    forms = (KEY.hex(), base64.b64encode(KEY).decode(), KEY.decode("latin-1"))
    assert not [row for row in rows for form in forms if form in row.text]


# -- settings and registries ------------------------------------------------------------------------------


def test_mcp_env_values_and_engine_env_values_never_reach_a_row():
    config = {"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": "ghp_PLANTED0000"}}},
              "preferences": {"bypassPermissionsGateByAccount": {"acct": True}}}
    path = ".config/Claude/claude_desktop_config.json"
    rows = drafts(FakeBundle({("claude-desktop.desktop_config", path): jbytes(config)}), path,
                  "claude_desktop.desktop_config.v1")
    assert any(row.text.startswith('permission setting: mcpServers[gh]={"command":"npx","env":["GITHUB_TOKEN"]}')
               for row in rows)
    assert any(row.text.startswith("permission setting: preferences.bypassPermissionsGateByAccount=") for row in rows)
    engine = f"{CORG}/{COWORK}/.claude/settings.json"
    settings = {"env": {"PROXY": "PLANTED-ENV-VALUE"}, "permissions": {"deny": ["Bash(rm:*)"]}}
    rows += drafts(FakeBundle({("claude-desktop.cowork_engine_settings", engine): jbytes(settings)}), engine,
                   "claude_desktop.engine_settings.v1")
    assert any(row.text.startswith('permission setting: permissions.deny=["Bash(rm:*)"]') for row in rows)
    assert not [row for row in rows if "PLANTED" in row.text]


def test_a_scheduled_tasks_skip_all_permission_checks_is_a_permission_setting():
    path = ".config/Claude/scheduled-tasks.json"
    tasks = {"scheduledTasks": [{"id": "t1", "cronExpression": "0 7 * * *", "createdAt": 1788200000000,
                                 "chromePermissionMode": "skip_all_permission_checks"}]}
    rows = drafts(FakeBundle({("claude-desktop.scheduled_tasks", path): jbytes(tasks)}), path,
                  "claude_desktop.scheduled_tasks.v1")
    assert rows[0].text.startswith("scheduled task: t1 (cronExpression=0 7 * * *")
    assert rows[0].timestamp_source == "record"
    assert rows[1].text.startswith('permission setting: scheduledTasks[t1].chromePermissionMode="skip_all_permission')


def test_a_pending_upload_is_timed_by_its_name_and_its_content_is_never_read():
    path = ".config/Claude/pending-uploads/1f2e3d4c-5b6a-4789-8a7b-6c5d4e3f2a10-1788201000000_draft.pdf"
    rows = drafts(FakeBundle({("claude-desktop.pending_uploads", path): b"PLANTED-UPLOAD-CONTENT"}), path,
                  "claude_desktop.pending_upload.v1")
    assert rows[0].text.startswith("pending upload: draft.pdf (staged 2026-08-31T18:30:00.000Z, 22 bytes")
    assert not [row for row in rows if "PLANTED" in row.text]


def test_an_artifact_is_placed_in_the_claude_code_session_of_the_cowork_session_that_made_it():
    path = f"{CORG}/artifacts.json"
    files = {("claude-desktop.cowork_artifacts", path): jbytes([{"id": "a1", "name": "x.md", "createdBySessionId":
                                                                 COWORK}]),
             ("claude-desktop.cowork_sessions", f"{CORG}/{COWORK}.json"): jbytes({"cliSessionId": CLI})}
    rows = drafts(FakeBundle(files), path, "claude_desktop.artifacts.v1")
    assert rows[0].text.startswith("artifact: x.md (id=a1, createdBySessionId=") and rows[0].session_id == CLI


# -- fixtures, collection and outputs ------------------------------------------------------------------------


def test_the_generator_writes_the_committed_audit_logs_and_keys(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("generate_audit", CASES / "generate_audit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    written = sorted(path for path in tmp_path.rglob("*") if path.is_file())
    assert len(written) == 7
    for path in written:
        assert path.read_bytes() == (CASES / path.relative_to(tmp_path)).read_bytes(), path


def test_no_file_is_matched_by_two_stores_and_the_engine_transcript_is_claude_codes(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    home = frozen_copy(CASES / "cowork-audit-intact" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
    records = bundle_records(bundle)
    assert not [record for record in records if record.get("same_file_as")]
    engine = [record for record in records if "/.claude/projects/" in record["path"]]
    assert [(record["agent"], record["store"]) for record in engine] == [("claude-code",
                                                                         "claude-code.cowork_transcripts")]


def test_credentials_are_never_collected_and_caches_and_binaries_are_not_walked(tmp_path: Path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    home = frozen_copy(CASES / "credentials-and-app-settings" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"]).exit_code == 0
    outcome = {record["path"].rsplit("Roaming/Claude/", 1)[-1]: record["outcome"] for record in bundle_records(bundle)}
    for name in ("config.json", "Cookies", "Network/Cookies", "Local State",
                 "Claude Extensions Settings/ant.dir.gh.github.json"):
        assert outcome[name] == "never_collect", name
    assert not [path for path, state in outcome.items() if path.startswith(("Cache/", "claude-code/")) and
                state == "collected"]
    assert "Claude Extensions/ant.dir.gh.github/dist/index.js" not in outcome


PLANTED = ("FAKE-DESKTOP-TOKEN-CACHE-7d1c9e0b", "FAKE-COOKIE-VALUE-3a9f", "FAKE-OS-CRYPT-KEY", "FAKE-EXTENSION-API-KEY",
           "ghp_FAKEDESKTOPMCPTOKEN", "FAKE-CODE-TAB-AUTH-TOKEN-4e2a", "FAKE-COWORK-AUTH-TOKEN-b71c",
           "FAKE-PENDING-UPLOAD-CONTENT")


def test_no_planted_credential_reaches_the_timelines_the_summary_or_the_report(cli, tmp_path: Path):
    timeline(cli, CASES / "credentials-and-app-settings", tmp_path)
    outputs = every_output(cli, tmp_path / "case.tar.zst", tmp_path)
    summary = tmp_path / "summary.json"
    assert cli("analyze", tmp_path / "case.tar.zst", "-o", tmp_path / "s.csv", "--quiet", "--summary",
               summary).exit_code == 0
    outputs.append(summary.read_bytes())
    assert b"Update dependency pins" in outputs[0]
    for produced in outputs:
        assert not [value for value in PLANTED if value.encode() in produced]


def test_the_audit_key_never_reaches_the_timelines_the_summary_or_the_report(cli, tmp_path: Path):
    case = CASES / "cowork-audit-intact"
    key = next(case.glob("home/**/local_7c7c7c7c-*/.audit-key")).read_bytes()
    timeline(cli, case, tmp_path)
    outputs = every_output(cli, tmp_path / "case.tar.zst", tmp_path)
    summary = tmp_path / "summary.json"
    assert cli("analyze", tmp_path / "case.tar.zst", "-o", tmp_path / "s.csv", "--quiet", "--summary",
               summary).exit_code == 0
    outputs.append(summary.read_bytes())
    assert b"audit chain: verified: all 11 records verify" in outputs[0]
    forms = (key, key.hex().encode(), key.hex().upper().encode(), base64.b64encode(key), json.dumps(
        key.decode("latin-1")).encode()[1:-1])
    for produced in outputs:
        assert not [form for form in forms if form in produced]
