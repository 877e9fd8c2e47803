"""GitHub Copilot CLI files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

SESSION = ".copilot/session-state/5e3b9c1d-7a42-4f0e-b6d8-2c9a1e4f7b10"
EVENTS = {("copilot-cli.events", f"{SESSION}/events.jsonl"): b'{"type":"user.message","data":{"content":"hi"}}\n'}

TARGETS = [
    FuzzTarget("copilot_cli.events.v1", "copilot-cli.events", f"{SESSION}/events.jsonl", jsonl=True),
    FuzzTarget("copilot_cli.workspace.v1", "copilot-cli.workspace", f"{SESSION}/workspace.yaml"),
    FuzzTarget("copilot_cli.plan.v1", "copilot-cli.plans", f"{SESSION}/plan.md"),
    FuzzTarget("copilot_cli.session_todos.v1", "copilot-cli.session_todos", f"{SESSION}/session.db"),
    # named session_store.db here: test_parsers_fuzz.fixture_cases globs "session-*" for a name starting with
    # "session-" and meets the session-state/ directory first (IsADirectoryError); the parser ignores the name
    FuzzTarget("copilot_cli.session_store.v1", "copilot-cli.session_store", ".copilot/session_store.db",
               context=EVENTS),
    FuzzTarget("copilot_cli.command_history.v1", "copilot-cli.command_history", ".copilot/command-history-state.json"),
    FuzzTarget("copilot_cli.legacy_session.v1", "copilot-cli.legacy_sessions",
               ".copilot/history-session-state/session_2d9f0c3e_1759400000000.json"),
    FuzzTarget("copilot_cli.permissions.v1", "copilot-cli.permissions", ".copilot/permissions-config.json"),
    FuzzTarget("copilot_cli.settings.v1", "copilot-cli.settings", ".copilot/settings.json"),
    FuzzTarget("copilot_cli.mcp_config.v1", "copilot-cli.mcp_config", ".copilot/mcp-config.json"),
]
