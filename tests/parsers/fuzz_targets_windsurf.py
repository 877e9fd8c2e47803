"""Windsurf files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

GLOBAL = ".config/Windsurf/User/globalStorage/"
WORKSPACE = ".config/Windsurf/User/workspaceStorage/7a4e1c0f9b2d4e55b6c3d2a1f0e9d8c7/"
CONTEXT = {
    ("windsurf.workspace_map", WORKSPACE + "workspace.json"): b'{"folder":"file:///home/dana/src/billing-api"}',
    ("windsurf.cascade", ".codeium/windsurf/cascade/4d3c2b1a-0000-4000-8000-00000000beef.pb"): b"\x8f\x11\xa0",
}

TARGETS = [
    FuzzTarget("windsurf.state_vscdb.v1", "windsurf.global_state", GLOBAL + "state.vscdb", context=CONTEXT),
    FuzzTarget("windsurf.state_vscdb.v1", "windsurf.global_state_backup", GLOBAL + "state.vscdb.backup",
               context=CONTEXT),
    FuzzTarget("windsurf.mcp_config.v1", "windsurf.mcp_config", ".codeium/windsurf/mcp_config.json"),
]
