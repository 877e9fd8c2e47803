"""Amp parsers, one rule per test (docs/agents/amp.md)."""

from __future__ import annotations

import json
import shutil

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, bundle_records

THREAD = "T-3c9e1f4a-7b2d-4e60-9a18-5f0c2d7e8b91"
PATH = f".local/share/amp/threads/{THREAD}.json"
CASES = FIXTURES / "amp"


def thread_rows(messages: list, **top):
    document = {"v": 1, "id": THREAD, "created": 1767600000000, "title": "T", "messages": messages, **top}
    return drafts(FakeBundle({("amp.threads", PATH): json.dumps(document).encode()}), PATH, "amp.thread.v1")


def user(*blocks, sent=None, **extra):
    message = {"role": "user", "content": list(blocks), **extra}
    if sent is not None:
        message["meta"] = {"sentAt": sent}
    return message


def assistant(*blocks, model="claude-sonnet-4-5", state="complete"):
    return {"role": "assistant", "content": list(blocks), "state": {"type": state},
            "usage": {"model": model, "inputTokens": 10, "outputTokens": 2}}


def use(call_id, name="Bash", **arguments):
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(call_id, **run):
    return {"type": "tool_result", "toolUseID": call_id, "run": run}


def text(value):
    return {"type": "text", "text": value}


def test_a_result_joins_its_call_by_tool_use_id_and_is_never_a_user_row():
    rows = thread_rows([assistant(use("a"), use("b", "Read", path="/x")),
                        user(result("b", status="done", result="file"),
                             result("a", status="done", result={"output": "ok", "exitCode": 0}))])
    results = [(row.tool_use_id, row.tool_name, row.text) for row in rows if row.turn_type == "tool_result"]
    assert results == [("b", "Read", "file"), ("a", "Bash", '{"output":"ok","exitCode":0}')]
    assert not [row for row in rows if row.turn_type == "user" or row.text.startswith("parser:")]


def test_times_are_unix_ms_and_untimed_messages_take_the_time_before_them_as_index():
    rows = thread_rows([user(text("go"), sent=1767600004200), assistant(text("done"))])
    timed = {(row.turn_type, row.timestamp_ns, row.timestamp_source) for row in rows}
    assert ("system", 1767600000000 * 10**6, "record") in timed  # the thread's created
    assert ("user", 1767600004200 * 10**6, "record") in timed
    assert ("assistant", 1767600004200 * 10**6, "index") in timed


def test_the_first_tree_uri_is_the_project_path():
    trees = {"initial": {"trees": [{"uri": "file:///home/ana/src/my%20app"}, {"uri": "file:///other"}]}}
    rows = thread_rows([user(text("x"))], env=trees)
    assert {row.project_path for row in rows} == {"/home/ana/src/my app"}
    windows = {"initial": {"trees": [{"uri": "file:///C:/work/app"}]}}
    assert thread_rows([], env=windows)[0].project_path == "C:/work/app"


def test_a_rejected_run_is_a_denial_and_a_cancelled_run_is_a_failure_text():
    rows = thread_rows([assistant(use("a", "edit_file"), use("b")),
                        user(result("a", status="rejected-by-user", reason="guarded file"),
                             result("b", status="cancelled"))])
    assert [row.text for row in rows if row.tool_use_id and row.turn_type != "tool_use"] == [
        "(rejected by the user: guarded file)", "permission decision: denied (guarded file)",
        "(cancelled: no output recorded)"]


def test_model_rows_and_token_rows_come_from_usage():
    rows = thread_rows([assistant(text("a"), model="m1"), assistant(text("b"), model="m1"),
                        assistant(text("c"), model="m2")])
    assert [row.text for row in rows if row.text.startswith("model:")] == ["model: m1", "model: m1 -> m2"]
    tokens = [row.text for row in rows if row.text.startswith("tokens generated:")]
    assert tokens[0] == "tokens generated: model=m1 input_tokens=10 output_tokens=2"


def test_an_image_is_an_attachment_row_so_the_prompt_text_is_what_history_keeps():
    image = {"type": "image", "source": {"type": "base64", "mediaType": "image/png", "data": "QUJD" * 10}}
    rows = thread_rows([user(text("look"), image, sent=1767600001000)])
    assert [(row.turn_type, row.text) for row in rows[1:]] == [("user", "look"),
                                                               ("system", "attachment: [image image/png, 30 bytes]")]


def test_course_corrections_are_injected_not_typed_and_interruptions_are_said():
    rows = thread_rows([user(text("stop that"), source={"type": "course-correction"}),
                        user(text("go"), interrupted=True)])
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("system", "injected prompt (course-correction): stop that"), ("user", "go"),
        ("system", "interrupted: the user interrupted the turn of this message (interrupted=true)")]


def test_summaries_are_compaction_rows_and_redacted_thinking_is_never_shown():
    rows = thread_rows([{"role": "info", "content": [{"type": "summary", "summary": {"type": "message",
                                                                                   "summary": "S"}}]},
                        assistant({"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"})])
    assert "compaction: summary of the thread so far: S" in [row.text for row in rows]
    assert not [row for row in rows if "ENCRYPTED-BLOB" in row.text]


def test_a_manual_bash_invocation_is_a_call_and_its_result():
    rows = thread_rows([{"role": "info", "content": [{"type": "manual_bash_invocation", "args": {"cmd": "ls"},
                                                      "toolRun": {"status": "done", "result": "a\nb"}}]}])
    calls = [(row.turn_type, row.tool_name, row.text) for row in rows if row.tool_use_id]
    assert calls == [("tool_use", "Bash", '{"cmd":"ls"}'), ("tool_result", "Bash", "a\nb")]
    assert len({row.tool_use_id for row in rows if row.tool_use_id}) == 1


