"""OpenClaw parsers, one rule per test (docs/agents/openclaw.md)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import tempfile
from pathlib import Path

import zstandard

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, all_decompressed, bundle_records
from tests.fixture_sqlite import dump, sql_text
from tests.test_golden import frozen_copy, timeline

CASES = FIXTURES / "openclaw"
DB = ".openclaw/agents/main/agent/openclaw-agent.sqlite"
SESSIONS = ".openclaw/agents/main/sessions"
SID = "0198f0a1-7c00-7aaa-8bbb-0000000000aa"
HEADER = {"type": "session", "version": 3, "id": SID, "timestamp": "2026-09-01T07:00:00.000Z", "cwd": "/srv/app"}
SCHEMA = sql_text(CASES / "agent-db" / "sql" / "openclaw-agent.sqlite.sql").split("INSERT INTO", 1)[0]


def entry(entry_id: str, parent: str | None, message: dict | None = None, **fields) -> dict:
    record = {"type": "message" if message else fields.pop("type"), "id": entry_id, "parentId": parent,
              "timestamp": "2026-09-01T07:00:05.000Z", **fields}
    if message:
        record["message"] = message
    return record


def frame(value, **options) -> bytes:
    return zstandard.ZstdCompressor(**options).compress(json.dumps(value).encode())


def database(events: list[tuple[object, bytes | None]], extra: str = "") -> bytes:
    """An agent database whose transcript_events hold ``events`` in seq order: (event_json or None, event_zstd)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "db.sqlite"
        connection = sqlite3.connect(path)
        connection.executescript(SCHEMA)
        for seq, (text, blob) in enumerate(events):
            connection.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
                               "event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               (SID, seq, None if text is None else json.dumps(text), 1788246000000 + seq, blob,
                                None if blob is None else 1, None if blob is None else "{}"))
        connection.executescript(extra)
        connection.commit()
        connection.close()
        return path.read_bytes()


def db_rows(data: bytes):
    return drafts(FakeBundle({("openclaw.agent_db", DB): data}), DB, "openclaw.agent_db.v1")


def file_rows(name: str, *records, store: str = "openclaw.legacy_sessions"):
    path = f"{SESSIONS}/{name}"
    data = b"".join(json.dumps(record).encode() + b"\n" for record in records)
    return drafts(FakeBundle({(store, path): data}), path, "openclaw.session_file.v1")


USER = {"role": "user", "content": "fix the login timeout", "timestamp": 1788246002000}
CALL = {"role": "assistant", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "call_1", "name": "exec", "arguments": {"command": "rg timeout"}}]}


# -- transcript_events -------------------------------------------------------------------------------------------


def test_a_compressed_event_is_read_like_a_plain_one():
    result = {"role": "toolResult", "toolCallId": "call_1", "toolName": "exec", "content": "src/db.py:3"}
    rows = db_rows(database([(HEADER, None), (None, frame(entry("e1", None, CALL))),
                             (entry("e2", "e1", result), None)]))
    calls = [(row.turn_type, row.tool_use_id, row.locator) for row in rows if row.tool_use_id]
    assert calls == [("tool_use", "call_1", "sqlite:transcript_events:2/message/content/0"),
                     ("tool_result", "call_1", "sqlite:transcript_events:3/message")]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_frame_claiming_more_than_the_event_limit_is_refused_before_it_is_decompressed():
    claimed = bytes.fromhex("28B52FFD") + bytes([0xE0]) + (5_000_000_000).to_bytes(8, "little") + b"\x01\x00\x00"
    rows = db_rows(database([(HEADER, None), (None, claimed), (entry("e2", None, USER), None)]))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: unparseable record (event_zstd: the frame claims 5000000000 bytes of content, over the limit of "
        "33554432)"]
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout"]


def test_a_frame_without_a_size_is_stopped_at_the_limit(monkeypatch):
    from aitrail.analyzer.parsers.openclaw import blobs

    monkeypatch.setattr(blobs, "EVENT_LIMIT", 100)
    big = entry("e1", None, {**USER, "content": "x" * 500})
    rows = db_rows(database([(HEADER, None), (None, frame(big, write_content_size=False))]))
    problems = [row.text for row in rows if row.text.startswith("parser:")]
    assert len(problems) == 1 and "more than 100 bytes of content" in problems[0]
    assert not [row for row in rows if row.turn_type == "user"]


