"""Crush files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TARGETS = [
    FuzzTarget("crush.db.v1", "crush.crush_db", ".crush/crush.db"),
    FuzzTarget("crush.projects.v1", "crush.projects", ".local/share/crush/projects.json"),
    FuzzTarget("crush.config.v1", "crush.user_config", ".config/crush/crush.json"),
]
