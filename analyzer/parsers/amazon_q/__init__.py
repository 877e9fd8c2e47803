r"""Amazon Q Developer CLI (``q chat``, open source, Rust): data.sqlite3, settings.json, ~/.aws/amazonq.

The row rules are those of docs/agents/amazon-q.md. All record shapes are read in
source at aws/amazon-q-developer-cli@15cc8f3cd1 ([src]).

* ``<data-local>/amazon-q/data.sqlite3`` with its -wal (``dirs::data_local_dir()``:
  ``~/.local/share``, ``~/Library/Application Support``, ``%LOCALAPPDATA%``;
  util/paths.rs:327-332): table ``conversations`` holds one ConversationState
  per directory (the row key), rewritten whole after every turn
  (conversation.rs:405-422), so a conversation's earlier versions, and the
  conversations a new chat in the same directory replaced, survive only in the
  -wal's earlier commits: read as secondary rows (formats/q_database.py,
  formats/q_conversation.py). ``history`` (shell commands), ``migrations``
  and ``state`` (credential keys never selected) give system rows;
  ``auth_kv`` (SSO tokens) is a credential table no query names.
* ``<data-local>/amazon-q/settings.json``: flat dotted keys (database/settings.rs).
* ``~/.aws/amazonq/cli-agents/*.json`` (agents: ``allowedTools``,
  ``toolsSettings``, MCP servers) and ``~/.aws/amazonq/mcp.json`` (legacy global
  MCP servers): formats/q_config.py and formats/mcp_settings.py; MCP ``env``
  values never reach a row.

Sample ``conversations`` row (key ``/home/raj/src/inventory``)::

    {"conversation_id":"5c1b9d62-...","history":[{"user":{"content":{"Prompt":{"prompt":"Which tests fail?"}},
     "timestamp":"2026-08-30T14:02:11.204+02:00",...},"assistant":{"ToolUse":{"message_id":"m-01",
     "content":"Running the suite.","tool_uses":[{"id":"tooluse_Q1","name":"execute_bash",...}]}},
     "request_metadata":{"request_start_timestamp_ms":1788357731204,"stream_end_timestamp_ms":1788357734920,
     "model_id":"claude-sonnet-4",...}},...],"transcript":["> Which tests fail?",...],"model_info":{...}}

References: aws/amazon-q-developer-cli@15cc8f3cd1 crates/chat-cli/src/database/mod.rs:57-65,157-175,239-252,
383-413,446-451,470-474; database/sqlite_migrations/000-007; database/settings.rs:95-140;
util/paths.rs:44-67,143-151,307-332;
cli/chat/conversation.rs:91-167,405-422,496-502,892-908; cli/chat/message.rs:53-76,332-448,507-519;
cli/chat/parser.rs:686-713; cli/chat/mod.rs:941-966,2320-2343; cli/chat/tools/mod.rs:73-87,257-324;
cli/chat/tools/execute/mod.rs:150-163; cli/agent/mod.rs:129-173; api_client/model.rs:491-495,723-728,795-851;
crates/fig_settings/src/history.rs:87-130 @5c621df6fd (the history table's writer, since removed);
research/formats-more-desktop-agents.md section 9.
"""

from .stores import parse_agent, parse_data_db, parse_mcp, parse_settings

PARSERS = (
    ("amazon_q.data_db.v1", parse_data_db),
    ("amazon_q.settings.v1", parse_settings),
    ("amazon_q.agent.v1", parse_agent),
    ("amazon_q.mcp.v1", parse_mcp),
)
