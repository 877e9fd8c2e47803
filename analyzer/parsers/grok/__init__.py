r"""Grok: the two unrelated terminal agents that share ~/.grok.

The row rules are those of docs/agents/grok.md.

xAI's Grok Build (record shapes observed, [obs]; the chat_history items checked against its
published source, [src]):

* ``sessions/<URL-encoded cwd>/<session>/chat_history.jsonl``: both observed
  shapes (ns ISO ``timestamp`` per line, or no time: file-mtime), tool calls
  joined to results by ``tool_calls[].id`` = ``tool_call_id``, reasoning
  summaries as thinking rows, ``model_id`` as model column and ``model:`` rows,
  injected (``synthetic_reason``) user lines as system rows (chat.py);
* ``sessions/<URL-encoded cwd>/prompt_history.jsonl`` (secondary), summary.json,
  sub-agent meta.json, plan.md, hunk_records.jsonl (sessions.py);
* ``sessions/session_search.sqlite`` (secondary), read through its FTS5
  content table (search.py).

The open-source grok-dev (superagent-ai/grok-cli, [src]):

* ``grok.db`` with its -wal: sessions, messages, the calls and results it
  stores twice given once, compactions, usage (dev_db.py);
* ``workspace-trust.json``, ``delegations/``, ``schedules/``,
  ``payment_log.jsonl`` (dev_files.py). ``user-settings.json`` holds the API
  key and is never collected.

The project path of a Grok Build row is its ``sessions/`` directory name,
URL-decoded (paths.py).

Sample records::

    {"type":"assistant","content":"","model_id":"grok-code-fast-2",
     "tool_calls":[{"id":"call_7f3e1a","type":"function","function":{"name":"grep","arguments":"{...}"}}]}
    {"timestamp":"2026-07-02T09:14:05.120384512Z","session_id":"01981c3a-...","prompt":"...","is_bash":false}
    messages: ('3f9a1c7e2b4d', 1, 'assistant', '{"role":"assistant","content":[{"type":"tool-call",...}]}', ...)

References: xai-org/grok-build@19d42e35c0 crates/codegen/xai-grok-sampling-types/src/conversation.rs:68-100,
316-339,396-419,508-517 (chat_history items: ConversationItem, ToolResultItem, BackendToolKind, ContentPart,
ToolCall); superagent-ai/grok-cli@fb97af83f0 src/storage/db.ts:23-40, src/storage/migrations.ts:28-110,
src/storage/transcript.ts:114-200, src/utils/workspace-trust.ts:6-21,41-43, src/agent/delegations.ts:15-36,74-94,
225-235, src/tools/schedule.ts:7-22, src/payments/history.ts:6-15, src/payments/types.ts:14-27;
tony/agentgrep@03d12d60c0 src/agentgrep/store_catalog/grok.py and tony/agentgrep@9278f55600
docs/_observations/grok/1.0.25.toml (Grok Build stores and record keys, [obs]);
research/formats-cli-agents.md section 5.
"""

from .chat import parse_chat_history
from .dev_db import parse_dev_db
from .dev_files import parse_delegation, parse_payment_log, parse_schedule, parse_workspace_trust
from .search import parse_session_search
from .sessions import (
    parse_hunk_records,
    parse_plan,
    parse_prompt_history,
    parse_session_summary,
    parse_subagent_meta,
)

PARSERS = (
    ("grok.chat_history.v1", parse_chat_history),
    ("grok.prompt_history.v1", parse_prompt_history),
    ("grok.session_search.v1", parse_session_search),
    ("grok.session_summary.v1", parse_session_summary),
    ("grok.subagent_meta.v1", parse_subagent_meta),
    ("grok.plan.v1", parse_plan),
    ("grok.hunk_records.v1", parse_hunk_records),
    ("grok.dev_db.v1", parse_dev_db),
    ("grok.dev_workspace_trust.v1", parse_workspace_trust),
    ("grok.dev_delegation.v1", parse_delegation),
    ("grok.dev_schedule.v1", parse_schedule),
    ("grok.dev_payment_log.v1", parse_payment_log),
)

# The prompt history and the session search index name sessions; chat_history.jsonl holds them.
SESSIONS_NAMED = tuple((naming, ("grok.chat_history.v1",)) for naming in ("grok.prompt_history.v1",
                                                                          "grok.session_search.v1"))