def test_past_the_database_budget_compressed_events_are_counted_not_read(monkeypatch):
    from aitrail.analyzer.view import context

    first = entry("e1", None, USER)
    monkeypatch.setattr(context, "MAX_DECOMPRESSED_BYTES", len(json.dumps(first)) + 10)
    second = entry("e2", "e1", {**USER, "content": "second prompt"})
    rows = db_rows(database([(HEADER, None), (None, frame(first)), (None, frame(second)), (None, frame(second))]))
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout"]
    over = [row for row in rows if row.text.startswith("parser:")]
    assert [(row.text.split(";")[1], row.locator) for row in over] == [
        (" the compressed values from here on were not read (2 in all)", "sqlite:transcript_events:3/event_zstd")]


def test_a_plain_string_content_is_a_reply_and_a_result_as_openclaw_reads_it():
    reply = {"role": "assistant", "model": "m", "stopReason": "stop", "content": "Done."}
    result = {"role": "toolResult", "toolCallId": "c9", "toolName": "exec", "content": {"type": "text", "text": "ok"}}
    rows = db_rows(database([(HEADER, None), (entry("e1", None, reply), None), (entry("e2", "e1", result), None)]))
    assert [(row.turn_type, row.text) for row in rows if row.turn_type in ("assistant", "tool_result")] == [
        ("assistant", "Done."), ("tool_result", "ok")]
    assert not [row for row in rows if "reply with no content" in row.text]


def test_a_reset_entry_is_a_history_reset_row():
    reset = entry("e2", "e1", type="reset", reason="new", firstKeptEntryId="e1")
    rows = db_rows(database([(HEADER, None), (entry("e1", None, USER), None), (reset, None)]))
    assert "history reset: new (a fresh history window; messages kept from entry e1)" in [row.text for row in rows]


def test_each_session_of_the_table_has_its_own_walk_and_its_unanswered_calls():
    other = {**HEADER, "id": "other"}
    data = database([(HEADER, None), (entry("e1", None, CALL), None)],
                    extra="INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES "
                          f"('zz-other', 0, '{json.dumps(other)}', 1788246100000);")
    rows = db_rows(data)
    assert [(row.session_id, row.text) for row in rows if row.text.startswith(("parser:", "session start"))] == [
        (SID, f"session start: id={SID} version=3 cwd=/srv/app"),
        (SID, "parser: no result recorded for tool call call_1 (exec)"),
        ("other", "session start: id=other version=3 cwd=/srv/app")]


def test_an_event_without_its_own_time_takes_the_rows_created_at():
    untimed = {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "hi"}}
    rows = db_rows(database([(HEADER, None), (untimed, None)]))
    user = next(row for row in rows if row.turn_type == "user")
    assert (user.timestamp_ns, user.timestamp_source) == (1788246000001 * 1_000_000, "record")


def test_a_database_without_the_tables_is_one_parser_row():
    rows = db_rows(database([]).replace(b"transcript_events", b"transcript_evenTS").replace(b"session_nodes",
                                                                                              b"session_nodeZ"))
    assert [row.text for row in rows][-1].startswith("parser: unparseable file")


def test_the_credential_tables_are_never_queried():
    seen: list[str] = []
    data = database([(HEADER, None)], extra="INSERT INTO auth_profile_store VALUES ('default', "
                                            "'{\"key\":\"sk-FAKE-never\"}', 1);")

    class Spy(sqlite3.Connection):
        def execute(self, sql, *args):
            seen.append(sql)
            return super().execute(sql, *args)

    bundle = FakeBundle({("openclaw.agent_db", DB): data})
    opened = bundle.open_sqlite

    def spying(source):
        path = opened(source).execute("PRAGMA database_list").fetchone()[2]
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, factory=Spy)
        connection.execute("PRAGMA trusted_schema = OFF")
        return connection

    bundle.open_sqlite = spying
    rows = drafts(bundle, DB, "openclaw.agent_db.v1")
    assert rows and not [sql for sql in seen if "auth_profile" in sql or "session_suggestions" in sql]


# -- archives -----------------------------------------------------------------------------------------------------


