"""Pi parsers, one rule per test (docs/agents/pi.md)."""

from __future__ import annotations

import csv
import io
import json

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, all_decompressed
from tests.fixture_sqlite import dump
from tests.test_golden import timeline

SESSION = ".pi/agent/sessions/--home-alice-src-app--/2026-07-02T09-14-05-120Z_6b1f9e0c.jsonl"
HEADER = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-07-02T09:14:05.120Z",
          "cwd": "/home/alice/src/app"}


def entry(entry_id: str | None, parent: str | None, message: dict | None = None, **fields) -> dict:
    record = {"type": "message" if message else fields.pop("type"), "timestamp": "2026-07-02T09:15:00.000Z", **fields}
    if entry_id is not None:
        record.update(id=entry_id, parentId=parent)
    if message:
        record["message"] = message
    return record


def session_rows(*records: dict | bytes, header: bool = True):
    lines = [json.dumps(HEADER).encode()] if header else []
    lines += [record if isinstance(record, bytes) else json.dumps(record).encode() for record in records]
    return drafts(FakeBundle({("pi.sessions", SESSION): b"\n".join(lines) + b"\n"}), SESSION, "pi.session.v1")


USER = {"role": "user", "content": "fix the login timeout", "timestamp": 1782983645300}
CALL = {"role": "assistant", "model": "claude-sonnet-4-5", "stopReason": "toolUse", "timestamp": 1782983646000,
        "content": [{"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": "rg timeout"}}]}
RESULT = {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "bash", "isError": False,
          "content": [{"type": "text", "text": "src/db.py:3: timeout=2"}], "timestamp": 1782983647000}


def test_a_tool_result_is_joined_by_id_and_is_never_a_user_row():
    rows = session_rows(entry("a", None, USER), entry("b", "a", CALL), entry("c", "b", RESULT))
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout"]
    result = next(row for row in rows if row.turn_type == "tool_result")
    assert (result.tool_use_id, result.tool_name, result.text) == ("toolu_1", "bash", "src/db.py:3: timeout=2")
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_every_entry_of_an_abandoned_branch_is_a_row_and_one_branch_row_names_the_run():
    answer = {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "old answer"}]}
    again = {"role": "user", "content": "try retries instead"}
    rows = session_rows(entry("a", None, USER), entry("b", "a", answer), entry("c", "a", again))
    assert "old answer" in [row.text for row in rows]
    branch = [row for row in rows if row.text.startswith("branch:")]
    assert len(branch) == 1 and branch[0].locator == "line:3"
    assert branch[0].text.startswith("branch: line 3 (1 entry, from entry b) are not on the path")


def test_a_linear_v1_file_has_no_branch_rows():
    rows = session_rows(entry(None, None, USER), entry(None, None, CALL), entry(None, None, RESULT))
    assert not [row for row in rows if row.text.startswith("branch:")]


def test_a_parent_cycle_ends_the_path_walk():
    cyclic = [entry("a", "b", USER), entry("b", "a", {"role": "user", "content": "second"})]
    rows = session_rows(*cyclic)
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix the login timeout", "second"]


def test_an_entry_whose_parent_is_not_in_the_file_is_a_chain_break_and_a_whole_tree_is_none():
    """docs/report.md, integrity rule `chain break`: the entries before the kept ones were cut from the file."""
    answer = {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "answer"}]}
    cut = session_rows(entry("c", "b", USER), entry("d", "c", answer))  # b (and a) are gone
    breaks = [row for row in cut if row.text.startswith("integrity: chain break: ")]
    assert [(row.text, row.locator) for row in breaks] == [
        ("integrity: chain break: line 2 continues from entry b, which is not in this file", "line:2")]
    whole = session_rows(entry("a", None, USER), entry("b", "a", answer), entry("c", "a", USER))
    assert not [row for row in whole if row.text.startswith("integrity: ")]


def test_a_torn_last_line_is_one_parser_row_and_the_complete_lines_are_read():
    torn = json.dumps(HEADER).encode() + b"\n" + json.dumps(entry("a", None, USER)).encode() + b'\n{"type":"mess'
    rows = drafts(FakeBundle({("pi.sessions", SESSION): torn}), SESSION, "pi.session.v1")
    problems = [row for row in rows if row.text.startswith("parser:")]
    assert len(problems) == 1 and "torn last line" in problems[0].text and problems[0].locator == "line:3"
    assert "fix the login timeout" in [row.text for row in rows]


