"""Trae files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

FOLDER = ".config/Trae/User/workspaceStorage/7d2e4f10a9b84c3d9e5f6a7b8c9d0e1f"
MAP = {("trae.workspace_map", f"{FOLDER}/workspace.json"): b'{"folder": "file:///home/mei/src/shop"}'}

TARGETS = [
    FuzzTarget("trae.agent_storage.v1", "trae.workspace_state", f"{FOLDER}/state.vscdb", context=MAP),
    FuzzTarget("trae.wal_history.v1", "trae.workspace_state_wal", f"{FOLDER}/state.vscdb", context=MAP),
    FuzzTarget("trae.input_history.v1", "trae.input_history", f"{FOLDER}/state.vscdb", context=MAP),
]
