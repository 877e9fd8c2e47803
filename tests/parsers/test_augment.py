"""Augment extension parsers, fixtures and catalog, one rule of docs/agents/augment.md per test."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from aitrail.collector import catalog
from tests import fixture_leveldb as ldb
from tests.analyzer.fakes import FakeBundle, drafts

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "augment"
FOLDER = ".config/Code/User/workspaceStorage/a1c9e4b27d3f4e0a8b5c6d7e8f901234"
STORE = f"{FOLDER}/Augment.vscode-augment/augment-kv-store"
MAP = {("augment.workspace_map", f"{FOLDER}/workspace.json"): b'{"folder": "file:///home/ana/src/reports"}'}
CONVERSATION = "c0nv-1"


def key(name: str) -> bytes:
    return f"exchange:{CONVERSATION}:{name}".encode()


def exchange(**fields) -> bytes:
    return json.dumps({"request_nodes": [], "response_nodes": [], "timestamp": "2026-08-28T16:40:12.511Z",
                       **fields}).encode()


def call(call_id: str, name: str, arguments: str = "{}") -> dict:
    return {"id": 0, "type": 5, "tool_use": {"tool_use_id": call_id, "tool_name": name, "input_json": arguments}}


def result(call_id: str, content: str, error: bool = False) -> dict:
    return {"id": 0, "type": 1, "tool_result_node": {"tool_use_id": call_id, "content": content, "is_error": error}}


def files(**named: bytes) -> dict:
    return {**MAP, **{("augment.kv_store", f"{STORE}/{name}"): data for name, data in named.items()}}


def rows(named: dict, name: str, parser: str = "augment.kv_store.v1"):
    bundle = FakeBundle(named)
    if parser == "augment.kv_history.v1":  # the same files, read by the secondary store
        bundle = FakeBundle({(("augment.kv_store_history" if store == "augment.kv_store" else store), path): data
                             for (store, path), data in named.items()})
    return drafts(bundle, f"{STORE}/{name}", parser)


def log(*batches) -> bytes:
    return ldb.log_file([ldb.batch(sequence, records) for sequence, records in batches])


# -- fixtures ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(path.parent for path in CASES.glob("*/generate.py")), ids=lambda p: p.name)
def test_every_committed_leveldb_file_is_what_its_generator_writes(case: Path):
    spec = importlib.util.spec_from_file_location(f"generate_{case.name.replace('-', '_')}", case / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.files()
    assert written
    for path, data in written.items():
        assert (case / "home" / path).read_bytes() == data, path
    directory = (case / "home" / next(iter(written))).parent
    assert {path.name for path in directory.iterdir()} == {path.rsplit("/", 1)[-1] for path in written}


def test_the_kv_store_fixture_has_snappy_blocks_and_a_record_over_three_log_blocks():
    directory = next((CASES / "kv-store" / "home").glob("**/augment-kv-store"))
    table = (directory / "000005.ldb").read_bytes()
    from aitrail.analyzer.formats import leveldb

    offset, size = leveldb._footer(table)
    assert table[offset + size] == leveldb.SNAPPY  # the index block; its data blocks are checked by the reader
    assert len((directory / "000007.log").read_bytes()) > 2 * ldb.BLOCK


# -- exchanges -----------------------------------------------------------------------------------------------------


def test_an_exchange_gives_prompt_thinking_reply_call_in_node_order_timed_by_its_timestamp():
    value = exchange(request_message="why?", response_text="because", model_id="m1", response_nodes=[
        {"id": 0, "type": 8, "thinking": {"content": "hmm"}}, {"id": 1, "type": 0, "content": "because"},
        call("t1", "view", '{"path":"a.py"}')], request_nodes=[{"id": 0, "type": 4, "ide_state_node": {}}])
    found = rows(files(**{"000005.ldb": ldb.table_file([(key("e1"), 1, ldb.VALUE, value)])}), "000005.ldb")
    assert [(row.turn_type, row.text, row.model) for row in found] == [
        ("user", "why?", ""), ("thinking", "hmm", "m1"), ("assistant", "because", "m1"),
        ("tool_use", '{"path":"a.py"}', "m1"),
        ("system", "parser: no result recorded for tool call t1 (view)", "m1")]
    assert {row.session_id for row in found} == {CONVERSATION}
    assert {row.project_path for row in found} == {"/home/ana/src/reports"}
    assert found[0].timestamp_ns == 1787935212511000000 and found[0].locator == "block:0/entry:0/seq:1/request_message"


def test_a_result_in_another_file_joins_its_call_and_takes_its_tool_name():
    named = files(**{
        "000005.ldb": ldb.table_file([(key("e1"), 1, ldb.VALUE, exchange(response_nodes=[call("t1", "save-file")]))]),
        "000007.log": log((2, [(ldb.VALUE, key("e2"), exchange(request_nodes=[result("t1", "denied", True)]))]))})
    calls = rows(named, "000005.ldb")
    assert [row.turn_type for row in calls] == ["tool_use"]  # answered elsewhere: no "no result" row
    answer = rows(named, "000007.log")
    assert [(row.turn_type, row.tool_name, row.tool_use_id, row.text) for row in answer] == [
        ("tool_result", "save-file", "t1", "[tool error] denied")]


def test_a_status_other_than_success_is_a_row_and_a_number_timestamp_is_read_by_its_size():
    value = exchange(request_message="q", status="sent", timestamp=1788021612)
    found = rows(files(**{"000007.log": log((1, [(ldb.VALUE, key("e1"), value)]))}), "000007.log")
    assert [row.text for row in found] == ["q", "exchange status: sent"]
    assert found[0].timestamp_ns == 1788021612 * 10 ** 9


def test_other_keys_are_untimed_kv_entry_rows_and_a_value_that_is_not_json_a_parser_row():
    found = rows(files(**{"000007.log": log((1, [(ldb.VALUE, b"metadata:c0nv-1", b'{"totalExchanges":2}'),
                                                  (ldb.VALUE, key("bad"), b"{cut")]))}), "000007.log")
    assert found[0].text == 'kv entry metadata:c0nv-1: {"totalExchanges":2}' and found[0].timestamp_source == "none"
    assert found[1].text.startswith("parser: unparseable record (exchange value is not JSON:")


# -- versions across the directory -----------------------------------------------------------------------------------


def versioned():
    return files(**{
        "000003.ldb": ldb.table_file([(key("e1"), 1, ldb.VALUE, exchange(response_text="old"))]),
        "000005.ldb": ldb.table_file([(key("e1"), 1, ldb.VALUE, exchange(response_text="old")),
                                      (key("e2"), 2, ldb.VALUE, exchange(request_message="secret plan"))]),
        "000007.log": log((3, [(ldb.VALUE, key("e1"), exchange(response_text="new")),
                               (ldb.DELETION, key("e2"), b"")]))})


def test_the_newest_version_of_a_key_is_the_primary_stores_and_a_deletion_is_a_key_deleted_row():
    named = versioned()
    assert [row.text for row in rows(named, "000007.log")] == [
        "new", f"key deleted: exchange:{CONVERSATION}:e2 (sequence 4)"]
    assert rows(named, "000005.ldb") == [] and rows(named, "000003.ldb") == []


def test_older_and_deleted_versions_are_the_secondary_stores_and_a_duplicate_copy_gives_no_row():
    named = versioned()
    assert [row.text for row in rows(named, "000005.ldb", "augment.kv_history.v1")] == ["old", "secret plan"]
    assert rows(named, "000003.ldb", "augment.kv_history.v1") == []  # the same version, given by 000005.ldb
    assert rows(named, "000007.log", "augment.kv_history.v1") == []


def test_damage_is_a_parser_row_in_both_stores_and_the_readable_rest_is_read():
    broken = ldb.log_file([ldb.batch(1, [(ldb.VALUE, key("a"), exchange(request_message="kept"))]),
                           ldb.batch(2, [(ldb.VALUE, key("b"), exchange(request_message="lost"))])], corrupt=1)
    named = files(**{"000007.log": broken})
    for parser in ("augment.kv_store.v1", "augment.kv_history.v1"):
        texts = [row.text for row in rows(named, "000007.log", parser)]
        assert "parser: unparseable record (checksum mismatch: the record is not read)" in texts
    assert "kept" in [row.text for row in rows(named, "000007.log")]


# -- memories and the workspace map --------------------------------------------------------------------------------


def test_memories_are_one_row_at_the_file_mtime_and_an_empty_file_none():
    path = f"{FOLDER}/Augment.vscode-augment/Augment-Memories"
    found = drafts(FakeBundle({**MAP, ("augment.memories", path): b"\n- prefers small migrations\n"}), path,
                   "augment.memories.v1")
    assert [(row.text, row.timestamp_source, row.project_path) for row in found] == [
        ("memories: - prefers small migrations", "file-mtime", "/home/ana/src/reports")]
    assert drafts(FakeBundle({("augment.memories", path): b"  \n"}), path, "augment.memories.v1") == []


def test_the_workspace_map_gives_a_project_row_only_where_augment_data_is_beside_it():
    path = f"{FOLDER}/workspace.json"
    other = ".config/Code/User/workspaceStorage/ffff/workspace.json"
    named = {**MAP, ("augment.workspace_map", other): b"not json",
             ("augment.memories", f"{FOLDER}/Augment.vscode-augment/Augment-Memories"): b"m"}
    found = drafts(FakeBundle(named), path, "augment.workspace_map.v1")
    assert [row.text for row in found] == ["project: /home/ana/src/reports (workspace folder of workspace storage "
                                           "a1c9e4b27d3f4e0a8b5c6d7e8f901234, the folder holding Augment's data)"]
    assert drafts(FakeBundle(named), other, "augment.workspace_map.v1") == []


# -- catalog ---------------------------------------------------------------------------------------------------------


def test_no_store_reaches_auggies_directory_and_every_vs_code_host_is_walked():
    agents = catalog.load()
    augment = agents.agent("augment")
    auggie_roots = {path for root in agents.agent("auggie").roots for path in root.paths}
    for root in augment.roots:
        assert not set(root.paths) & auggie_roots
        assert all(not path.startswith(".augment") for path in root.paths)
    paths = set(augment.roots[0].paths)
    for host in ("Code", "Code - Insiders", "VSCodium", "Cursor"):
        assert {f".config/{host}", f"Library/Application Support/{host}", f"AppData/Roaming/{host}"} <= paths
    stores = {store.id: store for store in augment.stores}
    assert stores["kv_store"].include == stores["kv_store_history"].include
    assert (stores["kv_store"].origin, stores["kv_store_history"].origin) == ("primary", "secondary")
