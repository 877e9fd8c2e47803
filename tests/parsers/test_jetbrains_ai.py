"""JetBrains AI Assistant and Junie parsers, one rule per test (docs/agents/jetbrains-ai.md)."""

from __future__ import annotations

import base64
import csv
import json
import shutil

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES, every_output

CONFIG = ".config/JetBrains/IntelliJIdea2026.1"
WORKSPACE = f"{CONFIG}/workspace/abc.xml"
UID = "b3c4d5e6-0000-4000-8000-00000000a1b2"
EVENTS = f"{CONFIG}/aia-task-history/{UID}.events"
SESSION = "session-260830-101500-k3z9"
JUNIE_EVENTS = f".junie/sessions/{SESSION}/events.jsonl"
INDEX = ".junie/sessions/index.jsonl"
P, A = "com.intellij.ml.llm.chat.shared.", "com.intellij.ml.llm.aui.events.api."


def chat_xml(messages: str, extra: str = "") -> bytes:
    return (f'<project version="4"><component name="ChatSessionStateTemp"><option name="chats"><list><SerializedChat>'
            f'<option name="chatModelId" value="agent_x" /><option name="uid" value="u1" />{extra}'
            f'<option name="messages"><list>{messages}</list></option></SerializedChat></list></option></component>'
            f'</project>').encode()


def message(author: str, shown: str, internal: str | None = None) -> str:
    inner = f'<option name="internalContent" value="{internal}" />' if internal is not None else ""
    return (f'<SerializedChatMessage><option name="author" value="{author}" />'
            f'<option name="displayContent" value="{shown}" />{inner}</SerializedChatMessage>')


def workspace_rows(data: bytes):
    return drafts(FakeBundle({("jetbrains-ai.workspace_chats", WORKSPACE): data}), WORKSPACE,
                  "jetbrains_ai.workspace_chats.v1")


def events_file(*records: dict) -> bytes:
    return b"AUI_EVENTS_V1\n" + b"".join(base64.b64encode(json.dumps(record).encode()) + b"\n" for record in records)


def events_rows(data: bytes):
    return drafts(FakeBundle({("jetbrains-ai.task_history", EVENTS): data}), EVENTS, "jetbrains_ai.task_events.v1")


def block(**event) -> dict:
    return {"type": P + "ChatSessionMessageBlockEvent", "event": event}


# -- workspace XML -------------------------------------------------------------------------------


def test_a_dtd_is_refused_and_no_entity_is_ever_expanded():
    laughs = (b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "EXPANDED"><!ENTITY b "&a;&a;">]>'
              b'<project><component name="ChatSessionStateTemp">&b;</component></project>')
    rows = workspace_rows(laughs)
    assert [row.text for row in rows] == ["parser: unparseable file (abc.xml: a <!DOCTYPE declaration at byte 21: "
                                          "DTDs and entities are never read)"]


def test_an_undeclared_entity_is_bad_xml_not_a_fetch():
    rows = workspace_rows(chat_xml(message("User", "&external;")))
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (abc.xml: not well-formed XML: "
                                                      "undefined entity")


def test_nesting_past_the_depth_limit_is_refused():
    rows = workspace_rows(b'<p name="ChatSessionStateTemp">' + b"<a>" * 300 + b"</a>" * 300 + b"</p>")
    assert [row.text for row in rows] == ["parser: unparseable file (abc.xml: elements nested deeper than 256 levels)"]


def test_a_workspace_file_without_chats_gives_no_row():
    assert workspace_rows(b'<project><component name="RunManager" /></project>') == []


def test_internal_content_is_its_own_row_only_when_it_differs_from_what_was_shown():
    rows = workspace_rows(chat_xml(message("User", "q", "q") + message("User", "q2", "q2 + context")))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("user", "q"), ("user", "q2"), ("system", "internal content (sent to the model, not shown): q2 + context")]


def test_the_chat_timestamp_stays_raw_and_no_row_of_the_file_is_timed():
    stats = ('<option name="statisticInformation"><ChatStatisticInformation><option name="timestamp" '
             'value="1788400000000" /></ChatStatisticInformation></option>')
    rows = workspace_rows(chat_xml(message("User", "q"), stats))
    assert "statisticInformation.timestamp=1788400000000 (unit not confirmed" in rows[0].text
    assert {(row.timestamp_ns, row.timestamp_source) for row in rows} == {(None, "none")}
    assert {(row.session_id, row.model) for row in rows} == {("u1", "agent_x")}


def test_an_empty_agent_reply_says_where_its_actions_are():
    rows = workspace_rows(chat_xml(message("Assistant", "")))
    assert rows[1].text == ("assistant message with no content in the workspace file; the agent's actions are kept "
                            "in aia-task-history")


# -- aia-task-history ----------------------------------------------------------------------------


def test_a_block_sent_several_times_is_one_call_and_one_result_at_its_last_snapshot():
    rows = events_rows(events_file(
        block(kind=A + "TerminalBlockUpdatedEvent", stepId="s1", command="make", status="IN_PROGRESS"),
        block(kind=A + "TerminalBlockUpdatedEvent", stepId="s1", command="make", status="FAILED", details="error 2")))
    assert [(row.turn_type, row.tool_use_id, row.locator, row.text) for row in rows] == [
        ("tool_use", "s1", "line:3", "make (2 updates of step s1; the last is shown)"),
        ("tool_result", "s1", "line:3", "error 2 (status FAILED)")]


