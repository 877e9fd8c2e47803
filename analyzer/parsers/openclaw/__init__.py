r"""OpenClaw (formerly Clawdbot / Moltbot): per-agent SQLite transcripts, legacy and archived session JSONL, approvals.

The row rules are those of docs/agents/openclaw.md. OpenClaw's transcripts are
Pi session entries (a ``session`` header, then entries linked by
``id``/``parentId``: messages, model and thinking-level changes, compactions,
resets, branch summaries, custom entries, labels, session names), read by the
shared Pi walk (analyzer/formats/pi_session.py) with OpenClaw's two
differences (walk.py).

* ``agents/<agentId>/agent/openclaw-agent.sqlite`` (with its -wal):
  ``session_nodes``, ``session_windows``, ``transcript_events`` (``event_json``
  TEXT or ``event_zstd`` BLOB), the archives of deleted sessions and the index
  of cold archives (agent_db.py; zstd frames within the bounds of blobs.py);
  its credential tables are never read;
* ``agents/<agentId>/sessions/``: legacy ``<sessionId>.jsonl`` transcripts,
  their ``.migrated`` and Doctor copies, compaction checkpoints, and the
  ``*.jsonl.deleted.<time>[.zst]`` / ``.reset.`` / ``.bak.`` archives that
  outlive a delete (files.py); ``cold/<sha256>.jsonl.zst`` cold archives
  (files.py); the legacy ``sessions.json`` index (settings.py);
* ``exec-approvals.json`` (legacy) and ``state/openclaw.sqlite``'s
  ``exec_approvals_config`` row: exec approval policy and allowlists as
  ``permission setting:`` rows (settings.py, state_db.py).

``openclaw.json``, ``credentials/**``, ``.env``, ``secrets.json`` and the auth
files are credentials: never collected.

Sample record (a ``transcript_events`` row; the event may instead be a zstd
frame in ``event_zstd``)::

    (session_id='01JZQ3W9K4M2D8V6T5R7N0P1AB', seq=7, created_at=1788246042311, event_json=
     '{"type":"message","id":"e7","parentId":"e6","timestamp":"2026-09-01T07:00:42.311Z",
       "message":{"role":"toolResult","toolCallId":"call_31","toolName":"exec",
                  "content":[{"type":"text","text":"3 files changed"}],"isError":false}}')

References: npm openclaw 2026.9.6, its shipped docs/ and dist/: docs/reference/database-schemas/layout.md,
agent-schema-history.md (schema 20 cold storage, schema 23 compact payloads),
docs/reference/session-management-compaction/{schema,store,maintenance}.md,
docs/gateway/security/secrets-and-storage.md, docs/tools/exec-approvals.md;
dist/openclaw-agent-board-schema-*.mjs (CREATE TABLE statements), dist/artifacts-*.mjs
(src/config/sessions/artifacts.ts: archive names), dist/session-cold-storage-worker-*.mjs and
session-cold-storage-codec-*.mjs (cold archive records), dist/session-manager-*.mjs and
session-manager-codec-*.mjs (entries, reset boundary, content normalization), dist/backup-git-*.mjs
(src/state/secret-state-tables.ts: credential tables); research/formats-more-cli-agents.md section 6.
"""

from .agent_db import parse_agent_db
from .files import parse_cold_archive, parse_session_file
from .settings import parse_exec_approvals, parse_session_index
from .state_db import parse_state_db

PARSERS = (
    ("openclaw.agent_db.v1", parse_agent_db),
    ("openclaw.session_file.v1", parse_session_file),
    ("openclaw.cold_archive.v1", parse_cold_archive),
    ("openclaw.session_index.v1", parse_session_index),
    ("openclaw.exec_approvals.v1", parse_exec_approvals),
    ("openclaw.state_db.v1", parse_state_db),
)

# The legacy sessions.json names each key's session; a transcript file, the agent database or a cold archive holds it.
SESSIONS_NAMED = (("openclaw.session_index.v1", ("openclaw.session_file.v1", "openclaw.agent_db.v1",
                                                 "openclaw.cold_archive.v1")),)
