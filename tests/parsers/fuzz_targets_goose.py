"""Goose files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TARGETS = [
    FuzzTarget("goose.sessions_db.v1", "goose.sessions_db", ".local/share/goose/sessions/sessions.db"),
    FuzzTarget("goose.legacy_session.v1", "goose.legacy_sessions", ".local/share/goose/sessions/20250325_101320.jsonl",
               jsonl=True),
    FuzzTarget("goose.permission.v1", "goose.permission", ".config/goose/permission.yaml"),
    FuzzTarget("goose.config.v1", "goose.config", ".config/goose/config.yaml"),
]