def test_a_block_left_in_progress_has_no_result_and_says_so():
    rows = events_rows(events_file(block(kind=A + "TerminalBlockUpdatedEvent", stepId="s2", command="sleep 9",
                                         status="IN_PROGRESS")))
    assert rows[-1].text == "parser: no result recorded for tool call s2 (terminal)"


def test_the_session_is_the_uid_in_the_file_name_and_rows_take_the_file_mtime():
    rows = events_rows(events_file({"type": P + "ChatSessionUserPromptEvent", "prompt": "hi"}))
    assert (rows[0].turn_type, rows[0].session_id, rows[0].timestamp_source) == ("user", UID, "file-mtime")


def test_a_line_that_is_not_base64_is_one_parser_row_and_the_next_is_read():
    data = events_file({"type": P + "ChatSessionUserPromptEvent", "prompt": "a"}) + b"!!!\n" + \
        base64.b64encode(json.dumps({"type": P + "ChatSessionUserPromptEvent", "prompt": "b"}).encode()) + b"\n"
    rows = events_rows(data)
    assert [row.turn_type for row in rows] == ["user", "system", "user"]
    assert rows[1].text.startswith("parser: unparseable line (not base64")


# -- Junie ---------------------------------------------------------------------------------------


def junie_rows(*records: dict, index: bytes | None = None):
    files = {("jetbrains-ai.junie_events", JUNIE_EVENTS): b"".join(json.dumps(r).encode() + b"\n" for r in records)}
    if index is not None:
        files[("jetbrains-ai.junie_session_index", INDEX)] = index
    return drafts(FakeBundle(files), JUNIE_EVENTS, "jetbrains_ai.junie_events.v1")


def a2(**event) -> dict:
    return {"kind": "SessionA2uxEvent", "event": {"state": "IN_PROGRESS", "agentEvent": event}}


def test_events_have_no_time_and_take_the_sessions_created_at_from_the_index():
    index = json.dumps({"sessionId": SESSION, "createdAt": 1788084900000, "projectDir": "/p"}).encode() + b"\n"
    rows = junie_rows({"kind": "UserPromptEvent", "prompt": "go"}, index=index)
    assert (rows[0].timestamp_ns, rows[0].timestamp_source, rows[0].project_path) == (
        1788084900000 * 10**6, "index", "/p")
    untimed = junie_rows({"kind": "UserPromptEvent", "prompt": "go"})
    assert (untimed[0].timestamp_ns, untimed[0].timestamp_source) == (None, "none")


def test_environment_variables_and_opaque_state_are_never_shown():
    rows = junie_rows(a2(kind="EnvironmentVariablesUpdatedEvent", variables={"TOKEN": "PLANTED-SECRET"}),
                      a2(kind="AgentStateUpdatedEvent", blob="PLANTED-STATE"))
    assert not [row for row in rows if "PLANTED" in row.text]


def test_a_repeated_status_is_written_once_and_the_directory_sets_the_project():
    rows = junie_rows(a2(kind="AgentCurrentStatusUpdatedEvent", status="Thinking"),
                      a2(kind="AgentCurrentStatusUpdatedEvent", status="Thinking"),
                      a2(kind="CurrentDirectoryUpdatedEvent", directory="/work/repo"),
                      {"kind": "UserPromptEvent", "prompt": "x"})
    assert [row.text for row in rows] == ["status: Thinking", "project: /work/repo", "x"]
    assert rows[-1].project_path == "/work/repo"


def test_model_usage_gives_model_and_token_rows():
    rows = junie_rows(a2(kind="LlmResponseMetadataEvent", modelUsage=[{"model": "m1", "inputTokens": 5,
                                                                       "outputTokens": 2}]))
    assert [(row.text, row.model) for row in rows] == [
        ("model: m1", "m1"), ("tokens generated: model=m1 inputTokens=5 outputTokens=2", "m1")]


def test_the_history_keeps_only_prompts_no_session_holds_in_the_golden():
    with open(FIXTURES / "jetbrains-ai" / "junie-cli" / "expected.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["origin"] for row in rows if row["text"] == "Fix the failing CsvParserTest"] == ["primary"]
    kept = [row for row in rows if row["text"] == "Bump the Gradle wrapper to 8.10"]
    assert [(row["origin"], row["timestamp_utc"]) for row in kept] == [("secondary", "2026-08-29T09:00:01.000Z")]


def test_credentials_are_never_collected_and_no_planted_value_reaches_any_output(cli, tmp_path):
    from aitrail.collector.bundle.reader import BundleReader

    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "jetbrains-ai" / "ai-assistant" / "home", home)
    shutil.copytree(FIXTURES / "jetbrains-ai" / "junie-cli" / "home", home, dirs_exist_ok=True)
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    with BundleReader(bundle) as reader:
        files = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
    never = sorted(item["path"].rsplit("/", 1)[-1] for item in files if item.get("outcome") == "never_collect")
    assert never == ["c.kdbx", "c.pwd"]
    outputs = every_output(cli, bundle, tmp_path)
    assert all(b"Fix the failing CsvParserTest" in output for output in outputs)
    for planted in (b"FAKE-kdbx-secret", b"FAKE-master-password", b"FAKE-run-config-secret", b"FAKE-junie-env-secret"):
        assert not [output for output in outputs if planted in output]