def test_an_archive_file_name_gives_the_deletion_row_timed_by_its_utc_time():
    rows = file_rows(f"{SID}.jsonl.deleted.2026-09-02T09-00-00.000Z", HEADER, entry("e1", None, USER),
                     store="openclaw.session_archives")
    name = f"{SID}.jsonl.deleted.2026-09-02T09-00-00.000Z"
    assert rows[0].text == f"session deleted: {SID} (transcript archived as {name})"
    assert (rows[0].timestamp_ns, rows[0].timestamp_source, rows[0].locator) == (
        1788339600000 * 1_000_000, "record", "file")
    reset = file_rows(f"{SID}.jsonl.reset.2026-09-02T09-00-00Z.0123456789abcdef0123456789abcdef", HEADER,
                      store="openclaw.session_archives")
    assert reset[0].text.startswith(f"session archive (reset): {SID} (transcript archived as ")
    assert reset[0].text.endswith(", generation 0123456789abcdef0123456789abcdef)")


def test_a_legacy_file_takes_its_session_from_its_name_until_the_header_names_it():
    rows = file_rows(f"{SID}.jsonl", entry("e1", None, USER))
    assert {row.session_id for row in rows if row.turn_type == "user"} == {SID}
    assert rows[0].text.startswith("parser: unparseable record (the first line is not a session header)")


def test_a_deleted_sessions_canonical_archive_is_read_and_its_digest_checked():
    text = b"".join(json.dumps(record).encode() + b"\n" for record in (HEADER, entry("e1", None, USER)))
    blob = zstandard.ZstdCompressor().compress(text)
    import hashlib

    for recorded, words in ((hashlib.sha256(blob).hexdigest(), "blob matches its sha256"),
                            ("f" * 64, f"blob sha256 {hashlib.sha256(blob).hexdigest()} does not match the recorded")):
        data = database([], extra="INSERT INTO session_transcript_archives (session_id, generation, session_key, "
                                  "reason, encoding, archive_blob, archive_sha256, archive_name, created_at) VALUES "
                                  f"('{SID}', 'g', 'agent:main:main', 'deleted', 'zstd', X'{blob.hex()}', "
                                  f"'{recorded}', 'a.zst', 1788339600000);")
        rows = db_rows(data)
        marker = next(row for row in rows if row.text.startswith("session deleted:"))
        assert words in marker.text
        assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout"]
        assert [row.locator for row in rows if row.turn_type == "user"] == [
            "sqlite:session_transcript_archives:1/archive_blob/line:2/message"]


