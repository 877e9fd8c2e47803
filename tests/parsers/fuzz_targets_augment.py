"""Augment extension files for the parser property tests (the kv-store's table and log files, memories, map)."""

from tests.analyzer.fuzz import FuzzTarget

FOLDER = ".config/Code/User/workspaceStorage/a1c9e4b27d3f4e0a8b5c6d7e8f901234"
STORE = f"{FOLDER}/Augment.vscode-augment/augment-kv-store"
MEMORIES = {("augment.memories", f"{FOLDER}/Augment.vscode-augment/Augment-Memories"): b"- uses PostgreSQL 16\n"}
MAP = {("augment.workspace_map", f"{FOLDER}/workspace.json"): b'{"folder": "file:///home/ana/src/reports"}'}

TARGETS = [
    FuzzTarget("augment.kv_store.v1", "augment.kv_store", f"{STORE}/000005.ldb", context=MAP),
    FuzzTarget("augment.kv_store.v1", "augment.kv_store", f"{STORE}/000007.log", context=MAP),
    FuzzTarget("augment.kv_history.v1", "augment.kv_store_history", f"{STORE}/000005.ldb", context=MAP),
    FuzzTarget("augment.kv_history.v1", "augment.kv_store_history", f"{STORE}/000007.log", context=MAP),
    FuzzTarget("augment.memories.v1", "augment.memories", f"{FOLDER}/Augment.vscode-augment/Augment-Memories",
               context=MAP),
    FuzzTarget("augment.workspace_map.v1", "augment.workspace_map", f"{FOLDER}/workspace.json", context=MEMORIES),
]
