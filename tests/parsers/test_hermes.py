"""Hermes Agent parsers, one rule per test (docs/agents/hermes.md)."""

from __future__ import annotations

import json
import shutil

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, every_output
from tests.fixture_sqlite import rowids_without_wal, sqlite_bytes

CASES = FIXTURES / "hermes"
DB = ".hermes/state.db"
HISTORY = ".hermes/.hermes_history"
SNAPSHOT = ".hermes/sessions/session_20260705_101502_3fa9c1.json"
CONFIG = ".hermes/config.yaml"
SCHEMA = (CASES / "schema" / "state-v22.sql").read_text()
SESSION = ("INSERT INTO sessions (id, source, model, started_at, cwd, git_branch, title) VALUES "
           "('s1', 'cli', 'm1', 1783246502.81, '/blog', 'draft', 'T');")


def database(sql: str) -> bytes:
    return sqlite_bytes(sql)


def quoted(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def message(rowid: int, role: str, content=None, calls=None, call_id=None, name=None, when: float = 1783246520.4,
            active: int = 1, compacted: int = 0, reasoning=None) -> str:
    tool_calls = None if calls is None else json.dumps(calls)
    return ("INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, "
            f"reasoning, active, compacted) VALUES ({rowid}, 's1', {quoted(role)}, {quoted(content)}, "
            f"{quoted(call_id)}, {quoted(tool_calls)}, {quoted(name)}, {when}, {quoted(reasoning)}, {active}, "
            f"{compacted});")


def call(call_id: str, name: str = "terminal", arguments: dict | None = None) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments or {"command": "ls"})}}


def db_rows(sql: str):
    return drafts(FakeBundle({("hermes.state_db", DB): database(SCHEMA + SESSION + sql)}), DB, "hermes.state_db.v1")


def message_rows(rows):
    return [row for row in rows if row.locator.startswith("sqlite:messages")]


# -- state.db -------------------------------------------------------------------------------------


