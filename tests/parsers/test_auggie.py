"""Auggie parsers, one rule per test (docs/agents/auggie.md)."""

from __future__ import annotations

import csv
import io
import json

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, all_decompressed, bundle_records
from tests.test_golden import frozen_copy

SID = "c0ffee12-3456-4789-abcd-ef0123456789"
SESSION = f".augment/sessions/{SID}.json"


def item(finished: str, message: str = "", reply: str = "", request=(), response=(), model=None, **extra) -> dict:
    exchange = {"request_message": message, "response_text": reply, "request_nodes": list(request),
                "response_nodes": list(response)}
    if model:
        exchange["model_id"] = model
    return {"exchange": exchange, "completed": True, "finishedAt": finished, "changedFiles": [], **extra}


def use(use_id: str, name: str, args: dict) -> dict:
    return {"id": 1, "type": 5, "content": "", "tool_use": {"tool_use_id": use_id, "tool_name": name,
                                                            "input_json": json.dumps(args)}}


def result(use_id: str, content: str, error: bool = False) -> dict:
    return {"id": 0, "type": 1, "tool_result_node": {"tool_use_id": use_id, "content": content, "is_error": error}}


def session_rows(*history, path: str = SESSION, store: str = "auggie.sessions", **envelope):
    document = {"sessionId": SID, "created": "2026-05-11T08:00:00.000Z", "modified": "2026-05-11T08:05:00.000Z",
                "chatHistory": list(history), "agentState": {"modelId": "claude-sonnet-4-5"}, **envelope}
    return drafts(FakeBundle({(store, path): json.dumps(document).encode()}), path, "auggie.session.v1")


def test_a_tool_result_in_a_later_exchange_joins_its_call_by_tool_use_id():
    rows = session_rows(item("2026-05-11T08:00:09.000Z", "lint it", "Running eslint.",
                             response=[use("tu_1", "launch-process", {"command": "npx eslint ."})]),
                        item("2026-05-11T08:00:15.000Z", "", "Two fail.", request=[result("tu_1", "2 problems")]))
    joined = [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in rows if row.tool_use_id]
    assert joined == [("tool_use", "launch-process", "tu_1", '{"command": "npx eslint ."}'),
                      ("tool_result", "launch-process", "tu_1", "2 problems")]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_an_exchange_gives_results_prompt_thinking_reply_then_calls_timed_by_finished_at():
    thinking = {"id": 0, "type": 8, "content": "plan", "thinking": {"content": "plan"}}
    rows = session_rows(item("2026-05-11T08:00:09.000Z", "go", "On it.", request=[result("tu_0", "old")],
                             response=[{"id": 1, "type": 0, "content": "On it."}, thinking,
                                       use("tu_1", "view", {"path": "a"})], model="m1"))
    kinds = [row.turn_type for row in rows if row.locator.startswith("json:/chatHistory/0/exchange/re")]
    # the result of a call no earlier exchange holds, then its parser: row; the last is tu_1's no-result row
    assert kinds == ["tool_result", "system", "user", "thinking", "assistant", "tool_use", "system"]
    assert {row.timestamp_ns for row in rows if row.turn_type == "user"} == {1778486409000 * 1_000_000}


def test_a_text_node_repeating_the_prompt_is_not_a_second_row_and_other_text_nodes_are_named():
    repeat = {"id": 0, "type": 0, "text_node": {"content": "fix it"}}
    injected = {"id": 1, "type": 10, "text_node": {"content": "<supervisor>keep going</supervisor>"}}
    rows = session_rows(item("2026-05-11T08:00:09.000Z", "fix it", request=[repeat, injected]))
    assert [row.text for row in rows if row.turn_type == "user"] == ["fix it"]
    assert "request text node (type 10): <supervisor>keep going</supervisor>" in [row.text for row in rows]


def test_an_error_result_is_marked_and_an_unanswered_call_gets_one_parser_row():
    rows = session_rows(item("2026-05-11T08:00:09.000Z", "x", response=[use("a", "remove-files", {}),
                                                                         use("b", "launch-process", {})]),
                        item("2026-05-11T08:00:10.000Z", request=[result("a", "denied", error=True)]))
    assert [row.text for row in rows if row.turn_type == "tool_result"] == ["[tool error] denied"]
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: no result recorded for tool call b (launch-process)"]


