"""Kiro (IDE and Kiro CLI) files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

CLI = ".kiro/sessions/cli"
SESSION = "3a4b5c6d-0000-4000-8000-0000000000aa"
FOLDER = ".config/Kiro/User/globalStorage/kiro.kiroagent/workspace-sessions/L2hvbWUvbGVlL3Byb2ovYXBp"
SIDECAR = {("kiro.cli_session_state", f"{CLI}/{SESSION}.json"):
           b'{"session_id":"3a4b5c6d-0000-4000-8000-0000000000aa","cwd":"/w","created_at":"2026-08-31T18:13:19Z"}'}
INDEX = {("kiro.ide_session_index", f"{FOLDER}/sessions.json"): b'[{"sessionId":"s1","dateCreated":1788210000}]'}

TARGETS = [
    FuzzTarget("kiro.cli_session.v1", "kiro.cli_sessions", f"{CLI}/{SESSION}.jsonl", jsonl=True, context=SIDECAR),
    FuzzTarget("kiro.cli_session_state.v1", "kiro.cli_session_state", f"{CLI}/{SESSION}.json"),
    FuzzTarget("kiro.cli_db.v1", "kiro.cli_db", ".local/share/kiro-cli/data.sqlite3"),
    FuzzTarget("kiro.ide_sessions.v1", "kiro.ide_session_index", f"{FOLDER}/sessions.json"),
    FuzzTarget("kiro.ide_session.v1", "kiro.ide_sessions", f"{FOLDER}/s1.json", context=INDEX),
    FuzzTarget("kiro.settings.v1", "kiro.settings", ".kiro/settings/cli.json"),
    FuzzTarget("kiro.agent.v1", "kiro.agents", ".kiro/agents/backend.json"),
    FuzzTarget("kiro.mcp.v1", "kiro.mcp", ".kiro/settings/mcp.json"),
]