def test_a_tool_row_joins_its_call_by_tool_call_id_and_is_never_a_user_row():
    rows = db_rows(message(1, "assistant", "", [call("c1"), call("c2", "read_file")])
                   + message(2, "tool", "file", call_id="c2", name="read_file", when=1783246521.0)
                   + message(3, "tool", "a b", call_id="c1", name="terminal", when=1783246522.0))
    results = [(row.tool_use_id, row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("c2", "read_file", "file"), ("c1", "terminal", "a b")]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_a_call_never_answered_gets_one_no_result_row():
    rows = db_rows(message(1, "assistant", "", [call("c9")]))
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call c9 (terminal)"]


def test_timestamps_are_real_unix_seconds_and_columns_come_from_the_session():
    rows = message_rows(db_rows(message(1, "user", "hi", when=1783246520.4)))
    assert rows[0].timestamp_ns == 1783246520_400_000_000
    assert (rows[0].session_id, rows[0].project_path, rows[0].git_branch, rows[0].model) == (
        "s1", "/blog", "draft", "m1")


def test_terminal_refusals_and_approvals_are_permission_decisions():
    def blocked(error):
        return json.dumps({"output": "", "exit_code": -1, "error": error, "status": "blocked"})
    texts = [blocked("BLOCKED: User denied this potentially dangerous action (matched 'x')."),
             blocked("BLOCKED: Action denied by user. The user has NOT consented."),
             blocked("BLOCKED: Action timed out without user response. The user has NOT consented."),
             blocked("BLOCKED: this command matches the user-defined deny rule 'git push*' (approvals.deny)"),
             blocked("BLOCKED (hardline): disk wipe. This command is on the unconditional blocklist"),
             json.dumps({"output": "", "exit_code": 0, "error": None,
                         "approval": "Command required approval (x) and was approved by the user."}),
             json.dumps({"output": "", "exit_code": 0, "error": None,
                         "approval": "Command was flagged (x) and auto-approved by smart approval."})]
    sql = message(1, "assistant", "", [call(f"c{n}") for n in range(len(texts))])
    sql += "".join(message(n + 2, "tool", text, call_id=f"c{n}", name="terminal") for n, text in enumerate(texts))
    decisions = [(row.text, row.tool_use_id) for row in db_rows(sql) if row.text.startswith("permission decision")]
    assert decisions == [("permission decision: denied", "c0"), ("permission decision: denied", "c1"),
                         ("permission decision: denied (no answer before the timeout)", "c2"),
                         ("permission decision: denied by a permission rule (approvals.deny, not asked)", "c3"),
                         ("permission decision: denied by the built-in blocklist (not asked)", "c4"),
                         ("permission decision: approved", "c5"),
                         ("permission decision: approved by smart approval", "c6")]


def test_a_json_content_list_is_read_as_text_and_an_image_is_a_placeholder():
    payload = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    parts = [{"type": "text", "text": "what is this?"},
             {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{payload}"}}]
    rows = message_rows(db_rows("INSERT INTO messages (id, session_id, role, content, timestamp) VALUES "
                                f"(1, 's1', 'user', char(0) || 'json:' || {quoted(json.dumps(parts))}, 1.5);"))
    assert rows[0].text.startswith("what is this?\n[image image/png")
    assert payload not in rows[0].text


def test_reasoning_is_a_thinking_row_before_the_answer():
    rows = message_rows(db_rows(message(1, "assistant", "answer", reasoning="think first")))
    assert [(row.turn_type, row.text) for row in rows] == [("thinking", "think first"), ("assistant", "answer")]


def test_the_fts_indexes_are_never_read():
    rows = db_rows(message(1, "user", "typed once")
                   + "INSERT INTO messages_fts(rowid, content) VALUES (99, 'only in the search index');")
    assert [row.text for row in message_rows(rows)] == ["typed once"]
    assert not [row for row in rows if "only in the search index" in row.text]


def test_compacted_messages_keep_their_text_then_a_compaction_row_and_rewound_ones_are_marked():
    rows = message_rows(db_rows(message(1, "user", "old", active=0, compacted=1)
                                + message(2, "assistant", "summary", when=1783246530.0)
                                + message(3, "user", "taken back", active=0, when=1783246540.0)))
    assert [row.text.split(" (")[0] for row in rows] == [
        "old", "compaction: the messages before this one were summarised away", "summary", "taken back",
        "rewound: this message was taken back by /rewind or /undo"]


def test_a_delegated_session_says_whose_sub_agent_it_is():
    delegated = ("INSERT INTO sessions (id, source, model, model_config, parent_session_id, started_at) VALUES "
                 "('s2', 'cli', 'm2', '{\"_delegate_from\": \"s1\"}', 's1', 1783246600.0);")
    rows = db_rows(delegated)
    assert [row.text for row in rows if row.session_id == "s2" and row.text.startswith("session:")] == [
        "session:  (source=cli, parent_session_id=s1, subagent delegated from s1)"]


def test_newest_rows_only_in_the_wal_are_read():
    """Messages 14 and 15 are in state.db-wal only: the file alone lacks them; the golden has them."""
    ids = rowids_without_wal(CASES / "state-db" / "home" / DB, "messages")
    assert ids == list(range(1, 14))
    golden = (CASES / "state-db" / "expected.csv").read_text()
    assert "sqlite:messages:15/tool_calls/0" in golden and "session ended: user_exit" in golden


# -- snapshots, history, config -------------------------------------------------------------------


def test_a_snapshot_quotes_its_local_times_and_its_messages_have_no_time():
    data = (CASES / "state-db" / "home" / SNAPSHOT).read_bytes()
    rows = drafts(FakeBundle({("hermes.session_snapshots", SNAPSHOT): data}), SNAPSHOT,
                  "hermes.session_snapshot.v1")
    assert "session_start=2026-07-05T10:15:02.810000" in rows[0].text and "without a zone" in rows[0].text
    assert rows[0].timestamp_source == "file-mtime"
    assert {row.timestamp_source for row in rows[1:]} == {"none"}
    assert [row.turn_type for row in rows[1:]] == ["user", "thinking", "tool_use", "tool_result"]


def history_rows(data: bytes, state: bytes | None = None):
    files = {("hermes.prompt_history", HISTORY): data}
    if state is not None:
        files[("hermes.state_db", DB)] = state
    return drafts(FakeBundle(files), HISTORY, "hermes.prompt_history.v1")


def test_a_typed_prompt_state_db_holds_gives_no_row_and_the_others_keep_their_local_time_in_the_text():
    data = b"\n# 2026-07-05 10:15:20.401233\n+typed   once\n\n# 2026-07-05 10:16:00.5\n+two\n+lines\n"
    rows = history_rows(data, database(SCHEMA + SESSION + message(1, "user", "typed once")))
    assert [(row.turn_type, row.text, row.timestamp_source) for row in rows] == [
        ("user", "two\nlines\n(typed 2026-07-05 10:16:00.5, local time without a zone; from .hermes_history)",
         "none")]
    assert len(history_rows(data)) == 2  # with no state.db in the home, every prompt is a row


def test_a_history_header_with_no_prompt_after_it_is_a_parser_row():
    rows = history_rows(b"# 2026-07-05 10:15:20.401233\n+a\n\n# 2026-07-05 10:16:00\n")
    assert rows[-1].text.startswith("parser: unparseable line (a '# <time>' header with no prompt after it")


def test_config_gives_the_approval_policy_lists_and_model():
    data = (CASES / "state-db" / "home" / CONFIG).read_bytes()
    rows = drafts(FakeBundle({("hermes.config", CONFIG): data}), CONFIG, "hermes.config.v1")
    settings = [(row.text.split(" (from")[0], row.tool_name) for row in rows if row.text.startswith("permission")]
    assert ('permission setting: approvals.mode="smart"', "") in settings
    assert ('permission setting: approvals.deny="git push --force*"', "terminal") in settings
    assert ('permission setting: command_allowlist="in-place file edit"', "terminal") in settings
    assert [row.model for row in rows if row.text.startswith("model:")] == ["anthropic/claude-sonnet-4.5"]
    assert not [row for row in rows if "sk-or-" in row.text]


def test_profiles_are_homes_of_their_own_in_the_catalog():
    from aitrail.collector import catalog

    paths = {path for root in catalog.load().agent("hermes").roots for path in root.paths}
    assert {".hermes", ".hermes/profiles/*", "AppData/Local/hermes"} <= paths


# -- credentials ----------------------------------------------------------------------------------

FAKE_SECRETS = (b"sk-or-FAKE-hermes-config-000000000000", b"sk-or-FAKE-hermes-env-0000000000000000",
                b"FAKE-hermes-auth-token-0000")


def test_credential_files_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    from aitrail.analyzer.view.bundle import Bundle

    home = shutil.copytree(CASES / "state-db" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    with Bundle(str(bundle)) as opened:
        paths = sorted(source.path for source in opened.sources)
    assert ".hermes/state.db-wal" in paths and ".hermes/config.yaml" in paths
    assert not [path for path in paths if path.endswith((".env", "auth.json"))]
    outputs = every_output(cli, bundle, tmp_path)
    assert b"mcp__github__create_issue" in outputs[0] and b"mcp__github__create_issue" in outputs[1]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret
