"""Claude Desktop files for the parser property tests (joins: a key beside the audit log, a record beside it)."""

import json

from tests.analyzer.fuzz import FuzzTarget

ROOT = ".config/Claude"
ORG = f"{ROOT}/claude-code-sessions/2f0c6a1e-1111-4a11-8a11-000000000a01/9a7e5b2c-2222-4b22-8b22-000000000b01"
CORG = f"{ROOT}/local-agent-mode-sessions/5d1e7a90-3333-4c33-8c33-000000000c01/b7c4e2f1-4444-4d44-8d44-000000000d01"
LOCAL = "local_7c7c7c7c-0000-4000-8000-000000000007"
CLI = "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
RECORD = json.dumps({"sessionId": LOCAL, "cliSessionId": CLI, "userSelectedFolders": ["/Users/dana/Documents"]})
AUDIT_JOINS = {
    ("claude-desktop.cowork_audit_key", f"{CORG}/{LOCAL}/.audit-key"): bytes(range(32)),
    ("claude-desktop.cowork_sessions", f"{CORG}/{LOCAL}.json"): RECORD.encode(),
}
TOMBSTONE_JOINS = {
    ("claude-desktop.code_sessions", f"{ORG}/local_55aa66bb-0000-4000-8000-000000000001.json"):
        json.dumps({"cliSessionId": CLI, "title": "t"}).encode(),
    ("claude-code.transcripts", f".claude/projects/-home-dana/{CLI}.jsonl"): b"{}\n",
}

TARGETS = [
    FuzzTarget("claude_desktop.code_session.v1", "claude-desktop.code_sessions",
               f"{ORG}/local_1b2c3d4e-0000-4000-8000-00000000c0de.json",
               context={("claude-code.transcripts", f".claude/projects/-home-dana/{CLI}.jsonl"): b"{}\n"}),
    FuzzTarget("claude_desktop.cowork_session.v1", "claude-desktop.cowork_sessions", f"{CORG}/{LOCAL}.json",
               context={("claude-desktop.cowork_audit", f"{CORG}/{LOCAL}/audit.jsonl"): b"{}\n"}),
    FuzzTarget("claude_desktop.tombstone.v1", "claude-desktop.tombstones",
               f"{ORG}/deleted_55aa66bb-0000-4000-8000-000000000001", context=TOMBSTONE_JOINS),
    FuzzTarget("claude_desktop.audit.v1", "claude-desktop.cowork_audit", f"{CORG}/{LOCAL}/audit.jsonl", jsonl=True,
               context=AUDIT_JOINS),
    FuzzTarget("claude_desktop.engine_settings.v1", "claude-desktop.cowork_engine_settings",
               f"{CORG}/{LOCAL}/.claude/settings.json", context={("claude-desktop.cowork_sessions",
                                                                  f"{CORG}/{LOCAL}.json"): RECORD.encode()}),
    FuzzTarget("claude_desktop.desktop_config.v1", "claude-desktop.desktop_config",
               f"{ROOT}/claude_desktop_config.json"),
    FuzzTarget("claude_desktop.scheduled_tasks.v1", "claude-desktop.scheduled_tasks", f"{ROOT}/scheduled-tasks.json"),
    FuzzTarget("claude_desktop.spaces.v1", "claude-desktop.cowork_spaces", f"{CORG}/spaces.json"),
    FuzzTarget("claude_desktop.artifacts.v1", "claude-desktop.cowork_artifacts", f"{CORG}/artifacts.json",
               context={("claude-desktop.cowork_sessions", f"{CORG}/{LOCAL}.json"): RECORD.encode()}),
    FuzzTarget("claude_desktop.pending_upload.v1", "claude-desktop.pending_uploads",
               f"{ROOT}/pending-uploads/1f2e3d4c-5b6a-4789-8a7b-6c5d4e3f2a10-1788201000000_draft.pdf"),
]
