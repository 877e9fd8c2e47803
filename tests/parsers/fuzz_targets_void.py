"""Void files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TARGETS = [
    FuzzTarget("void.thread_storage.v1", "void.global_state", ".config/Void/User/globalStorage/state.vscdb"),
    FuzzTarget("void.thread_storage.v1", "void.global_state_backup",
               ".config/Void/User/globalStorage/state.vscdb.backup"),
    FuzzTarget("void.mcp_config.v1", "void.mcp_config", ".void-editor/mcp.json"),
]
