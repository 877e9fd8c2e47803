"""ChatGPT desktop parsers and catalog, one rule per test (docs/agents/chatgpt-desktop.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.conftest import every_output
from tests.test_golden import frozen_copy

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "chatgpt-desktop"
PATH = ("Library/Application Support/com.openai.chat/conversations-0f0e0d0c-0b0a-4908-8706-050403020100/"
        "c0ffee00-1111-4222-8333-444455556666.json")
KEY_GROUP = "2DC432GLL2.com.openai.shared"


def node(node_id, parent, children, role=None, text=None, when=None, model=None, **message):
    found = {"id": node_id, "parent": parent, "children": children, "message": None}
    if role is not None:
        found["message"] = {"author": {"role": role, **message.pop("author", {})}, "create_time": when,
                            "content": message.pop("content", {"content_type": "text", "parts": [text]}),
                            "metadata": {"model_slug": model} if model else {}, **message}
    return found


def conversation(*nodes, current=None, **top) -> bytes:
    document = {"id": "conv-1", "title": "T", "create_time": 1787000000.25, **top,
                "mapping": {item["id"]: item for item in nodes}}
    if current is not None:
        document["current_node"] = current
    return json.dumps(document).encode()


def rows_of(data: bytes):
    return drafts(FakeBundle({("chatgpt-desktop.conversations_v1", PATH): data}), PATH,
                  "chatgpt_desktop.conversation.v1")


def texts(rows):
    return [row.text for row in rows]


def parser_rows(rows):
    return [row.text for row in rows if row.text.startswith("parser:")]


def test_roles_map_to_turn_types_and_a_tool_message_is_a_named_tool_result():
    rows = rows_of(conversation(
        node("r", None, ["u"]),
        node("u", "r", ["a"], "user", "hi", 1787000001.0),
        node("a", "u", ["t"], "assistant", "calling", 1787000002.0),
        node("t", "a", ["s"], "tool", "42", 1787000003.0, author={"name": "python"}),
        node("s", "t", ["x"], "system", "be brief", 1787000004.0),
        node("x", "s", [], "critic", "odd role", 1787000005.0)))
    assert [(row.turn_type, row.tool_name, row.text) for row in rows[1:]] == [
        ("user", "", "hi"), ("assistant", "", "calling"), ("tool_result", "python", "42"),
        ("system", "", "system message: be brief"), ("system", "", "message (critic): odd role")]
    assert not [row for row in rows if row.tool_use_id]  # the format has no call ids


def test_create_time_is_float_seconds_read_as_written():
    rows = rows_of(conversation(node("r", None, ["u"]), node("u", "r", [], "user", "hi", 1787000010.123456)))
    assert rows[-1].timestamp_ns == 1_787_000_010_123_456_000
    assert rows[-1].timestamp_source == "record"


def test_a_message_without_a_time_takes_the_conversation_time_and_none_without_one():
    timed = rows_of(conversation(node("r", None, ["u"]), node("u", "r", [], "user", "hi")))
    assert (timed[-1].timestamp_ns, timed[-1].timestamp_source) == (1_787_000_000_250_000_000, "index")
    untimed = rows_of(conversation(node("r", None, ["u"]), node("u", "r", [], "user", "hi"), create_time=None))
    assert (untimed[-1].timestamp_ns, untimed[-1].timestamp_source) == (None, "none")


def test_the_title_is_a_title_row_of_the_session():
    rows = rows_of(conversation(node("r", None, [])))
    assert [(row.text, row.session_id, row.locator) for row in rows] == [("title: T", "conv-1", "json:/title")]


def test_the_session_is_the_id_else_conversation_id_else_the_file_stem():
    assert rows_of(conversation(node("r", None, [])))[0].session_id == "conv-1"
    doc = {"conversation_id": "conv-2", "title": "T", "mapping": {}}
    assert rows_of(json.dumps(doc).encode())[0].session_id == "conv-2"
    doc = {"title": "T", "mapping": {}}
    assert rows_of(json.dumps(doc).encode())[0].session_id == "c0ffee00-1111-4222-8333-444455556666"


def test_model_slug_fills_the_model_column_and_gives_model_rows_where_it_changes():
    rows = rows_of(conversation(
        node("r", None, ["a"]), node("a", "r", ["b"], "assistant", "1", 1.5e9, "gpt-4o"),
        node("b", "a", ["c"], "assistant", "2", 1.5e9 + 1, "gpt-4o"),
        node("c", "b", [], "assistant", "3", 1.5e9 + 2, "gpt-5")))
    assert [text for text in texts(rows) if text.startswith("model:")] == ["model: gpt-4o", "model: gpt-4o -> gpt-5"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["gpt-4o", "gpt-4o", "gpt-5"]


def test_nodes_off_the_current_path_are_rows_after_one_branch_row():
    rows = rows_of(conversation(
        node("r", None, ["u"]), node("u", "r", ["old", "new"], "user", "q", 1.0e9),
        node("old", "u", ["old2"], "assistant", "first try", 1.0e9 + 1),
        node("old2", "old", [], "user", "follow-up on the first try", 1.0e9 + 2),
        node("new", "u", [], "assistant", "second try", 1.0e9 + 3), current="new"))
    shown = texts(rows)
    branch = [text for text in shown if text.startswith("branch:")]
    assert branch == ["branch: node old and the nodes below it are not on the path from current_node new to the "
                      "root (an abandoned branch)"]
    assert shown.index(branch[0]) < shown.index("first try") < shown.index("second try")
    assert "follow-up on the first try" in shown


def test_without_current_node_there_are_no_branch_rows():
    rows = rows_of(conversation(node("r", None, ["a", "b"]), node("a", "r", [], "assistant", "x", 1.0e9),
                                node("b", "r", [], "assistant", "y", 1.0e9)))
    assert not [text for text in texts(rows) if text.startswith("branch:")]


def test_a_cycle_gives_parser_rows_and_every_node_is_read_once():
    rows = rows_of(conversation(node("a", "b", ["b"], "user", "in a", 1.0e9),
                                node("b", "a", ["a"], "assistant", "in b", 1.0e9 + 1)))
    assert texts(rows).count("in a") == 1 and texts(rows).count("in b") == 1
    assert parser_rows(rows) == [
        "parser: unparseable record (node a is reached from no root: its parent chain loops)",
        "parser: unparseable record (node a, a child of node b, was already read (a cycle or a shared child))"]
    assert all(row.session_id == "conv-1" for row in rows)


def test_a_self_loop_and_a_child_listed_twice_are_read_once():
    rows = rows_of(conversation(node("r", None, ["a", "a"]), node("a", "r", ["a"], "user", "once", 1.0e9)))
    assert texts(rows).count("once") == 1
    assert len(parser_rows(rows)) == 2


def test_a_missing_parent_and_a_missing_child_are_parser_rows_and_the_orphan_is_still_read():
    rows = rows_of(conversation(node("r", None, ["ghost", 7]), node("o", "gone", [], "user", "orphan", 1.0e9)))
    assert parser_rows(rows) == [
        'parser: unparseable record (a child of node r is not a node of the mapping): "ghost"',
        "parser: unparseable record (a child of node r is not a node of the mapping): 7",
        'parser: unparseable record (the parent of node o is not in the mapping): "gone"']
    assert "orphan" in texts(rows)


def test_a_deep_chain_is_walked_without_recursion():
    depth = 50_000
    nodes = [node("n0", None, ["n1"])] + [node(f"n{i}", f"n{i - 1}", [f"n{i + 1}"] if i < depth else [], "user",
                                               f"m{i}", 1.0e9 + i) for i in range(1, depth + 1)]
    rows = rows_of(conversation(*nodes, current=f"n{depth}"))
    assert len(rows) == depth + 1 and rows[-1].text == f"m{depth}"


def test_custom_instructions_content_is_a_system_row_not_a_user_row():
    rows = rows_of(conversation(node("r", None, ["c"]), node(
        "c", "r", [], "user", when=1.0e9, content={"content_type": "user_editable_context",
                                                    "user_profile": "dev", "user_instructions": "terse"})))
    assert [(row.turn_type, row.text) for row in rows[1:]] == [
        ("system", 'content (user_editable_context, role user): {"user_profile":"dev","user_instructions":"terse"}')]


def test_parts_keep_text_and_name_assets_and_an_empty_message_gives_no_row():
    rows = rows_of(conversation(
        node("r", None, ["s"]), node("s", "r", ["u"], "system", "", 1.0e9),
        node("u", "s", [], "user", when=1.0e9, content={"content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-1"}, "look"]})))
    assert texts(rows)[1:] == ["[image_asset_pointer file-service://file-1]\nlook"]


def test_a_file_that_is_not_json_or_has_no_mapping_is_one_parser_row():
    assert parser_rows(rows_of(b'{"id":"x","mapping":{')) == [
        "parser: unparseable file (conversation file is not JSON: Expecting property name enclosed in double quotes:"
        " line 1 column 22 (char 21))"]
    assert parser_rows(rows_of(json.dumps({"id": "x", "mapping": [1]}).encode())) == [
        "parser: unparseable record (the conversation has no mapping object): [1]"]


def test_a_current_node_that_is_not_in_the_mapping_is_a_parser_row():
    rows = rows_of(conversation(node("r", None, []), current="nowhere"))
    assert parser_rows(rows) == ['parser: unparseable record (current_node is not a node of the mapping): "nowhere"']


# -- catalog: opaque stores, documentary stores, credentials, on the outputs ------------------------------------------


def _collected(cli, tmp_path: Path) -> Path:
    home = frozen_copy(CASES / "opaque-stores" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    return bundle


def test_the_encrypted_stores_are_opaque_in_the_summary_with_reason_and_size_and_a_timeline_row(cli, tmp_path):
    bundle = _collected(cli, tmp_path)
    summary, timeline = tmp_path / "s.json", tmp_path / "t.jsonl"
    result = cli("analyze", bundle, "-o", timeline, "--format", "jsonl", "--summary", summary, "--quiet")
    assert result.exit_code == 0, result.stderr
    entries = {item["path"].rsplit("/", 1)[-1]: item for item in json.loads(summary.read_text())["not_parsed"]}
    v2 = entries["9e8d7c6b-5a49-4382-8716-0f1e2d3c4b5a.data"]
    assert v2["opaque"] is True and v2["size"] == 545 and v2["store"] == "chatgpt-desktop.conversations_v2"
    assert "AES-256-GCM" in v2["reason"] and KEY_GROUP in v2["reason"] and v2["modified_utc"]
    v3 = [item for item in entries.values() if item["store"] == "chatgpt-desktop.conversations_v3"]
    assert sorted(item["size"] for item in v3) == [108, 1052] and all(item["opaque"] for item in v3)
    assert entries[".codex-global-state.json"]["opaque"] is False  # documentary, readable, not parsed
    rows = [json.loads(line) for line in timeline.read_text().splitlines()]
    opaque_rows = [row for row in rows if row["store"] == "chatgpt-desktop.conversations_v2"]
    assert len(opaque_rows) == 1
    assert opaque_rows[0]["text"].startswith("integrity: not parsed: cannot be read: encrypted at rest (AES-256-GCM")
    assert f"; 545 bytes, SHA-256 {v2['sha256']}" in opaque_rows[0]["text"]


def test_cookies_are_never_collected_and_no_planted_value_reaches_any_output(cli, tmp_path):
    from aitrail.collector.bundle.reader import BundleReader

    bundle = _collected(cli, tmp_path)
    with BundleReader(bundle) as reader:
        files = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
    never = sorted(item["path"].rsplit("/", 2)[-2] + "/" + item["path"].rsplit("/", 1)[-1]
                   for item in files if item.get("outcome") == "never_collect")
    assert never == ["Codex/Cookies", "Network/Cookies", "com.openai.chat/Cookies"]
    outputs = every_output(cli, bundle, tmp_path)
    for planted in (b"cookie-PLANTED", b"skysight-typed-PLANTED"):
        assert not [output for output in outputs if planted in output]
    assert b"Skysight" in outputs[2]  # the segment is listed in the report, its keystrokes are not shown
