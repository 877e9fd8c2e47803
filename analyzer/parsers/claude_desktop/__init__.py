"""Claude Desktop: Code-tab and Cowork session records, tombstones, Cowork audit logs and their HMAC chain, settings.

Claude Desktop is closed source; every rule follows third-party observation
([obs]) as research/formats-more-desktop-agents.md section 1 collects it, and
is stated in docs/agents/claude-desktop.md. The package is split by file family:

* index.py: ``claude-code-sessions/<acct>/<org>/local_<uuid>.json`` (Code tab)
  and ``local-agent-mode-sessions/<acct>/<org>/local_<uuid>.json`` (Cowork): the
  session, which field gave the project, the Claude Code transcripts it names and
  whether the bundle holds them (the transcripts themselves are parsed by
  claude-code: ``transcripts`` and ``cowork_transcripts``);
* tombstone.py: ``deleted_<uuid>``, 13 bytes of epoch ms: ``session deleted:``;
* audit.py, blocks.py: ``local_<uuid>/audit.jsonl``, the Agent SDK message
  stream; chain.py: its HMAC chain checked with the ``.audit-key`` beside it;
* settings.py: claude_desktop_config.json (MCP servers, preferences), a Cowork
  engine's ``.claude/settings.json`` (permissions), scheduled-tasks.json;
* registries.py: Cowork ``spaces.json``, ``artifacts.json``, and the names of
  the files in ``pending-uploads/``;
* values.py: epoch-ms times, transcript ids, bundle lookups.

Sample records::

    {"sessionId":"local_1b2c…","cliSessionId":"6e5d4c3b-…","title":"Fix flaky login test",
     "cwd":"/Users/dana/src/webshop","createdAt":1788000000000,"lastActivityAt":1788000912345}
    deleted_55aa66bb-0000-4000-8000-000000000001 -> 1788003600123
    {"type":"assistant","session_id":"f1e2d3c4-…","message":{"role":"assistant","model":"claude-sonnet-4-6",
     "content":[{"type":"tool_use","id":"toolu_01AbCdEf","name":"Glob","input":{"pattern":"**/*.pdf"}}]},
     "_audit_timestamp":"2026-08-30T09:14:04.503Z","_audit_hmac":"9e8d…"}

References: xC0uNt3r7hr34t/irflow-timeline@40bf8129f7 docs/dfir-tips/ai-apps/claude-desktop.md (tombstones,
pending-uploads, scheduled-tasks); corveil/crow@ebd30ed637 docs/harness-transcript-locations.md (Cowork layout,
audit.jsonl event types, userSelectedFolders); EricZimmerman/KapeFiles@13c564b39c Targets/Apps/ClaudeCode.tkape;
tclahr/uac@95690e3129 artifacts/files/applications/ai_agents/claude_desktop.yaml;
anthropics/claude-agent-sdk-python@e8bde60164 src/claude_agent_sdk/_internal/message_parser.py:91-378,
src/claude_agent_sdk/types.py:1104-1140,1319-1411 (SDK message shapes); index copies whose repository is
unresolved: the app.asar analysis "Desktop App 程式碼與資料目錄（binary 層）" (audit HMAC chain, Claude Desktop
1.11847.5.0) and a community records.test.ts (record fields of Claude.app 2.19675.0).
"""

from .audit import parse_audit
from .index import parse_code_session, parse_cowork_session
from .registries import parse_artifacts, parse_pending_upload, parse_spaces
from .settings import parse_desktop_config, parse_engine_settings, parse_scheduled_tasks
from .tombstone import parse_tombstone

PARSERS = (
    ("claude_desktop.code_session.v1", parse_code_session),
    ("claude_desktop.cowork_session.v1", parse_cowork_session),
    ("claude_desktop.tombstone.v1", parse_tombstone),
    ("claude_desktop.audit.v1", parse_audit),
    ("claude_desktop.engine_settings.v1", parse_engine_settings),
    ("claude_desktop.desktop_config.v1", parse_desktop_config),
    ("claude_desktop.scheduled_tasks.v1", parse_scheduled_tasks),
    ("claude_desktop.spaces.v1", parse_spaces),
    ("claude_desktop.artifacts.v1", parse_artifacts),
    ("claude_desktop.pending_upload.v1", parse_pending_upload),
)

# No SESSIONS_NAMED: the records name Claude Code sessions whose transcripts are rows of another agent
# (claude-code), and the session-missing rule joins names and holders within one agent
# (analyzer/integrity/sessions.py keys both by the source's agent). The records therefore say
# themselves, in a row, which transcript holds each session and whether the bundle has it, and give
# the ``integrity: session missing`` row when it does not (index.py).
