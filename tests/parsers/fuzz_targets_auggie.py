"""Auggie files for the parser property tests: one target per parser id, and per file form it branches on."""

from tests.analyzer.fuzz import FuzzTarget

SESSIONS = ".augment/sessions"

TARGETS = [
    FuzzTarget("auggie.session.v1", "auggie.sessions", f"{SESSIONS}/c0ffee12-3456-4789-abcd-ef0123456789.json"),
    # a backup's session id comes from its name when the document names none
    FuzzTarget("auggie.session.v1", "auggie.session_backups",
               f"{SESSIONS}/c0ffee12-3456-4789-abcd-ef0123456789-backup1.json"),
    FuzzTarget("auggie.settings.v1", "auggie.settings", ".augment/settings.json"),
    FuzzTarget("auggie.plan.v1", "auggie.plans", ".augment/plans/lint-cleanup.md"),
]
