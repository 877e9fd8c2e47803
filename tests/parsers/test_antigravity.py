"""Antigravity parsers, one rule per test (docs/agents/antigravity.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import bundle_records, every_output
from tests.fixture_sqlite import sqlite_bytes
from tests.parsers.protobuf_encode import summary, summary_map
from tests.test_golden import frozen_copy

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "antigravity"
ID = "0b1c2d3e-0000-4000-8000-00000000b002"
ROOT = ".gemini/antigravity"
TRANSCRIPT = f"{ROOT}/brain/{ID}/.system_generated/logs/transcript.jsonl"
GLOBAL = ".config/Antigravity/User/globalStorage/state.vscdb"
SUMMARIES_DB = ".gemini/antigravity-cli/conversation_summaries.db"
KEY = "antigravityUnifiedStateSync.trajectorySummaries"


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def step(index: int, kind: str, source: str = "MODEL", **fields) -> dict:
    return {"step_index": index, "source": source, "type": kind, "status": "DONE",
            "created_at": f"2026-08-20T08:00:{index:02d}Z", **fields}


def transcript_rows(*records, files: dict | None = None):
    bundle = FakeBundle({("antigravity.transcripts", TRANSCRIPT): jsonl(*records), **(files or {})})
    return drafts(bundle, TRANSCRIPT, "antigravity.transcript.v1")


def state_db(value: str, key: str = KEY) -> bytes:
    return sqlite_bytes("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
                        f"INSERT INTO ItemTable VALUES ('{key}', '{value}');")


# -- transcript.jsonl --------------------------------------------------------------------------------------


def test_the_user_request_block_is_the_user_row_and_the_wrappers_are_system_rows():
    content = ("<USER_REQUEST>\nfirst\n</USER_REQUEST>\n<USER_REQUEST>second</USER_REQUEST>\n"
               "<ADDITIONAL_METADATA>\nThe current local time is: 2026-08-20T10:00:05.\n</ADDITIONAL_METADATA>")
    rows = transcript_rows(step(1, "USER_INPUT", "USER_EXPLICIT", content=content))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("user", "first\n\nsecond"),
        ("system", "additional metadata: The current local time is: 2026-08-20T10:00:05.")]
    assert all(row.timestamp_ns == 1787212801 * 10**9 for row in rows)  # the step's UTC time, not the local one


def test_a_model_selection_change_is_a_model_row_and_fills_the_model_column_from_then_on():
    change = ("<USER_REQUEST>go</USER_REQUEST><USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` "
              "from None to Gemini 3.1 Pro (High). No need to comment.\n</USER_SETTINGS_CHANGE>")
    rows = transcript_rows(step(1, "PLANNER_RESPONSE", content="before"),
                           step(2, "USER_INPUT", "USER_EXPLICIT", content=change),
                           step(3, "PLANNER_RESPONSE", content="after"))
    assert [(row.text, row.model) for row in rows] == [
        ("before", ""), ("go", ""),
        ("settings change: The user changed setting `Model Selection` from None to Gemini 3.1 Pro (High). "
         "No need to comment.", ""),
        ("model: Gemini 3.1 Pro (High)", "Gemini 3.1 Pro (High)"), ("after", "Gemini 3.1 Pro (High)")]


def test_a_tool_step_holds_its_call_and_its_result_joined_by_the_calls_id():
    rows = transcript_rows(
        step(3, "VIEW_FILE", content="text", tool_calls=[{"name": "view_file", "id": "c1", "arguments": '{"p":1}'}]),
        step(4, "RUN_COMMAND", content="out", tool_calls=[{"tool_name": "run_command", "call_id": "c2",
                                                            "arguments": {"command": "ls"}}]),
        step(5, "GREP", content="hits", tool_calls=[{"function": {"name": "grep", "arguments": "{}"},
                                                      "tool_call_id": "c3"}]))
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows] == [
        ("tool_use", "view_file", "c1", '{"p":1}'), ("tool_result", "view_file", "c1", "text"),
        ("tool_use", "run_command", "c2", '{"command": "ls"}'), ("tool_result", "run_command", "c2", "out"),
        ("tool_use", "grep", "c3", "{}"), ("tool_result", "grep", "c3", "hits")]


def test_a_step_with_several_calls_gives_its_result_with_the_first_and_points_the_others_to_it():
    rows = transcript_rows(step(3, "VIEW_FILE", content="both files", tool_calls=[
        {"name": "view_file", "id": "c1"}, {"name": "view_file", "id": "c2"}]))
    assert [(row.turn_type, row.tool_use_id, row.text) for row in rows if row.turn_type == "tool_result"] == [
        ("tool_result", "c1", "both files"),
        ("tool_result", "c2", "[the step records one result for its 2 calls; it is given with call c1]")]


def test_a_tool_step_without_calls_is_named_after_its_type_and_joined_by_its_step_index():
    rows = transcript_rows(step(7, "EDIT_FILE", content="Edited a.txt"))
    assert [(row.turn_type, row.tool_name, row.tool_use_id) for row in rows] == [
        ("tool_use", "edit_file", "step:7"), ("tool_result", "edit_file", "step:7")]


def test_a_status_other_than_done_opens_the_result_and_a_step_without_content_has_no_result():
    rows = transcript_rows({**step(8, "RUN_COMMAND", content="exit 1", tool_calls=[{"name": "run_command",
                                                                                    "id": "c8"}]),
                            "status": "ERROR"},
                           step(9, "RUN_COMMAND", tool_calls=[{"name": "run_command", "id": "c9"}]))
    assert [row.text for row in rows if row.turn_type != "tool_use"] == [
        "[status ERROR] exit 1", "parser: no result recorded for tool call c9 (run_command)"]


def test_thinking_and_reply_of_a_planner_response_and_injected_steps():
    rows = transcript_rows(step(0, "CONVERSATION_HISTORY", "SYSTEM", content=None),
                           step(1, "EPHEMERAL_MESSAGE", "SYSTEM", content="Reminder"),
                           step(2, "PLANNER_RESPONSE", content="Done.", thinking="Plan it."),
                           step(3, "NEW_KIND", "SYSTEM", content="kept"))
    assert [(row.turn_type, row.text) for row in rows] == [
        ("system", "injected context (EPHEMERAL_MESSAGE): Reminder"), ("thinking", "Plan it."),
        ("assistant", "Done."), ("system", "injected context (NEW_KIND): kept")]


def test_a_step_without_a_zone_or_time_is_untimed_and_without_a_type_is_a_parser_row():
    rows = transcript_rows({**step(1, "PLANNER_RESPONSE", content="a"), "created_at": "2026-08-20T08:00:01"},
                           {"step_index": 2, "source": "MODEL", "content": "b"})
    assert (rows[0].timestamp_ns, rows[0].timestamp_source) == (None, "none")
    assert rows[1].text.startswith("parser: unparseable line (step without a type)")


def test_the_session_is_the_brain_directory_and_the_project_comes_from_a_summary():
    uri = "file:///home/erin/src/notes-app"
    value = summary_map([(ID, summary("T", 1, 1787212800, 1787212900, uri))], wrapped=True)
    rows = transcript_rows(step(1, "PLANNER_RESPONSE", content="a"),
                           files={("antigravity.global_state", GLOBAL): state_db(value)})
    assert (rows[0].session_id, rows[0].project_path) == (ID, "/home/erin/src/notes-app")
    database = sqlite_bytes("CREATE TABLE conversation_summaries (conversation_id TEXT, workspace_uris TEXT);"
                            f"""INSERT INTO conversation_summaries VALUES ('{ID}', '["file:///srv/cli"]');""")
    rows = transcript_rows(step(1, "PLANNER_RESPONSE", content="a"),
                           files={("antigravity.conversation_summaries", SUMMARIES_DB): database,
                                  ("antigravity.global_state", GLOBAL): state_db(value)})
    assert rows[0].project_path == "/srv/cli"  # conversation_summaries.db first


# -- state.vscdb summaries ---------------------------------------------------------------------------------


def test_a_wrapped_summary_is_a_session_row_naming_every_file_of_its_id():
    value = summary_map([(ID, summary("Mark TODOs", 12, 1787212800, 1787212929, "file:///srv/a"))], wrapped=True)
    files = {("antigravity.global_state", GLOBAL): state_db(value),
             ("antigravity.conversations_pb", f"{ROOT}/conversations/{ID}.pb"): b"\x8f",
             ("antigravity.transcripts", TRANSCRIPT): b""}
    rows = drafts(FakeBundle(files), GLOBAL, "antigravity.state_vscdb.v1")
    assert [row.text for row in rows] == [
        "session: Mark TODOs (trajectory summary: 12 steps; timestamps 2026-08-20T08:00:00.000Z to "
        "2026-08-20T08:02:09.500Z; workspace file:///srv/a; its files in the bundle: "
        f"{ROOT}/conversations/{ID}.pb (encrypted, not read), {TRANSCRIPT} (read))"]
    assert (rows[0].session_id, rows[0].project_path, rows[0].timestamp_ns) == (ID, "/srv/a", 1787212800 * 10**9)


def test_the_older_key_is_read_and_a_map_that_is_not_protobuf_is_a_parser_row():
    value = summary_map([(ID, summary("Old key", 1, 1787212800, 1787212800))], wrapped=True)
    rows = drafts(FakeBundle({("antigravity.global_state", GLOBAL): state_db(value, "unifiedStateSync."
                                                                                    "trajectorySummaries")}),
                  GLOBAL, "antigravity.state_vscdb.v1")
    assert rows[0].text.startswith("session: Old key (trajectory summary: 1 steps;")
    rows = drafts(FakeBundle({("antigravity.global_state", GLOBAL): state_db("////")}), GLOBAL,
                  "antigravity.state_vscdb.v1")
    assert [row.text for row in rows] == [
        "parser: unparseable record (map stops early: field key is not a complete varint at byte 0)"]


# -- history.jsonl, conversation_summaries.db, artifacts, code_tracker --------------------------------------


def test_history_lines_are_user_rows_in_their_conversation_at_their_millisecond_time():
    path = ".gemini/antigravity-cli/history.jsonl"
    data = jsonl({"display": "list files", "timestamp": 1787220000000, "workspace": "/srv/cli", "conversationId": "c"},
                 {"query": "other shape", "timestamp": 1})
    rows = drafts(FakeBundle({("antigravity.history", path): data}), path, "antigravity.history.v1")
    assert [(row.turn_type, row.text, row.session_id, row.project_path, row.timestamp_ns) for row in rows][0] == (
        "user", "list files", "c", "/srv/cli", 1787220000000 * 10**6)
    assert rows[1].text.startswith("parser: unparseable line (no display text)")


def summaries_db_rows(*values: tuple[str, str]):
    inserts = "".join(f"INSERT INTO conversation_summaries VALUES ('{key}', 'T', '', 2, '{when}', '[]', '', '');"
                      for key, when in values)
    database = sqlite_bytes("CREATE TABLE conversation_summaries (conversation_id TEXT, title TEXT, preview TEXT, "
                            "step_count INTEGER, last_modified_time DATETIME, workspace_uris TEXT, status TEXT, "
                            f"parent_conversation_id TEXT); {inserts}")
    return drafts(FakeBundle({("antigravity.conversation_summaries", SUMMARIES_DB): database}), SUMMARIES_DB,
                  "antigravity.summaries_db.v1")


def test_a_summary_time_with_a_zone_times_the_row_and_one_without_is_kept_in_the_text_only():
    zoned, bare = summaries_db_rows(("a", "2026-08-20T10:00:07Z"), ("b", "2026-08-20 11:00:40"))
    assert zoned.timestamp_ns == 1787220007 * 10**9 and "last modified" not in zoned.text
    assert (bare.timestamp_ns, bare.timestamp_source) == (None, "none")
    assert "last modified 2026-08-20 11:00:40 (no zone recorded)" in bare.text


def test_artifacts_are_one_row_each_with_their_kind_as_prefix():
    for name, prefix in (("task.md", "task list"), ("implementation_plan.md", "plan"),
                         ("walkthrough.md.resolved.2", "walkthrough")):
        path = f"{ROOT}/brain/{ID}/{name}"
        rows = drafts(FakeBundle({("antigravity.artifacts", path): b"\n# Body\n"}), path, "antigravity.artifact.v1")
        assert [(row.text, row.session_id, row.timestamp_source) for row in rows] == [
            (f"{prefix}: # Body", ID, "file-mtime")]


def test_code_tracker_chat_lines_behind_a_binary_prefix_are_read_and_snapshot_lines_counted():
    path = f"{ROOT}/code_tracker/active/p/chat.jsonl"
    user = {"type": "user", "content": "why", "timestamp": "2025-11-20T09:15:00Z"}
    reply = {"type": "assistant", "content": "lock", "timestamp": "2025-11-20 09:15"}
    data = b"\x08\x01\x12" + json.dumps(user).encode() + b"\n\x08" + json.dumps(reply).encode() + b"\nimport os\n"
    rows = drafts(FakeBundle({("antigravity.code_tracker_chat", path): data}), path, "antigravity.code_tracker.v1")
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows] == [
        ("user", "why", "record"),
        ("assistant", "lock\n[recorded time without a zone: 2025-11-20 09:15]", "none"),
        ("system", "code tracker snapshot: 1 of 3 lines are not chat records (file snapshot content), not read",
         "none")]


# -- fixtures through collect and analyze ------------------------------------------------------------------


def _bundle(cli, tmp_path: Path, case: str) -> Path:
    home = frozen_copy(CASES / case / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    return bundle


def _analyzed(cli, tmp_path: Path, case: str) -> tuple[dict, list[dict]]:
    bundle = _bundle(cli, tmp_path, case)
    summary_file, timeline = tmp_path / "s.json", tmp_path / "t.jsonl"
    result = cli("analyze", bundle, "-o", timeline, "--format", "jsonl", "--summary", summary_file, "--quiet")
    assert result.exit_code == 0, result.stderr
    return json.loads(summary_file.read_text()), [json.loads(line) for line in timeline.read_text().splitlines()]


def test_gen1_pb_is_opaque_in_the_summary_beside_a_parsed_gen3_transcript(cli, tmp_path):
    summary_json, rows = _analyzed(cli, tmp_path, "gen1-pb-beside-gen3")
    entries = {item["path"].rsplit("/", 1)[-1]: item for item in summary_json["not_parsed"]}
    pb = entries["0b1c2d3e-0000-4000-8000-00000000a001.pb"]
    assert pb["opaque"] is True and pb["size"] == 5120 and pb["store"] == "antigravity.conversations_pb"
    assert pb["reason"].startswith("cannot be read: encrypted at rest: entropy 8.0") and pb["modified_utc"]
    opaque = [row for row in rows if row["store"] == "antigravity.conversations_pb"]
    assert len(opaque) == 2 and f"; 5120 bytes, SHA-256 {pb['sha256']}" in " ".join(row["text"] for row in opaque)
    assert any(row["store"] == "antigravity.transcripts" and row["turn_type"] == "tool_result" for row in rows)


def test_gen2_db_is_opaque_with_its_companions_and_its_readable_transcript_is_parsed(cli, tmp_path):
    summary_json, rows = _analyzed(cli, tmp_path, "gen2-cli")
    db = next(item for item in summary_json["not_parsed"] if item["store"] == "antigravity.conversations_db")
    assert db["opaque"] is True and "protobuf blobs in SQLite, no public schema" in db["reason"]
    assert [row["text"] for row in rows if row["store"] == "antigravity.conversations_db"][0].startswith(
        "integrity: not parsed: cannot be read: protobuf blobs in SQLite")
    session = next(row for row in rows if row["text"].startswith("session: Largest files"))
    assert "conversations/0b1c2d3e-0000-4000-8000-00000000c003.db (protobuf in SQLite, not read)" in session["text"]


def test_the_oauth_token_bin_and_cache_are_never_collected_and_the_token_reaches_no_output(cli, tmp_path):
    bundle = _bundle(cli, tmp_path, "gen2-cli")
    records = bundle_records(bundle)
    never = {record["path"] for record in records if record["outcome"] == "never_collect"}
    assert never == {".gemini/antigravity-cli/antigravity-oauth-token"}
    collected = {record["path"] for record in records if record["outcome"] == "collected"}
    assert not [path for path in collected if "/bin/" in path or "/cache/" in path]
    for output in every_output(cli, bundle, tmp_path):
        assert b"FAKE_AGY_OAUTH_ACCESS" not in output and b"FAKE_AGY_REFRESH" not in output


def test_earlier_versions_of_the_summary_map_in_the_wal_are_secondary_rows_given_once(cli, tmp_path):
    _, rows = _analyzed(cli, tmp_path, "gen1-pb-beside-gen3")
    summary_rows = [row for row in rows if row["store"] == "antigravity.global_state"]
    sessions = sorted((row["session_id"][-4:], row["origin"], row["locator"].split("/", 1)[0])
                      for row in summary_rows if row["text"].startswith("session:"))
    assert sessions == [("a001", "primary", "sqlite:ItemTable:3"),
                        ("b002", "primary", "sqlite:ItemTable:3"),  # the live version, 13 steps
                        ("b002", "secondary", "wal:0"),  # its 12-step version, in the main file
                        ("d004", "secondary", "wal:1")]  # dropped from the list by the last commit
