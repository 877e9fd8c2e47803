r"""GitHub Copilot CLI (npm @github/copilot): both on-disk generations, and the stores around them.

The row rules are those of docs/agents/copilot-cli.md.

* ``session-state/<id>/events.jsonl`` (0.0.342 and later): one typed event per
  line, ``{id, timestamp (ISO 8601 with offset), parentId, agentId?, type,
  data}``; prompts, replies, reasoning, tool calls joined to their results by
  ``toolCallId``, permission requests and decisions, sub-agent runs, model and
  mode changes, compactions (log.py, events.py, events_session.py).
* ``session-state/<id>/workspace.yaml``, ``plan.md``, ``session.db`` todos
  (workspace.py).
* ``session-store.db`` (secondary; WAL): sessions, turns, checkpoints, touched
  files, references (store.py).
* ``command-history-state.json`` (secondary), ``permissions-config.json``,
  ``settings.json``, ``mcp-config.json`` (settings.py).
* ``history-session-state/session_<id>_<ms>.json`` (up to 0.0.341): the
  timeline and chat messages of a whole session (legacy.py).

``config.json`` (plain-text tokens), ``mcp-oauth-config/`` and
``~/.config/github-copilot/{hosts,apps}.json`` are never collected.

Sample records::

    {"type":"assistant.message","id":"0b7e…03","timestamp":"2026-06-20T09:15:27.902+02:00",
     "parentId":"0b7e…02","data":{"messageId":"msg-7a","model":"claude-sonnet-4.5","content":"…",
     "toolRequests":[{"toolCallId":"toolu_01Ab","name":"view","arguments":{"path":"src/cart/total.ts"}}]}}
    {"sessionId":"2d9f…","startTime":"2025-10-02T10:13:20.000Z","chatMessages":[…],"timeline":[…]}

References: npm:@github/copilot@1.0.56 package/schemas/session-events.schema.json (every event type, its data and
its ``ephemeral`` flag), package/app.js (anchors ``Dwi="session-state"``, ``ensureSchema()``, ``insertTurn(e)``,
``tRs=X.object({id``, ``BCa=wt({commandHistory``, ``cvs=wt({tool_approvals``, ``LG=wt({mouse``,
``copilotTokens:ml(``, ``<exited with exit code``); npm:@github/copilot@0.0.340 package/index.js (anchors
``vvn=fI({sessionId``, ``o$t=uvn.and(``); github/copilot-cli@9532bdacf5a343c3dcc444337f7b25e88fc7372c
changelog.md:883,1003,1210,1213,1275,1950,2771-2776; research/formats-more-cli-agents.md section 1.
"""

from .legacy import parse_legacy_session
from .log import parse_events
from .settings import parse_command_history, parse_mcp_config, parse_permissions, parse_settings
from .store import parse_session_store
from .workspace import parse_plan, parse_session_todos, parse_workspace

PARSERS = (
    ("copilot_cli.events.v1", parse_events),
    ("copilot_cli.workspace.v1", parse_workspace),
    ("copilot_cli.plan.v1", parse_plan),
    ("copilot_cli.session_todos.v1", parse_session_todos),
    ("copilot_cli.session_store.v1", parse_session_store),
    ("copilot_cli.command_history.v1", parse_command_history),
    ("copilot_cli.legacy_session.v1", parse_legacy_session),
    ("copilot_cli.permissions.v1", parse_permissions),
    ("copilot_cli.settings.v1", parse_settings),
    ("copilot_cli.mcp_config.v1", parse_mcp_config),
)

# session-store.db names every session the CLI indexed; events.jsonl (or a legacy file) holds it.
SESSIONS_NAMED = (("copilot_cli.session_store.v1", ("copilot_cli.events.v1", "copilot_cli.legacy_session.v1")),)