def test_the_model_column_follows_each_exchange_and_a_change_is_a_model_row():
    rows = session_rows(item("2026-05-11T08:00:01.000Z", "a", "A", model="m1"),
                        item("2026-05-11T08:00:02.000Z", "b", "B", model="m2"))
    exchanges = [row.text for row in rows if row.text.startswith("model:") and "chatHistory" in row.locator]
    assert exchanges == ["model: m1", "model: m1 -> m2"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["m1", "m2"]


def test_the_session_row_names_title_account_and_cloud_agent_and_the_id_falls_back_to_the_file_name():
    path = f".augment/sessions/{SID}-backup2.json"
    rows = session_rows(path=path, store="auggie.session_backups", sessionId=None, customTitle="Renamed",
                        title="Old", isCloudAgent=True, agentState={"userEmail": "a@example.com"})
    assert rows[0].text.startswith("session: Renamed (created=2026-05-11T08:00:00.000Z")
    assert "isCloudAgent=true" in rows[0].text and "account=a@example.com" in rows[0].text
    assert rows[0].session_id == SID


def test_a_history_summary_exchange_is_a_compaction_row():
    rows = session_rows(item("2026-05-11T08:00:01.000Z", "", "Earlier: lint fixed.", isHistorySummary=True))
    assert [row.text for row in rows if row.turn_type in ("assistant", "system") and "Earlier" in row.text] == [
        "compaction: history summary: Earlier: lint fixed."]


def test_an_image_in_a_result_is_its_format_and_size_never_its_bytes():
    image = {"id": 0, "type": 1, "tool_result_node": {"tool_use_id": "s", "content": "", "content_nodes": [
        {"type": 1, "text_content": "screenshot"}, {"type": 2, "image_content": {"image_data": "QUJDRA==",
                                                                                 "format": 1}}]}}
    rows = session_rows(item("2026-05-11T08:00:01.000Z", response=[use("s", "view", {})]),
                        item("2026-05-11T08:00:02.000Z", request=[image]))
    assert [row.text for row in rows if row.turn_type == "tool_result"] == ["screenshot\n[image 1, 4 bytes]"]


def test_settings_rules_are_permission_rows_and_provider_keys_are_withheld():
    document = {"toolPermissions": [{"toolName": "remove-files", "permission": {"type": "deny"}}],
                "bringYourOwnKey": {"anthropic": "sk-ant-FAKE-aug-1234"}, "model": "m",
                "mcpServers": {"d": {"env": {"API_TOKEN": "FAKE-token"}}}}
    path = ".augment/settings.json"
    rows = drafts(FakeBundle({("auggie.settings", path): json.dumps(document).encode()}), path, "auggie.settings.v1")
    texts = [row.text for row in rows]
    assert rows[0].tool_name == "remove-files" and texts[0].startswith(
        'permission setting: toolPermissions[0]={"toolName":"remove-files","permission":{"type":"deny"}}')
    assert not [text for text in texts if "sk-ant-FAKE" in text or "FAKE-token" in text]
    assert "setting: bringYourOwnKey={anthropic: [withheld: a credential, 20 characters]}" in texts[1]


def test_the_login_session_is_never_collected_and_no_key_reaches_an_output(cli, tmp_path):
    home = frozen_copy(FIXTURES / "auggie" / "settings-credentials" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert b"aug-FAKE-access" not in all_decompressed(bundle)
    records = {record["path"]: record for record in bundle_records(bundle)}
    assert records[".augment/session.json"]["outcome"] == "never_collect"
    outputs = []
    for name, extra in (("t.csv", ()), ("t.jsonl", ("--format", "jsonl"))):
        result = cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *extra)
        assert result.exit_code == 0, result.output
        outputs += [(tmp_path / name).read_bytes(), result.output.encode()]
    assert cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1").exit_code == 0
    outputs.append((tmp_path / "r.html").read_bytes())
    assert b"toolPermissions" in outputs[0]
    for output in outputs:
        for secret in (b"aug-FAKE-access", b"sk-ant-aug-FAKE", b"sk-openai-aug-FAKE", b"docs-FAKE-token"):
            assert secret not in output


def test_the_summary_names_the_cloud_agent_absence(cli, tmp_path):
    home = frozen_copy(FIXTURES / "auggie" / "sessions" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    result = cli("analyze", bundle, "-o", tmp_path / "t.csv")
    assert result.exit_code == 0
    assert "known absence: auggie" in result.output + result.stderr
    assert "cloud agent conversations" in result.output + result.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    kept = [row["text"] for row in rows if row["origin"] == "secondary" and row["turn_type"] == "user"]
    assert kept == ["and run the unit tests too"], "the backup keeps what the replacement lost; repeats are dropped"
