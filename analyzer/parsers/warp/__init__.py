r"""Warp (warpdotdev/warp, open source since 2026): the agent's history in warp.sqlite.

The row rules are those of docs/agents/warp.md. Every table, column, JSON
shape and time zone is read in source at warpdotdev/warp@19548aec62 ([src]);
the research had only a community schema guide ([obs]).

* ``warp.sqlite`` (and ``tui/warp.sqlite``) with its -wal (database.py):
  ``ai_queries`` prompts (queries.py), ``agent_conversations`` titles, usage,
  token counts and the auto-execute override, ``agent_tasks`` protobuf blobs
  named and sized but not decoded (conversations.py), ``blocks`` with
  ``ai_metadata``: the commands the agent ran, their output and exit code
  (blocks.py); tables.py reads only named columns of real tables and reads the
  UTC DATETIME texts.
* The MCP secrets in ``mcp_environment_variables`` and
  ``mcp_server_installations`` are never selected (catalog ``credential_tables``).

Sample record (ai_queries, as the research's example, checked against the source)::

    (41, 'ex-9f2', 'e05f25f4-...', '2026-08-27 19:22:03',
     '[{"Query":{"text":"why is port 8080 busy","context":[{"Directory":{"pwd":"/Users/kim/svc"}},
        {"Git":{"head":"main"}}]}}]', '/Users/kim/svc', '"Completed"', 'claude-4-5-opus', '', '')

References: warpdotdev/warp@19548aec62 crates/persistence/src/schema.rs (tables), crates/persistence/migrations/
(each table's history), app/src/persistence/block_list.rs:24-87,296-330 (ai_queries and blocks rows, naive_utc
times), app/src/persistence/agent.rs:17-130 (agent_conversations, agent_tasks), crates/persistence/src/model.rs
(AgentConversationData, ConversationUsageMetadata, ModelTokenUsage, AgentConversationSummary,
PersistedAutoexecuteMode), app/src/ai/blocklist/persistence.rs:27-57 (PersistedAIInput), app/src/ai/agent/mod.rs
(AIAgentContext), app/src/ai/blocklist/history_model.rs (AIQueryHistoryOutputStatus),
app/src/terminal/model/block/serialized_block.rs:93-200 (SerializedAIMetadata), crates/warp_core/src/paths.rs
(directories); warpdotdev/warp-proto-apis@00f791620e apis/multi_agent/v1/task.proto (Task);
research/formats-more-desktop-agents.md section 13.
"""

from .database import parse_warp_db

PARSERS = (
    ("warp.db.v1", parse_warp_db),
)
