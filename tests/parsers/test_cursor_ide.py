"""Cursor IDE parsers, one rule per test (docs/agents/cursor-ide.md)."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import FIXTURES

GLOBAL = ".config/Cursor/User/globalStorage/state.vscdb"
WORKSPACE = ".config/Cursor/User/workspaceStorage/9b2f4c0e7a1d4e55b6c3d2a1f0e9d8c7/"
APP = "src.vs.platform.reactivestorage.browser.reactiveStorageServiceImpl.persistentStorage.applicationUser"
COMPOSER = "7a1e4c2b-9d3f-4e8a-b5c6-0f1e2d3c4b5a"


def built(fill, data: bytes = b"") -> bytes:
    """The bytes of a SQLite file that starts as ``data`` and is changed by ``fill(connection)``."""
    handle, path = tempfile.mkstemp(suffix=".vscdb")
    os.write(handle, data)
    os.close(handle)
    connection = sqlite3.connect(path)
    fill(connection)
    connection.commit()
    connection.close()
    with open(path, "rb") as handle:
        result = handle.read()
    os.unlink(path)
    return result


def database(rows: list[tuple[str, str, object]]) -> bytes:
    """A state.vscdb with ItemTable and cursorDiskKV holding ``rows`` (values JSON-encoded unless text)."""
    def fill(connection) -> None:
        for table in ("ItemTable", "cursorDiskKV"):
            connection.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        for table, key, value in rows:
            connection.execute(f"INSERT INTO {table} VALUES (?, ?)",
                               (key, value if isinstance(value, str) else json.dumps(value)))

    return built(fill)


def composer(headers=(), **extra) -> tuple[str, str, dict]:
    value = {"_v": 10, "composerId": COMPOSER, "name": "Fix flaky retry test", "createdAt": 1764787200000,
             "modelConfig": {"modelName": "claude-4.5-sonnet"},
             "fullConversationHeadersOnly": [{"bubbleId": bubble, "type": 1} for bubble in headers], **extra}
    return ("cursorDiskKV", f"composerData:{COMPOSER}", value)


def bubble(bubble_id: str, value) -> tuple[str, str, object]:
    return ("cursorDiskKV", f"bubbleId:{COMPOSER}:{bubble_id}", value)


def global_rows(rows, extra_files=None):
    files = {("cursor-ide.global_state", GLOBAL): database(rows), **(extra_files or {})}
    return drafts(FakeBundle(files), GLOBAL, "cursor_ide.state_vscdb.v1")


TOOL = {"toolCallId": "toolu_01Xr8KpWq3", "name": "run_terminal_cmd", "rawArgs": '{"command":"pytest -q"}',
        "result": '{"output":"2 failed","exitCode":1}', "status": "completed", "userDecision": "accepted"}


def test_tool_call_and_result_share_the_tool_call_id_and_the_result_is_never_a_user_row():
    rows = global_rows([composer(["b1", "b2"]),
                        bubble("b1", {"type": 1, "text": "run the tests", "createdAt": "2025-12-03T18:40:00.000Z"}),
                        bubble("b2", {"type": 2, "text": "", "createdAt": "2025-12-03T18:40:02.000Z",
                                      "toolFormerData": TOOL})])
    use = [row for row in rows if row.turn_type == "tool_use"]
    result = [row for row in rows if row.turn_type == "tool_result"]
    assert [(row.tool_use_id, row.tool_name, row.text) for row in use] == [
        ("toolu_01Xr8KpWq3", "run_terminal_cmd", '{"command":"pytest -q"}')]
    assert [(row.tool_use_id, row.text) for row in result] == [
        ("toolu_01Xr8KpWq3", '{"output":"2 failed","exitCode":1}')]
    assert [row.text for row in rows if row.turn_type == "user"] == ["run the tests"]
    assert not [row for row in rows if row.text.startswith("parser:")]


def test_a_call_without_a_result_gets_the_no_result_row():
    open_call = {**TOOL, "status": "running"}
    del open_call["result"]
    rows = global_rows([composer(["b2"]), bubble("b2", {"type": 2, "createdAt": "2025-12-03T18:40:02.000Z",
                                                        "toolFormerData": open_call})])
    assert rows[-1].text == "parser: no result recorded for tool call toolu_01Xr8KpWq3 (run_terminal_cmd)"
    assert rows[-1].tool_use_id == "toolu_01Xr8KpWq3" and rows[-1].session_id == COMPOSER


def test_a_rejected_call_is_a_denial_row_with_its_call_id():
    rejected = {**TOOL, "status": "rejected", "userDecision": "rejected"}
    del rejected["result"]
    rows = global_rows([composer(["b2"]), bubble("b2", {"type": 2, "toolFormerData": rejected})])
    denial = [row for row in rows if row.text == "permission decision: denied"]
    assert [(row.tool_use_id, row.tool_name) for row in denial] == [("toolu_01Xr8KpWq3", "run_terminal_cmd")]
    assert not [row for row in rows if row.text.startswith("parser: no result")]


def test_bubbles_follow_the_headers_and_unlisted_bubbles_are_still_read():
    rows = global_rows([composer(["b2", "b1"]), bubble("b1", {"type": 2, "text": "second"}),
                        bubble("b2", {"type": 1, "text": "first"}), bubble("b3", {"type": 2, "text": "unlisted"})])
    assert [row.text for row in rows if row.turn_type in ("user", "assistant")] == ["first", "second", "unlisted"]


def test_bubbles_of_a_neighbouring_composer_id_are_not_taken():
    other = ("cursorDiskKV", f"bubbleId:{COMPOSER}0:b1", {"type": 1, "text": "the other composer's"})
    rows = global_rows([composer(["b1"]), bubble("b1", {"type": 1, "text": "mine"}), other])
    assert [(row.session_id, row.text) for row in rows if row.turn_type == "user"] == [
        (COMPOSER, "mine"), (COMPOSER + "0", "the other composer's")]


def test_a_damaged_bubble_is_one_parser_row_and_the_other_bubbles_are_read():
    rows = global_rows([composer(["b1", "b2", "b3"]), bubble("b1", {"type": 1, "text": "before"}),
                        bubble("b2", '{"type":2,"text":"cut of'), bubble("b3", {"type": 2, "text": "after"})])
    bad = [row for row in rows if row.text.startswith("parser:")]
    assert len(bad) == 1 and bad[0].text.startswith("parser: unparseable record (bubble ")
    assert bad[0].locator == "sqlite:cursorDiskKV:3"
    assert [row.text for row in rows if row.turn_type in ("user", "assistant")] == ["before", "after"]


def test_a_null_bubble_and_a_missing_bubble_are_parser_rows():
    rows = global_rows([composer(["b1", "b2"]), bubble("b1", "null")])
    assert [row.text for row in rows if row.text.startswith("parser:")] == [
        "parser: unparseable record (bubble value is a JSON null, not an object)",
        "parser: unparseable record (a listed bubble has no bubbleId row): b2"]


def test_inline_conversation_with_mixed_times():
    conversation = [{"type": 1, "text": "no time"}, {"type": 2, "text": "ms", "createdAt": 1764787205000},
                    {"type": 1, "text": "iso", "createdAt": "2025-12-03T18:40:10.000Z"},
                    {"type": 2, "text": "zoneless", "createdAt": "2025-12-03T18:40:20"},
                    {"type": 2, "text": "timing",
                     "timingInfo": {"clientStartTime": 5123.4, "clientEndTime": 1764787230000}}]
    key = ("cursorDiskKV", f"composerData:{COMPOSER}",
           {"composerId": COMPOSER, "createdAt": 1764787200000, "conversation": conversation})
    rows = {row.text: row for row in global_rows([key])}
    ms = 1_000_000
    assert (rows["no time"].timestamp_ns, rows["no time"].timestamp_source) == (1764787200000 * ms, "index")
    assert (rows["ms"].timestamp_ns, rows["ms"].timestamp_source) == (1764787205000 * ms, "record")
    assert rows["iso"].timestamp_ns == 1764787210000 * ms
    assert (rows["zoneless"].timestamp_ns, rows["zoneless"].timestamp_source) == (1764787200000 * ms, "index")
    assert (rows["timing"].timestamp_ns, rows["timing"].timestamp_source) == (1764787230000 * ms, "record")
    assert rows["no time"].locator == "sqlite:cursorDiskKV:1/conversation/0"


def test_model_config_then_a_change_of_model_per_bubble():
    rows = global_rows([composer(["b1", "b2"]),
                        bubble("b1", {"type": 1, "text": "a", "modelInfo": {"modelName": "claude-4.5-sonnet"}}),
                        bubble("b2", {"type": 1, "text": "b", "modelInfo": {"modelName": "gpt-5"}})])
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: claude-4.5-sonnet", "model: claude-4.5-sonnet -> gpt-5"]
    assert [row.model for row in rows if row.turn_type == "user"] == ["claude-4.5-sonnet", "gpt-5"]


def test_thinking_is_its_own_row_before_the_reply():
    rows = global_rows([composer(["b1"]), bubble("b1", {"type": 2, "text": "reply", "thinking": {"text": "hmm"}})])
    assert [(row.turn_type, row.text) for row in rows[-2:]] == [("thinking", "hmm"), ("assistant", "reply")]


def test_unknown_bubble_type_is_a_system_row_naming_it():
    rows = global_rows([composer(["b1"]), bubble("b1", {"type": 7, "text": "checkpoint"})])
    assert rows[-1].turn_type == "system" and rows[-1].text == "bubble type 7: checkpoint"


def test_bubbles_without_a_composer_are_read_as_fragments():
    rows = global_rows([bubble("b1", {"type": 1, "text": "deleted conversation"})])
    assert [row.text for row in rows] == ["composer: no composerData row; its bubbles remain", "deleted conversation"]
    assert rows[1].session_id == COMPOSER


def test_auto_run_lists_are_permission_settings_and_models_per_surface():
    blob = {"composerState": {"yoloCommandAllowlist": ["npm test"], "yoloCommandDenylist": ["rm -rf"],
                              "modes4": [{"id": "agent", "autoRun": True}], "composerLayout": "pane"},
            "aiSettings": {"modelConfig": {"composer": {"modelName": "claude-4.5-sonnet"}}}}
    rows = global_rows([("ItemTable", APP, blob)])
    origin = "(from state.vscdb applicationUser, file mtime)"
    assert [row.text for row in rows] == [
        f'permission setting: composerState.yoloCommandAllowlist=["npm test"] {origin}',
        f'permission setting: composerState.yoloCommandDenylist=["rm -rf"] {origin}',
        f"permission setting: composerState.modes4[agent].autoRun=true {origin}",
        "model: claude-4.5-sonnet (setting aiSettings.modelConfig.composer, file mtime)"]
    assert {row.timestamp_source for row in rows} == {"file-mtime"}


def test_no_credential_value_in_any_row():
    secrets = ["eyJhbGciOiJIUzI1NiJ9.access", "eyJhbGciOiJIUzI1NiJ9.refresh", "alice.liddell@example.com",
               "sk-proj-Zx9Qw8Er7Ty6", "user_01J98KQ2W7", "v10-encrypted"]
    rows = global_rows([
        ("ItemTable", "cursorAuth/accessToken", secrets[0]), ("ItemTable", "cursorAuth/refreshToken", secrets[1]),
        ("ItemTable", "cursorAuth/cachedEmail", secrets[2]), ("ItemTable", "cursorAuth/openAIKey", secrets[3]),
        ("ItemTable", 'secret://{"extensionId":"anysphere.cursor","key":"token"}', secrets[5]),
        ("cursorDiskKV", "secret://cursorAuth/claudeKey", secrets[5]),
        ("ItemTable", APP, {"composerState": {"yoloCommandAllowlist": ["make"]},
                            "authenticationInfo": {"email": secrets[2], "userId": secrets[4]}}),
        composer(["b1"]), bubble("b1", {"type": 1, "text": "hello"})])
    assert rows
    for row in rows:
        for secret in secrets:
            assert secret not in row.text and secret not in row.model and secret not in row.session_id


def test_credentials_fixture_keeps_its_secrets_out_of_the_timeline(cli, tmp_path):
    home = FIXTURES / "cursor-ide" / "credentials" / "home"
    assert b"alice.liddell@example.com" in (home / ".config/Cursor/User/globalStorage/state.vscdb").read_bytes()
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", out, "--quiet").exit_code == 0
    timeline = out.read_text()
    assert "yoloCommandAllowlist" in timeline and "Lint config" in timeline
    for secret in ("eyJhbGciOiJIUzI1NiJ9", "alice.liddell@example.com", "sk-proj-", "user_01J98KQ2W7", "proxy.internal",
                   "v10", "Auth_0"):
        assert secret not in timeline


def test_newest_bubbles_only_in_the_wal_are_read(cli, tmp_path):
    home = FIXTURES / "cursor-ide" / "wal-newest-bubbles" / "home"
    database = home / ".config/Cursor/User/globalStorage/state.vscdb"
    alone = tmp_path / "alone.vscdb"
    alone.write_bytes(database.read_bytes())  # the database file without its -wal
    keys = [row[0] for row in sqlite3.connect(alone).execute("SELECT key FROM cursorDiskKV")]
    assert not [key for key in keys if key.endswith(("w-3", "w-4"))]
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", out, "--quiet").exit_code == 0
    timeline = out.read_text()
    assert "shrink the payload to 5 MB in the test" in timeline and "status=generating" in timeline


def workspace_bundle(listing, prompts=None, folder="file:///home/alice/src/billing-api"):
    rows = [("ItemTable", "composer.composerData", listing)]
    if prompts is not None:
        rows.append(("ItemTable", "aiService.prompts", prompts))
    data = database(rows)
    return {("cursor-ide.workspace_state", WORKSPACE + "state.vscdb"): data,
            ("cursor-ide.workspace_prompts", WORKSPACE + "state.vscdb"): data,
            ("cursor-ide.workspace_map", WORKSPACE + "workspace.json"): json.dumps({"folder": folder}).encode()}


def test_a_workspace_composer_list_gives_the_global_rows_their_project():
    files = workspace_bundle({"allComposers": [{"composerId": COMPOSER}]}, folder="file:///home/alice/src/ingest")
    rows = global_rows([composer(["b1"]), bubble("b1", {"type": 1, "text": "hello"})], files)
    assert {row.project_path for row in rows} == {"/home/alice/src/ingest"}


def test_a_listed_composer_missing_from_the_global_database_is_a_session_row():
    files = workspace_bundle({"allComposers": [{"composerId": "gone", "name": "Old helper", "createdAt": 1764800000000},
                                               {"composerId": COMPOSER}]})
    files[("cursor-ide.global_state", GLOBAL)] = database([composer([])])
    rows = drafts(FakeBundle(files), WORKSPACE + "state.vscdb", "cursor_ide.workspace_state.v1")
    assert [(row.session_id, row.text, row.project_path) for row in rows] == [
        ("gone", "session: Old helper (listed in the workspace's composer list; its composerData is not in the bundle)",
         "/home/alice/src/billing-api")]


def test_prompt_copies_are_user_rows_and_a_tool_result_never_is():
    files = workspace_bundle({"allComposers": []}, [{"text": "round half up", "commandType": 4}, {"commandType": 4}])
    bundle = FakeBundle(files)
    source = next(s for s in bundle.sources if s.store == "cursor-ide.workspace_prompts")
    rows = drafts_for(bundle, source, "cursor_ide.workspace_prompts.v1")
    assert [(row.turn_type, row.text) for row in rows] == [
        ("user", "round half up"), ("system", "parser: unparseable record (aiService.prompts entry without text)")]


def drafts_for(bundle, source, parser_id):
    from aitrail.analyzer.view.context import ParseContext
    from tests.analyzer.fakes import REGISTRY

    return list(REGISTRY[parser_id](ParseContext(bundle, source, {})))


def test_legacy_chat_panel_tabs_are_user_and_assistant_rows():
    chat = {"tabs": [{"tabId": "t1", "chatTitle": "regex", "lastSendTime": 1716380000000,
                      "bubbles": [{"type": "user", "text": "regex for dates?"}, {"type": "ai", "text": "\\d{4}"}]}]}
    data = database([("ItemTable", "workbench.panel.aichat.view.aichat.chatdata", chat)])
    rows = drafts(FakeBundle({("cursor-ide.workspace_state", WORKSPACE + "state.vscdb"): data}),
                  WORKSPACE + "state.vscdb", "cursor_ide.workspace_state.v1")
    assert [(row.turn_type, row.text, row.session_id, row.timestamp_source) for row in rows] == [
        ("system", "chat tab: regex", "t1", "index"), ("user", "regex for dates?", "t1", "index"),
        ("assistant", "\\d{4}", "t1", "index")]


def test_not_a_database_is_one_parser_row():
    rows = drafts(FakeBundle({("cursor-ide.global_state", GLOBAL): b"not sqlite" * 200}), GLOBAL,
                  "cursor_ide.state_vscdb.v1")
    assert len(rows) == 1 and rows[0].text.startswith("parser: unparseable file (state.vscdb: ")


def test_a_composer_over_the_held_budget_gives_the_same_rows(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import composers

    rows = [composer(["b1", "b2", "b3"]), bubble("b1", {"type": 1, "text": "one"}),
            bubble("b2", {"type": 2, "text": "two"}), bubble("b3", '{"cut')]
    held = [(row.text, row.locator) for row in global_rows(rows)]
    monkeypatch.setattr(composers, "HELD_BYTES", 20)  # the first bubble only: the others are fetched by key
    assert [(row.text, row.locator) for row in global_rows(rows)] == held
    assert [text for text, _ in held if not text.startswith(("composer:", "model:"))][:2] == ["one", "two"]


def test_older_builds_name_models_as_ai_settings_strings():
    blob = {"aiSettings": {"openAIModel": "claude-3.5-sonnet", "composerModel": "gpt-4o", "privateFTOpenAIModel": None,
                           "teamIds": []}}
    rows = global_rows([("ItemTable", APP, blob)])
    assert [(row.text, row.model) for row in rows] == [
        ("model: claude-3.5-sonnet (setting aiSettings.openAIModel, file mtime)", "claude-3.5-sonnet"),
        ("model: gpt-4o (setting aiSettings.composerModel, file mtime)", "gpt-4o")]


def test_a_tool_former_data_that_is_no_object_is_a_parser_row_and_the_text_stays():
    rows = global_rows([composer(["b1"]), bubble("b1", {"type": 2, "text": "reply", "toolFormerData": "oops"})])
    assert [(row.turn_type, row.text) for row in rows[-2:]] == [
        ("assistant", "reply"), ("system", "parser: unparseable record (toolFormerData is not an object): oops")]
    assert rows[-1].session_id == COMPOSER


def test_composer_headers_give_a_project_and_list_composers_without_composer_data():
    data = database([composer(["b1"]), bubble("b1", {"type": 1, "text": "hello"})])
    handle, path = tempfile.mkstemp(suffix=".vscdb")
    os.write(handle, data)
    os.close(handle)
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, createdAt INTEGER, value TEXT)")
    uri = {"workspaceIdentifier": {"uri": {"scheme": "file", "path": "/home/alice/src/ingest"}}}
    connection.executemany("INSERT INTO composerHeaders VALUES (?, ?, ?)", [
        (COMPOSER, 1764787200000, json.dumps(uri)), ("gone", 1764700000000, json.dumps({"name": "Old", **uri})),
        (None, 1, "{}")])
    connection.execute("INSERT INTO composerHeaders VALUES ('bad-utf8', 1, CAST(x'fffe7b' AS TEXT))")  # not UTF-8
    connection.commit()
    connection.close()
    with open(path, "rb") as handle:
        data = handle.read()
    os.unlink(path)
    rows = drafts(FakeBundle({("cursor-ide.global_state", GLOBAL): data}), GLOBAL, "cursor_ide.state_vscdb.v1")
    assert {row.project_path for row in rows if row.session_id == COMPOSER} == {"/home/alice/src/ingest"}
    assert [row.text for row in rows if row.text.startswith(("session:", "parser:"))] == [
        "parser: unparseable record (composerHeaders row without a composerId)",
        "parser: unparseable record (composerHeaders value is not JSON: Expecting value: line 1 column 1 (char 0))",
        "session: Old (listed in composerHeaders; its composerData is not in the bundle)",
        "session: (untitled) (listed in composerHeaders; its composerData is not in the bundle)"]


def test_bubbles_of_a_composer_whose_id_holds_a_colon_are_read_once():
    odd = "a:b"
    rows = global_rows([("cursorDiskKV", f"composerData:{odd}", {"composerId": odd, "createdAt": 1764787200000}),
                        ("cursorDiskKV", f"bubbleId:{odd}:b1", {"type": 1, "text": "once"}),
                        ("cursorDiskKV", "bubbleId:a:b2", {"type": 1, "text": "composer a, deleted"})])
    assert [(row.session_id, row.text) for row in rows if row.turn_type == "user"] == [
        (odd, "once"), ("a", "composer a, deleted")]


# -- budgets: what one database may make the parser hold (docs/agents/cursor-ide.md, Limits) -----------


def with_headers(data: bytes, headers: list[tuple]) -> bytes:
    """``data`` (a state.vscdb) with a composerHeaders table holding ``headers`` (composerId, createdAt, value)."""
    def fill(connection) -> None:
        connection.execute("CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, createdAt INTEGER, value TEXT)")
        connection.executemany("INSERT INTO composerHeaders VALUES (?, ?, ?)", headers)

    return built(fill, data)


def test_headers_over_their_budget_keep_the_first_and_name_the_rest(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import headers

    data = with_headers(database([]), [(f"h{n}", 1764787200000, json.dumps({"name": f"Header {n}"}))
                                       for n in range(1, 4)])
    one = len("h1") + len("Header 1") + len("sqlite:composerHeaders:1") + headers.HEADER_COST
    monkeypatch.setattr(headers, "HEADERS_BUDGET", one)
    rows = drafts(FakeBundle({("cursor-ide.global_state", GLOBAL): data}), GLOBAL, "cursor_ide.state_vscdb.v1")
    assert [(row.text, row.locator) for row in rows] == [
        (f"parser: composerHeaders over the limit ({one} bytes of headers held, each costing 512 more than its "
         "text); 2 rows from this one on were counted, not read: their names and folders are not shown",
         "sqlite:composerHeaders:2"),
        ("session: Header 1 (listed in composerHeaders; its composerData is not in the bundle)",
         "sqlite:composerHeaders:1")]


def recorded(monkeypatch, module, name: str) -> list:
    """The instances of ``module.name`` made while a test runs."""
    made = []
    original = getattr(module, name)

    class Recorded(original):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(module, name, Recorded)
    return made


def test_composer_ids_over_their_budget_are_looked_up_and_give_the_same_rows(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import composers, held

    other = "c2"
    rows = [composer(["b1"]), bubble("b1", {"type": 1, "text": "mine"}),
            ("cursorDiskKV", f"composerData:{other}", {"composerId": other, "createdAt": 1764787200000}),
            ("cursorDiskKV", f"bubbleId:{other}:x", {"type": 1, "text": "the other's"}),
            ("cursorDiskKV", "bubbleId:gone:y", {"type": 1, "text": "deleted composer's"})]
    whole = [(row.session_id, row.text, row.locator) for row in global_rows(rows)]
    made = recorded(monkeypatch, composers, "KnownComposers")
    monkeypatch.setattr(held, "KNOWN_BUDGET", len(COMPOSER) + held.ID_COST)  # one id held, the first in key order
    assert [(row.session_id, row.text, row.locator) for row in global_rows(rows)] == whole
    assert made[0].ids == {COMPOSER} and made[0].over  # c2 is looked up by key
    assert [text for _, text, _ in whole if text.startswith("composer: no composerData")] == [
        "composer: no composerData row; its bubbles remain"]


def test_colon_ids_over_their_budget_are_named_and_their_bubbles_may_show_twice(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import held

    rows = [("cursorDiskKV", f"composerData:a:{name}", {"composerId": f"a:{name}", "createdAt": 1764787200000})
            for name in ("b", "c")]
    rows += [("cursorDiskKV", f"bubbleId:a:{name}:z", {"type": 1, "text": f"to a:{name}"}) for name in ("b", "c")]
    monkeypatch.setattr(held, "COLON_BUDGET", len("a:b") + 2 * held.PART_COST)  # a:b held, a:c not
    drafts_ = global_rows(rows)
    assert [(row.session_id, row.text) for row in drafts_ if row.turn_type == "user"] == [
        ("a:b", "to a:b"), ("a:c", "to a:c"), ("a", "to a:c")]
    assert [(row.text.split(";")[0], row.locator) for row in drafts_ if row.text.startswith("parser:")] == [
        (f"parser: composer ids holding ':' over the limit ({held.COLON_BUDGET} bytes held, each id costing 300 more "
         "per part)", "sqlite:cursorDiskKV:2")]


def test_a_composer_over_the_key_budget_holds_its_first_keys_and_gives_the_same_rows(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import composers, held

    rows = [composer(["b3", "b1", "b5", "b9"])] + [bubble(f"b{n}", {"type": 1, "text": f"text {n}"})
                                                   for n in range(1, 7)]
    whole = [(row.text, row.locator) for row in global_rows(rows)]
    made = recorded(monkeypatch, composers, "ComposerBubbles")
    monkeypatch.setattr(held, "KEYS_BUDGET", 2 * (len(f"bubbleId:{COMPOSER}:b1") + held.KEY_COST))
    assert [(row.text, row.locator) for row in global_rows(rows)] == whole
    assert [text for text, _ in whole if text.startswith(("text", "parser:"))] == [
        "text 3", "text 1", "text 5", "parser: unparseable record (a listed bubble has no bubbleId row): b9",
        "text 2", "text 4", "text 6"]
    assert list(made[0].rows) == [f"bubbleId:{COMPOSER}:b1", f"bubbleId:{COMPOSER}:b2"]
    assert made[0].after == f"bubbleId:{COMPOSER}:b2"


def test_a_workspace_list_checked_against_global_ids_over_their_budget_says_so(monkeypatch):
    from aitrail.analyzer.parsers.cursor_ide import held

    files = workspace_bundle({"allComposers": [{"composerId": "gone", "name": "Old helper"}]})
    files[("cursor-ide.global_state", GLOBAL)] = database([composer([])])
    monkeypatch.setattr(held, "KNOWN_BUDGET", 10)  # not even one id
    rows = drafts(FakeBundle(files), WORKSPACE + "state.vscdb", "cursor_ide.workspace_state.v1")
    assert [row.text for row in rows] == [
        "parser: composer ids of the global databases over the limit (10 bytes held, each id costing 100 more); a "
        "listed composer not among them is given a session: row below, though its conversation may be in a global "
        "database",
        "session: Old helper (listed in the workspace's composer list; its composerData is not in the bundle)"]