def test_a_cold_archive_reads_its_events_and_counts_its_projections():
    records = [{"kind": "header", "version": 1, "sessionId": SID, "generation": "g"},
               {"kind": "event", "row": {"seq": 0, "event_json": json.dumps(HEADER), "created_at": 1}},
               {"kind": "event", "row": {"seq": 1, "event_json": json.dumps(entry("e1", None, USER)), "created_at": 2}},
               {"kind": "identity", "row": {}}, {"kind": "fts", "row": {"text": "fix the login timeout"}},
               {"kind": "event", "row": {"seq": 2, "event_json": "{not json", "created_at": 3}}]
    path = f"{SESSIONS}/cold/{'a' * 64}.jsonl.zst"
    data = zstandard.ZstdCompressor().compress(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    rows = drafts(FakeBundle({("openclaw.cold_archives", path): data}), path, "openclaw.cold_archive.v1")
    texts = [row.text for row in rows]
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout"]  # once: not the fts copy
    assert f"cold archive: session {SID}, generation g (format version 1)" in texts
    assert any(text.startswith("cold archive: projection records not shown as rows (1 identity, 1 fts)")
               for text in texts)
    assert [text for text in texts if text.startswith("parser:")] == [
        "parser: unparseable record (event_json is not JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)): {not json"]


# -- index and approvals ------------------------------------------------------------------------------------------


def test_the_session_index_names_each_keys_session_with_its_title_and_time():
    path = f"{SESSIONS}/sessions.json"
    document = {"agent:main:main": {"sessionId": SID, "updatedAt": 1788246042311, "displayName": "Deploy",
                                    "authProfileOverride": "anthropic:work", "inputTokens": 5}}
    rows = drafts(FakeBundle({("openclaw.session_index", path): json.dumps(document).encode()}), path,
                  "openclaw.session_index.v1")
    assert [(row.text, row.session_id, row.timestamp_ns) for row in rows] == [
        (f"session: Deploy (key=agent:main:main, session {SID}, inputTokens=5)", SID, 1788246042311 * 1_000_000)]


def test_the_approval_socket_token_is_withheld_and_each_policy_is_a_permission_setting():
    path = ".openclaw/exec-approvals.json"
    document = {"socket": {"path": "/s", "token": "oc-FAKE-socket-token"}, "defaults": {"security": "deny"},
                "agents": {"main": {"ask": "always", "mcpTools": [{"server": "docs", "tool": "publish"}]}}}
    rows = drafts(FakeBundle({("openclaw.exec_approvals", path): json.dumps(document).encode()}), path,
                  "openclaw.exec_approvals.v1")
    assert not [row for row in rows if "oc-FAKE-socket-token" in row.text]
    assert [(row.text.split(" (from")[0], row.tool_name) for row in rows] == [
        ('permission setting: exec approvals socket={"path":"/s","token":"[withheld: a credential, 20 characters]"}',
         "exec"),
        ('permission setting: exec approvals defaults.security="deny"', "exec"),
        ('permission setting: exec approvals agents.main.ask="always"', "exec"),
        ('permission setting: exec approvals agents.main.mcpTools[0]={"server":"docs","tool":"publish"}',
         "docs__publish")]


# -- whole runs on the fixture homes ------------------------------------------------------------------------------


def test_the_rows_only_in_the_wal_are_read(cli, tmp_path):
    case = CASES / "agent-db"
    database_file = case / "home" / DB
    assert not any("Login timeout fix" in statement for statement in dump(database_file, with_wal=False))
    rows = list(csv.DictReader(io.StringIO(timeline(cli, case, tmp_path).decode())))
    assert [row["locator"] for row in rows if row["text"] == "session name: Login timeout fix"] == [
        "sqlite:transcript_events:16"]
    state = list(csv.DictReader(io.StringIO(timeline(cli, CASES / "state-db", tmp_path / "s").decode())))
    assert any(row["text"].startswith("permission setting: exec approvals defaults.security") for row in state)


SECRETS = ("sk-ant-oc-FAKE", "oc-state-FAKE", "sugg-FAKE-TOKEN", "mcp-oauth-FAKE",
           "sk-openai-oc-FAKE", "device-FAKE-token", "oc-socket-FAKE", "gw-FAKE-token", "sk-ant-FAKE", "wa-FAKE",
           "tg-FAKE", "sk-FAKE-legacy")


def test_no_credential_table_value_reaches_the_timeline_or_the_report(cli, tmp_path):
    home = tmp_path / "home"
    for case in ("agent-db", "state-db"):
        frozen_copy(CASES / case / "home", tmp_path / case)
    home.mkdir()
    for case in ("agent-db", "state-db"):
        for item in (tmp_path / case).rglob("*"):
            if item.is_file():
                target = home / item.relative_to(tmp_path / case)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(item.read_bytes())
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    payload = all_decompressed(bundle)
    assert b"sk-ant-oc-FAKE" in payload, "the database is collected whole: it is the evidence"
    for name in ("gw-FAKE-token", "sk-ant-FAKE-in", "wa-FAKE", "tg-FAKE", "sk-FAKE-legacy", "sk-ant-FAKE-dotenv"):
        assert name.encode() not in payload, f"{name}: a credential file was collected"
    outputs = []
    for name, extra in (("t.csv", ()), ("t.jsonl", ("--format", "jsonl"))):
        result = cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *extra)
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / name).read_bytes())
        outputs.append(result.output.encode())
    result = cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1")
    assert result.exit_code == 0, result.output
    outputs.append((tmp_path / "r.html").read_bytes())
    assert b"Login timeout fix" in outputs[0] and b"exec approvals" in outputs[0]
    for output in outputs:
        for secret in SECRETS:
            assert secret.encode() not in output, secret
    records = {record["path"]: record for record in bundle_records(bundle)}
    assert records[DB]["credential_tables"] == ["auth_profile_store", "auth_profile_state", "session_suggestions"]
    assert "mcp_oauth_stores" in records[".openclaw/state/openclaw.sqlite-wal"]["credential_tables"]
    assert records[".openclaw/openclaw.json"]["outcome"] == "never_collect"
    assert records[".openclaw/credentials/whatsapp/default/creds.json"]["outcome"] == "never_collect"