def test_unanswered_calls_and_answers_without_calls_are_parser_rows():
    rows = thread_rows([assistant(use("a")), user(result("z", status="done", result="x"))])
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: tool result for z with no tool call before it", "parser: no result recorded for tool call a (Bash)"]


def test_history_lines_are_untimed_prompts_with_their_folder():
    path = ".local/share/amp/history.jsonl"
    data = b'{"text":"a","cwd":"/p"}\n"bare"\n{"cwd":"/p"}\n'
    rows = drafts(FakeBundle({("amp.history", path): data}), path, "amp.history.v1")
    assert [(row.turn_type, row.text, row.project_path, row.timestamp_source) for row in rows[:2]] == [
        ("user", "a", "/p", "none"), ("user", "bare", "", "none")]
    assert rows[2].text.startswith("parser: unparseable line (no prompt text)")


def test_a_file_change_is_one_row_with_the_diff_never_the_whole_file():
    path = f".amp/file-changes/{THREAD}/toolu_x1.0f6e2c1b-4d3a-4e5f-9a8b-7c6d5e4f3a2b"
    record = {"id": "0f6e", "uri": "file:///w/a.ts", "before": "SECRET-BEFORE", "after": "SECRET-AFTER",
              "diff": "@@ -1 +1 @@", "isNewFile": False, "reverted": True, "timestamp": 1767600061442}
    rows = drafts(FakeBundle({("amp.file_changes", path): json.dumps(record).encode()}), path, "amp.file_change.v1")
    assert [(row.session_id, row.tool_use_id, row.timestamp_ns) for row in rows] == [
        (THREAD, "toolu_x1", 1767600061442 * 10**6)]
    assert rows[0].text == "file change: /w/a.ts (edited, reverted=true, id=0f6e; tool call toolu_x1): @@ -1 +1 @@"


def test_settings_rules_are_permission_rows_in_order_and_secrets_are_withheld():
    path = ".config/amp/settings.json"
    data = (b'{"amp.permissions":[{"tool":"Bash","action":"allow"},{"tool":"*","action":"reject"},],'
            b' // JSONC\n"amp.dangerouslyAllowAll":true,"amp.apiKey":"sk-FAKE-SECRET","amp.theme":"dark"}')
    rows = drafts(FakeBundle({("amp.settings", path): data}), path, "amp.settings.v1")
    assert [row.text for row in rows] == [
        'permission setting: amp.permissions[0]={"tool":"Bash","action":"allow"} (from settings.json)',
        'permission setting: amp.permissions[1]={"tool":"*","action":"reject"} (from settings.json)',
        "permission setting: amp.dangerouslyAllowAll=true (from settings.json)",
        "setting: amp.apiKey=[withheld: a credential, 14 characters] (from settings.json)",
        'setting: amp.theme="dark" (from settings.json)']


def test_the_summary_names_the_server_side_absence_when_an_amp_file_is_collected(cli, tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "amp").mkdir(parents=True)
    (home / ".config" / "amp" / "settings.json").write_text('{"amp.showCosts": true}')
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    result = cli("analyze", bundle, "-o", tmp_path / "t.csv", "--summary", tmp_path / "s.json", "--quiet")
    assert result.exit_code == 0, result.stderr
    absences = json.loads((tmp_path / "s.json").read_text())["known_absences"]
    assert [(item["agent"], item["what"]) for item in absences] == [
        ("amp", "thread transcripts (prompts, replies, tool calls and results, models)")]
    assert "0.0.1777897475" in absences[0]["versions"]


def test_no_absence_is_claimed_for_a_bundle_without_amp(cli, tmp_path):
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", CASES.parent / "copilot-cli" / "legacy-history-session" / "home", "-o", bundle,
               "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", tmp_path / "t.csv", "--summary", tmp_path / "s.json", "--quiet").exit_code == 0
    assert [item["agent"] for item in json.loads((tmp_path / "s.json").read_text())["known_absences"]
            if item["agent"] == "amp"] == []


FAKE_SECRETS = (b"sgamp_user_FAKE_AMP_API_KEY", b"gho_FAKE_AMP_GITHUB_TOKEN", b"FAKE_OAUTH_CLIENT_SECRET",
                b"FAKE_URL_TOKEN", b"FAKE_HEADER_TOKEN", b"FAKE_ARG_PASSWORD", b"FAKE_ENV_PASSWORD",
                b"ghp_FAKE_SETTINGS_TOKEN")


def test_credentials_are_never_collected_and_no_secret_reaches_any_output(cli, tmp_path):
    home = shutil.copytree(CASES / "credentials-present" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    never = {record["path"] for record in bundle_records(bundle) if record["outcome"] == "never_collect"}
    assert never == {".local/share/amp/secrets.json", ".amp/oauth/linear-client.json"}
    outputs = []
    for name, extra in (("t.csv", ()), ("t.jsonl", ("--format", "jsonl"))):
        assert cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *extra).exit_code == 0
        outputs.append((tmp_path / name).read_bytes())
    assert cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1").exit_code == 0
    outputs.append((tmp_path / "r.html").read_bytes())
    assert b"mcpServers[pg]" in outputs[0]
    for data in outputs:
        for secret in FAKE_SECRETS:
            assert secret not in data, secret
