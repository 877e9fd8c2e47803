"""Qoder CLI transcript parser, one rule per test (docs/agents/qoder-cli.md)."""

from __future__ import annotations

import json
import shutil

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES

SESSION = "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
PATH = f".qoder/projects/-Users-jo-app/{SESSION}.jsonl"
AGENT_PATH = f".qoder/projects/-Users-jo-app/{SESSION}/subagents/agent-a7f3.jsonl"
TIME = "2026-06-02T03:04:05.006Z"


def entry(kind: str, **fields) -> dict:
    return {"type": kind, "uuid": fields.pop("uuid", "u"), "sessionId": SESSION, "cwd": "/Users/jo/app",
            "gitBranch": "main", "timestamp": TIME, **fields}


def reply(*blocks, model="qwen3-coder-plus", stop=None, usage=None, message_id="msg_1") -> dict:
    message = {"id": message_id, "role": "assistant", "model": model, "stop_reason": stop, "content": list(blocks)}
    if usage is not None:
        message["usage"] = usage
    return entry("assistant", message=message)


def results(*blocks, **fields) -> dict:
    return entry("user", message={"role": "user", "content": list(blocks)}, **fields)


def use(call_id: str, name: str = "Bash", **arguments) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(call_id: str, content="ok", is_error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {**block, "is_error": True} if is_error else block


def rows(*entries, path: str = PATH):
    data = b"".join(json.dumps(item).encode() + b"\n" for item in entries)
    store = "qoder-cli.subagent_transcripts" if "/subagents/" in path else "qoder-cli.transcripts"
    return drafts(FakeBundle({(store, path): data}), path, "qoder_cli.transcript.v1")


def texts(found, turn: str | None = None) -> list[str]:
    return [row.text for row in found if turn is None or row.turn_type == turn]


def test_chain_entries_carry_session_cwd_branch_and_their_utc_time():
    row = rows(entry("user", message={"role": "user", "content": "hi"}))[0]
    assert (row.turn_type, row.session_id, row.project_path, row.git_branch, row.timestamp_source) == (
        "user", SESSION, "/Users/jo/app", "main", "record")


def test_a_result_joins_its_call_by_id_and_is_never_a_user_row():
    found = rows(reply(use("t1"), use("t2", "Read")), results(result("t2", "file"), result("t1", "out")))
    assert [(row.tool_use_id, row.tool_name) for row in found if row.turn_type == "tool_result"] == [
        ("t2", "Read"), ("t1", "Bash")]
    assert not texts(found, "user") and not [text for text in texts(found) if text.startswith("parser:")]


def test_a_call_streamed_twice_is_one_tool_use_and_one_repeated_row():
    found = rows(reply(use("t1")), reply(use("t1"), stop="tool_use"), results(result("t1")))
    assert [row.turn_type for row in found if row.tool_use_id == "t1"] == ["tool_use", "system", "tool_result"]
    assert "repeated: tool call t1 (Bash) was given on an earlier line" in texts(found)


def test_usage_gives_one_tokens_row_from_the_line_that_ends_the_reply():
    usage = {"input_tokens": 10, "output_tokens": 2}
    found = rows(reply({"type": "text", "text": "a"}, usage=usage), reply(use("t1"), stop="tool_use", usage=usage),
                 results(result("t1")))
    assert [text for text in texts(found) if text.startswith("tokens generated:")] == [
        "tokens generated: model=qwen3-coder-plus input=10 output=2 (message msg_1, stop tool_use)"]


def test_the_denial_kind_not_the_text_gives_the_decision_with_the_feedback():
    found = rows(reply(use("t1")), results(result("t1", "anything at all", is_error=True),
                                           toolDenialKind="user-rejected", userFeedback="use make"))
    decisions = [(row.text, row.tool_use_id, row.tool_name) for row in found if row.text.startswith("permission")]
    assert decisions == [("permission decision: denied with feedback: use make", "t1", "Bash")]
    assert texts(found, "tool_result") == ["error: anything at all"]


def test_denial_kinds_given_as_lists_follow_their_results_and_cancelled_is_no_decision():
    found = rows(reply(use("a"), use("b"), use("c")),
                 results(result("a"), result("b", is_error=True), result("c", is_error=True),
                         toolDenialKind=[None, "permission-rule", "cancelled"]))
    assert [(row.tool_use_id, row.text) for row in found if row.text.startswith("permission decision")] == [
        ("b", "permission decision: denied by a permission rule (not asked)")]


def test_a_model_row_where_the_model_is_first_seen_and_where_it_changes_but_not_for_synthetic_replies():
    found = rows(reply({"type": "text", "text": "a"}, model="m1"), reply({"type": "text", "text": "b"}, model="m1"),
                 reply({"type": "text", "text": "error"}, model="<synthetic>"),
                 reply({"type": "text", "text": "c"}, model="m2"))
    assert [text for text in texts(found) if text.startswith("model:")] == ["model: m1", "model: m1 -> m2"]
    assert "synthetic: error" in texts(found, "system") and "error" not in texts(found, "assistant")


def test_runtime_config_and_token_stats_are_timed_by_their_milliseconds():
    found = rows({"type": "runtime-config", "sessionId": SESSION, "model": "m", "timestamp": 1780369445200},
                 {"type": "token-stats", "sessionId": SESSION, "promptTokenCount": 9, "timestamp": 1780369445201})
    assert [(row.timestamp_ns, row.timestamp_source) for row in found] == [
        (1780369445200 * 1_000_000, "record"), (1780369445201 * 1_000_000, "record")]
    assert found[0].text == "model: m (runtime config)"


def test_titles_and_other_metadata_without_a_time_are_untimed_system_rows():
    found = rows({"type": "custom-title", "sessionId": SESSION, "customTitle": "Fix sync"},
                 {"type": "ai-title", "sessionId": SESSION, "aiTitle": "Sync fix"}, {"type": "mode", "mode": "plan"})
    assert [(row.text, row.timestamp_source, row.session_id) for row in found] == [
        ("title: Fix sync (custom-title)", "none", SESSION), ("title: Sync fix (ai-title)", "none", SESSION),
        ("session mode: plan", "none", SESSION)]


def test_compaction_summary_interruption_and_meta_text_are_not_user_rows():
    found = rows(entry("user", message={"role": "user", "content": "summary so far"}, isCompactSummary=True),
                 entry("user", message={"role": "user", "content": "[Request interrupted by user]"}),
                 entry("user", message={"role": "user", "content": "<reminder>"}, isMeta=True))
    assert texts(found) == ["compaction summary: summary so far", "interrupted: [Request interrupted by user]",
                            "meta message: <reminder>"]
    assert not texts(found, "user")


def test_a_sub_agent_files_rows_carry_the_agent_and_its_prompt_is_not_typed():
    found = rows(entry("user", message={"role": "user", "content": "list targets"}, isSidechain=True,
                       agentId="a7f3"), path=AGENT_PATH)
    assert [(row.turn_type, row.text, row.session_id) for row in found] == [
        ("system", "subagent prompt: list targets", f"{SESSION}/agent-a7f3")]


def test_pictures_and_documents_are_placeholders_never_bytes():
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    found = rows(entry("user", message={"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}]}))
    assert texts(found) == ["[image image/png, 24 bytes]", "[document application/pdf]"]


def test_damaged_lines_each_give_one_parser_row_and_the_rest_is_read():
    data = (json.dumps(entry("user", message={"role": "user", "content": "first"})).encode() + b"\n"
            + b'{"type":"user","message":\n' + b'{"uuid":"x"}\n' + b'{"type":"assistant","message":{"content":"cut')
    found = drafts(FakeBundle({("qoder-cli.transcripts", PATH): data}), PATH, "qoder_cli.transcript.v1")
    assert [row.locator for row in found] == ["line:1/message/content/0", "line:2", "line:3", "line:4"]
    assert found[0].text == "first"
    reasons = ("parser: unparseable line (invalid JSON: ", "parser: unparseable line (no entry type): ",
               "parser: unparseable line (torn last line, no newline: ")
    assert [row.text.startswith(reason) for row, reason in zip(found[1:], reasons, strict=True)] == [True] * 3


def test_unknown_entry_types_are_named_and_calls_left_open_get_their_row():
    found = rows({"type": "queue-ledger", "sessionId": SESSION, "pending": 2}, reply(use("t9")))
    assert texts(found)[0] == 'entry queue-ledger: {"pending":2}'
    assert texts(found)[-1] == "parser: no result recorded for tool call t9 (Bash)"


PLANTED = (b"qoder-FAKE-access-8c1a77e2Lq", b"qoder-FAKE-refresh-31dd0aa9Zx", b"gho_FAKEqoderMcpToken77aa")


def test_credential_files_are_never_collected_and_their_values_reach_no_output(cli, tmp_path):
    from tests.conftest import all_decompressed, bundle_records

    home = shutil.copytree(FIXTURES / "qoder-cli" / "session" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    refused = sorted(record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect")
    assert refused == [".qoder/mcp-oauth-tokens.json", ".qoder/oauth_creds.json"]
    outputs = {"bundle": all_decompressed(bundle)}
    for name, extra in (("t.csv", ()), ("t.jsonl", ("--format", "jsonl"))):
        assert cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *extra).exit_code == 0
        outputs[name] = (tmp_path / name).read_bytes()
    assert cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1").exit_code == 0
    outputs["report"] = (tmp_path / "r.html").read_bytes()
    assert b"denied with feedback" in outputs["t.csv"]
    assert not [(where, value) for where, data in outputs.items() for value in PLANTED if value in data]
