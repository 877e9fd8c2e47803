"""Claude Code: transcripts, sub-agent runs, prompt history, ~/.claude.json, settings, todos, tasks, plans.

Claude Code is closed source; the rules follow Anthropic's Agent SDK (which
reads and rewrites the same files), the official changelog and community
schemas, as research/formats-cli-agents.md section 1 collects them, and are
stated in docs/agents/claude-code.md. The package is split by file family:

* transcript.py: projects/<sanitized cwd>/<sessionId>.jsonl and
  the sub-agent files (<sessionId>/subagents/agent-<id>.jsonl, legacy
  agent-<id>.jsonl): every entry type, tool joins by id, the streaming
  split, the parentUuid tree, model rows, permission decisions;
* bookkeeping.py: what the walk holds from line to line (the tree, the
  sessions, the responses), each within a budget;
* content.py: how one entry's content reads as text;
* history.py: history.jsonl with paste-cache/, and the 1.0.x
  prompt history inside ~/.claude.json (both secondary);
* paste.py: each paste-cache/<contentHash>.txt as a row of its own, dated
  by the history.jsonl prompt that named it;
* state.py: ~/.claude.json (project map, allowedTools, legacy
  prompts; backups minus the live file), settings permission rules, todos,
  tasks, plans and the sub-agent sidecar.

Sample record (one transcript line)::

    {"type":"user","uuid":"a1…01","parentUuid":null,"sessionId":"4f9d2c1e-…","cwd":"/home/dev/src/acme-api",
     "gitBranch":"fix/login-timeout","timestamp":"2026-07-02T09:14:05.112Z",
     "message":{"role":"user","content":"The login endpoint times out under load. Find the cause."}}

References: anthropics/claude-agent-sdk-python@e8bde60164 src/claude_agent_sdk/_internal/sessions.py:43-189,
421-550,826-1020,1199-1480, session_mutations.py:182-229; anthropics/claude-code@5cfc0a1905 CHANGELOG.md;
d-kimuson/claude-code-viewer@9367cf006b src/lib/conversation-schema/index.ts:1-41;
jeremedia/claude-code-log-format@a5892fe165 CLAUDE_CODE_LOG_FORMAT.md:57-566, source-docs/JSONL_LOGGING.md.
"""

from .history import parse_history
from .paste import parse_paste_cache
from .state import (
    parse_global_state,
    parse_plan,
    parse_settings,
    parse_subagent_meta,
    parse_tasks,
    parse_todos,
)
from .transcript import parse_transcript

PARSERS = (
    ("claude_code.transcript.v1", parse_transcript),
    ("claude_code.subagent_meta.v1", parse_subagent_meta),
    ("claude_code.history.v1", parse_history),
    ("claude_code.paste_cache.v1", parse_paste_cache),
    ("claude_code.global_state.v1", parse_global_state),
    ("claude_code.settings.v1", parse_settings),
    ("claude_code.todos.v1", parse_todos),
    ("claude_code.tasks.v1", parse_tasks),
    ("claude_code.plan.v1", parse_plan),
)

# The prompt history names each prompt's session (sessionId, newer versions); a transcript holds it.
SESSIONS_NAMED = (("claude_code.history.v1", ("claude_code.transcript.v1",)),)