def test_a_call_without_a_result_gets_the_no_result_row_and_a_call_without_an_id_a_positional_one():
    unnamed = {"role": "assistant", "model": "m",
               "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "a.py"}}]}
    rows = session_rows(entry("a", None, CALL), entry("b", "a", unnamed))
    orphans = [row.text for row in rows if row.text.startswith("parser: no result")]
    assert orphans == ["parser: no result recorded for tool call toolu_1 (bash)",
                       "parser: no result recorded for tool call position:line:3/message/content/0 (read)"]


def test_a_user_shell_command_is_a_tool_call_and_result_not_a_prompt():
    bash = {"role": "bashExecution", "command": "git stash list", "output": "stash@{0}", "exitCode": 1}
    rows = session_rows(entry("a", None, bash))
    assert [(row.turn_type, row.tool_name) for row in rows[1:]] == [("tool_use", "bashExecution"),
                                                                     ("tool_result", "bashExecution")]
    assert rows[2].text == "stash@{0}\n[exit code 1]" and rows[1].tool_use_id == rows[2].tool_use_id


def test_model_rows_follow_model_changes_and_replies():
    change = entry("a", None, type="model_change", provider="openai", modelId="gpt-5")
    reply = {"role": "assistant", "model": "claude-opus-4-1", "content": [{"type": "text", "text": "hi"}]}
    rows = session_rows(change, entry("b", "a", reply), entry("c", "b", reply))
    assert [row.text for row in rows if row.text.startswith("model:")] == ["model: gpt-5",
                                                                          "model: gpt-5 -> claude-opus-4-1"]


def test_an_image_is_the_shared_placeholder_with_its_decoded_size_never_its_bytes():
    image = {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": "QUJD" * 50}]}
    rows = session_rows(entry("a", None, image))
    assert rows[1].text == "[image image/png, 150 bytes]"


def test_an_image_in_a_tool_result_or_an_assistant_reply_is_a_placeholder_too():
    result = {**RESULT, "content": [{"type": "text", "text": "screenshot:"},
                                    {"type": "image", "mimeType": "image/jpeg", "data": "QUJD" * 400}]}
    reply = {"role": "assistant", "model": "claude-sonnet-4-5", "stopReason": "stop",
             "content": [{"type": "image", "mimeType": "image/png", "data": "QUJD" * 400}]}
    rows = session_rows(entry("a", None, CALL), entry("b", "a", result), entry("c", "b", reply))
    assert [row.text for row in rows if row.turn_type == "tool_result"] == [
        "screenshot:\n[image image/jpeg, 1200 bytes]"]
    assert "assistant block image: [image image/png, 1200 bytes]" in [row.text for row in rows]
    assert not [row for row in rows if "QUJD" in row.text]


def test_settings_withhold_the_tracking_id_and_proxy_credentials():
    settings = {"trackingId": "7f3c2a91-04be", "httpProxy": "http://alice:hunter2@proxy:3128",
                "defaultProjectTrust": "never"}
    path = ".pi/agent/settings.json"
    rows = drafts(FakeBundle({("pi.settings", path): json.dumps(settings).encode()}), path, "pi.settings.v1")
    text = "\n".join(row.text for row in rows)
    assert "7f3c2a91" not in text and "hunter2" not in text and "alice" not in text
    assert 'permission setting: defaultProjectTrust="never"' in text


def test_a_trashinfo_names_the_deleted_session_and_keeps_its_local_date_as_text():
    path = ".local/share/Trash/info/2026-06-28T16-02-11-004Z_3c4d.jsonl.trashinfo"
    info = b"[Trash Info]\nPath=/home/alice/.pi/agent/sessions/--x--/2026-06-28T16-02-11-004Z_3c4d.jsonl%20copy\n" \
           b"DeletionDate=2026-06-28T18:30:02\n"
    rows = drafts(FakeBundle({("pi.trash_info", path): info}), path, "pi.trash_info.v1")
    assert len(rows) == 1 and rows[0].session_id == "3c4d"
    assert "_3c4d.jsonl copy (DeletionDate=2026-06-28T18:30:02, local time, no zone" in rows[0].text
    assert rows[0].timestamp_source == "file-mtime"


def test_the_context_mode_rows_that_exist_only_in_the_wal_are_read(cli, tmp_path):
    case = FIXTURES / "pi" / "context-mode"
    database = case / "home" / ".pi" / "context-mode" / "sessions" / "3f2a1b0c9d8e7f6a.db"
    assert not any("git_commit" in statement for statement in dump(database, with_wal=False))
    rows = list(csv.DictReader(io.StringIO(timeline(cli, case, tmp_path).decode())))
    commits = [row for row in rows if "git_commit" in row["text"]]
    assert len(commits) == 1 and commits[0]["origin"] == "secondary"
    assert any(row["text"].startswith("context-mode resume snapshot") for row in rows)


def test_credentials_are_never_collected_nor_in_any_row(cli, tmp_path):
    case = FIXTURES / "pi" / "settings-trust"
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", case / "home", "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    payload = all_decompressed(out)
    assert b"Sup3rS3cret" in payload, "settings.json is collected whole (its proxy password too)"
    for secret in (b"PIFIXTURESECRET", b"PIFIXTUREREFRESH", b"PIFIXTUREACCESS", b"PIFIXTURELOCALKEY"):
        assert secret not in payload, "auth.json and models.json are never collected"
    rows = timeline(cli, case, tmp_path / "t").decode()
    assert "Sup3rS3cret" not in rows and "7f3c2a91" not in rows


def test_past_the_tree_budget_the_oldest_entries_are_forgotten_and_the_branches_held_are_still_given(monkeypatch):
    from aitrail.analyzer.formats.jsonl import Line, read_jsonl
    from aitrail.analyzer.parsers.pi import session
    from aitrail.analyzer.view.context import ParseContext

    monkeypatch.setattr(session, "TREE_ENTRIES", 4)
    prompts = [entry(name, parent, {"role": "user", "content": f"p-{name}"}) for name, parent in
               (("a", None), ("b", "a"), ("c", "b"), ("d", "b"), ("e", "d"), ("f", "e"))]
    data = b"\n".join(json.dumps(record).encode() for record in [HEADER, *prompts]) + b"\n"
    bundle = FakeBundle({("pi.sessions", SESSION): data})
    ctx = ParseContext(bundle, bundle.source(SESSION), {})
    reader = session.SessionReader(ctx)
    rows = [row for line in read_jsonl(ctx) if isinstance(line, Line) for row in reader.rows(line)]
    rows += reader.finish()
    assert len(reader.tree) == 4  # was every entry of the file
    assert [row.text for row in rows if row.turn_type == "user"] == [f"p-{name}" for name in "abcdef"]
    over = [row for row in rows if row.text.startswith("parser: entry tree over the limit (4 entries held)")]
    assert [(row.locator, row.timestamp_source) for row in over] == [("line:6", "none")]  # e, the fifth entry
    assert "the 2 oldest entries (lines 2-3) were counted, not held" in over[0].text
    branch = [row for row in rows if row.text.startswith("branch:")]  # c is held and off the path f-e-d-(b)
    assert [(row.locator, row.text.split(" are ")[0]) for row in branch] == [
        ("line:4", "branch: line 4 (1 entry, from entry c)")]


def test_past_the_call_id_budget_the_calls_are_counted_and_every_row_is_still_given(monkeypatch):
    from aitrail.analyzer.formats import call_budget

    monkeypatch.setattr(call_budget, "MAX_CALL_IDS", 1)
    second = {**CALL, "content": [{**CALL["content"][0], "id": "toolu_2"}]}
    rows = session_rows(entry("a", None, CALL), entry("b", "a", RESULT), entry("c", "b", second),
                        entry("d", "c", {**RESULT, "toolCallId": "toolu_2"}))
    assert [row.tool_use_id for row in rows if row.turn_type in ("tool_use", "tool_result")] == [
        "toolu_1", "toolu_1", "toolu_2", "toolu_2"]
    assert [(row.locator, row.text.split(";")[0]) for row in rows if row.text.startswith("parser:")] == [
        ("line:5/message", "parser: tool result for bash with no tool call before it"),
        ("line:4/message/content/0", "parser: tool calls over the limit (1 call ids held to pair calls with results)")]
