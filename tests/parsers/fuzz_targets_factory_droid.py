"""Factory Droid files for the parser property tests: one target per parser id."""

from tests.analyzer.fuzz import FuzzTarget

SESSIONS = ".factory/sessions/-home-kim-app"
SESSION = "2a4c6e80-1b3d-4f5a-9c7e-0d2f4a6c8e1b"

TARGETS = [
    FuzzTarget("factory_droid.session.v1", "factory-droid.sessions", f"{SESSIONS}/{SESSION}.jsonl", jsonl=True),
    FuzzTarget("factory_droid.session_settings.v1", "factory-droid.session_settings",
               f"{SESSIONS}/{SESSION}.settings.json"),
    FuzzTarget("factory_droid.prompt_history.v1", "factory-droid.prompt_history", ".factory/state/history.json"),
    FuzzTarget("factory_droid.settings.v1", "factory-droid.settings", ".factory/settings.json"),
    FuzzTarget("factory_droid.mcp.v1", "factory-droid.mcp", ".factory/mcp.json"),
]
