"""OpenClaw files for the parser property tests: one target per parser id, and per file form it branches on."""

from tests.analyzer.fuzz import FuzzTarget

SESSION = "0198f0a1-7c00-7aaa-8bbb-000000000001"
SESSIONS = ".openclaw/agents/main/sessions"

TARGETS = [
    FuzzTarget("openclaw.agent_db.v1", "openclaw.agent_db", ".openclaw/agents/main/agent/openclaw-agent.sqlite"),
    FuzzTarget("openclaw.session_file.v1", "openclaw.legacy_sessions", f"{SESSIONS}/{SESSION}.jsonl", jsonl=True),
    # an archive's name gives a row of its own before the lines
    FuzzTarget("openclaw.session_file.v1", "openclaw.session_archives",
               f"{SESSIONS}/{SESSION}.jsonl.deleted.2026-09-02T09-00-00.000Z", jsonl=True),
    # compressed: random bytes are not zstd, so only the whole-file rule applies
    FuzzTarget("openclaw.session_file.v1", "openclaw.session_archives_zst",
               f"{SESSIONS}/{SESSION}.jsonl.deleted.2026-09-02T09-00-00.000Z.zst"),
    # the projection records (identity, active, index, fts) are counted in one row, not cited line by line
    FuzzTarget("openclaw.cold_archive.v1", "openclaw.cold_archives", f"{SESSIONS}/cold/{'a' * 64}.jsonl.zst"),
    FuzzTarget("openclaw.session_index.v1", "openclaw.session_index", f"{SESSIONS}/sessions.json"),
    FuzzTarget("openclaw.exec_approvals.v1", "openclaw.exec_approvals", ".openclaw/exec-approvals.json"),
    FuzzTarget("openclaw.state_db.v1", "openclaw.state_db", ".openclaw/state/openclaw.sqlite"),
]
