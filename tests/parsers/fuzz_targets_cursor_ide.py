"""Cursor IDE files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

GLOBAL = ".config/Cursor/User/globalStorage/"
WORKSPACE = ".config/Cursor/User/workspaceStorage/9b2f4c0e7a1d4e55b6c3d2a1f0e9d8c7/"
MAP = {("cursor-ide.workspace_map", WORKSPACE + "workspace.json"): b'{"folder":"file:///home/alice/src/billing-api"}'}

TARGETS = [
    FuzzTarget("cursor_ide.state_vscdb.v1", "cursor-ide.global_state", GLOBAL + "state.vscdb"),
    FuzzTarget("cursor_ide.state_vscdb.v1", "cursor-ide.global_state_backup", GLOBAL + "state.vscdb.backup"),
    FuzzTarget("cursor_ide.workspace_state.v1", "cursor-ide.workspace_state", WORKSPACE + "state.vscdb", context=MAP),
    FuzzTarget("cursor_ide.workspace_prompts.v1", "cursor-ide.workspace_prompts", WORKSPACE + "state.vscdb",
               context=MAP),
]
