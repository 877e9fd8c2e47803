"""Pi files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

SESSION = (".pi/agent/sessions/--home-alice-src-acme-api--/"
           "2026-07-02T09-14-05-120Z_6b1f9e0c-2d3a-4b5c-8d7e-9f0a1b2c3d4e.jsonl")

TARGETS = [
    FuzzTarget("pi.session.v1", "pi.sessions", SESSION, jsonl=True),
    FuzzTarget("pi.settings.v1", "pi.settings", ".pi/agent/settings.json"),
    FuzzTarget("pi.trust.v1", "pi.project_trust", ".pi/agent/trust.json"),
    FuzzTarget("pi.trash_info.v1", "pi.trash_info",
               ".local/share/Trash/info/2026-06-28T16-02-11-004Z_3c4d5e6f-7a8b-4c9d-0e1f-2a3b4c5d6e7f.jsonl.trashinfo"),
    FuzzTarget("pi.context_mode_db.v1", "pi.context_mode_db", ".pi/context-mode/sessions/3f2a1b0c9d8e7f6a.db"),
]
