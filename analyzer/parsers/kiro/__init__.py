r"""Kiro (AWS): the Kiro IDE (a Code-OSS fork) and Kiro CLI, the Amazon Q Developer CLI's successor.

The row rules are those of docs/agents/kiro.md. Both programs are closed source:
every shape is observed by third parties ([obs]) except the legacy CLI database,
whose conversation JSON is the Q CLI's, read in source ([src]).

* Kiro CLI ``~/.kiro/sessions/cli/<uuid>.jsonl`` (``$KIRO_HOME``): ``{"version":"v1",
  "kind":"Prompt"|"AssistantMessage"|"ToolResults","data":{...}}`` lines, calls joined
  to results by ``toolUseId``; the ``<uuid>.json`` sidecar gives cwd, title, model,
  created/updated times and per-turn token counts (cli_session.py);
* Kiro CLI's legacy engine: ``<data-local>/kiro-cli/data.sqlite3`` table
  ``conversations_v2 (key, conversation_id, value, created_at, updated_at)``, the
  value a Q CLI ConversationState; earlier versions from the -wal as secondary
  rows; ``auth_kv`` never read (formats/q_database.py, formats/q_conversation.py);
* the IDE's ``globalStorage/kiro.kiroagent/workspace-sessions/<base64url(workspace)>/``
  ``sessions.json`` and ``<sessionId>.json`` (ide.py): the project path is the
  decoded folder name;
* ``~/.kiro/settings/cli.json`` (settings), ``~/.kiro/settings/mcp.json`` (MCP
  servers, env values never in a row), ``~/.kiro/agents/*.json`` (allowedTools,
  toolsSettings: the Q CLI agent schema) via formats/q_config.py and mcp_settings.py.

Sample lines::

    {"version":"v1","kind":"Prompt","data":{"meta":{"timestamp":1788200000},"content":[{"kind":"text","data":"..."}]}}
    {"version":"v1","kind":"AssistantMessage","data":{"content":[{"kind":"toolUse","data":{"toolUseId":"tooluse_01x",
     "name":"fs_read","input":{"path":"server.py"}}}]}}

References: Dicklesworthstone/franken_agent_detection@9d43dcfe src/connectors/kiro.rs (CLI log and sidecar);
yigitkonur/cli-continues@8c23346d src/parsers/kiro.ts (IDE workspace sessions, envelope lines, conversations_v2
table name); tclahr/uac@23f6efb2 artifacts/files/applications/ai_agents/kiro.yaml (roots); an aws-bench Kiro CLI
adapter and a Go usage collector's test (index copies, repositories unresolved: toolUse/toolResult field names,
conversations_v2 columns, ~/.local/share/kiro-cli); aws/amazon-q-developer-cli@15cc8f3cd1 (the ConversationState,
database/mod.rs:302-310 kiroUpgrade); research/formats-more-desktop-agents.md sections 5, 9, 15-17.
"""

from .cli_session import parse_cli_session, parse_cli_session_state
from .config import parse_agent, parse_cli_db, parse_mcp, parse_settings
from .ide import parse_ide_session, parse_ide_sessions

PARSERS = (
    ("kiro.cli_session.v1", parse_cli_session),
    ("kiro.cli_session_state.v1", parse_cli_session_state),
    ("kiro.cli_db.v1", parse_cli_db),
    ("kiro.ide_sessions.v1", parse_ide_sessions),
    ("kiro.ide_session.v1", parse_ide_session),
    ("kiro.settings.v1", parse_settings),
    ("kiro.agent.v1", parse_agent),
    ("kiro.mcp.v1", parse_mcp),
)

# The state sidecar names its session, which the .jsonl log holds; the IDE index names sessions whose files hold them.
SESSIONS_NAMED = (("kiro.cli_session_state.v1", ("kiro.cli_session.v1",)),
                  ("kiro.ide_sessions.v1", ("kiro.ide_session.v1",)))
