r"""Hermes Agent (Nous Research; NousResearch/hermes-agent, PyPI hermes-agent): a terminal and gateway agent.

The row rules are those of docs/agents/hermes.md. File families, under
``~/.hermes`` (``%LOCALAPPDATA%\hermes`` on Windows; ``$HERMES_HOME``; each
profile a home of its own under ``profiles/<name>/``):

* ``state.db`` (SQLite, WAL): ``sessions`` (title, cwd, git branch, model,
  system prompt, parent session for delegated sub-agents), ``messages``
  (OpenAI chat messages: ``tool_calls[].id`` joined to a tool row's
  ``tool_call_id``; ``active`` / ``compacted`` flags of compression and
  rewind), ``session_model_usage`` and ``async_delegations``, read with the
  -wal by the shared SQLite chat store walk (analyzer/formats/sqlite_chat.py);
  the FTS5 tables repeat message text and are never read (database.py,
  sessions.py, messages.py);
* ``sessions/session_<id>.json``, the optional JSON snapshots (secondary;
  snapshots.py);
* ``.hermes_history``, the CLI's prompt_toolkit history, local times without a
  zone (secondary; history.py);
* ``config.yaml``: approval mode, deny list, permanent allowlist, default model
  (config.py). ``.env``, ``auth.json`` and the other credential files are never
  collected.

Sample records::

    messages: (88, '20260705_101502_3fa9c1', 'assistant', '', NULL, '[{"id":"call_lnk1","type":"function",
      "function":{"name":"terminal","arguments":"{\"command\":\"lychee content/\"}"}}]', NULL, NULL, 1783246530.44)
    messages: (89, '20260705_101502_3fa9c1', 'tool', '2 errors: /old-url, /drafts/x', 'call_lnk1', NULL,
      'terminal', ...)

    # 2026-07-05 10:15:20.401233
    +Fix the broken links in the blog

References: pypi hermes-agent 0.19.0 (the wheel carries the source; NousResearch/hermes-agent is too large to
copy): hermes_state.py:153-155 (SCHEMA_VERSION 22), 755-975 (SCHEMA_SQL, FTS_SQL, FTS_TRIGRAM_SQL), 4104-4150
(_encode_content), 4152-4271 (append_message), 4273-4370 (_insert_message_rows), 4372-4466 (replace_messages,
archive_and_compact), 6480-6519 (delete_session); hermes_constants.py:46-67 (home, HERMES_HOME, LOCALAPPDATA);
run_agent.py:2694-2785 (_save_session_log); cli.py:4095-4105 (session id, .hermes_history);
tools/approval.py:557-600, 2780-2845 (refusal texts), 2436-2470 (approval modes); tools/terminal_tool.py:2402-2436,
2496 (blocked and approved results); agent/tool_dispatch_helpers.py:455-500 (tool result messages);
tools/mcp_tool.py:4763-4770 (MCP tool names); hermes_cli/config.py:2660-2712, 3179-3205; prompt_toolkit 3.0.52
prompt_toolkit/history.py FileHistory; research/formats-more-cli-agents.md section 11.
"""

from .config import parse_config
from .database import parse_state_db
from .history import parse_prompt_history
from .snapshots import parse_session_snapshot

PARSERS = (
    ("hermes.state_db.v1", parse_state_db),
    ("hermes.session_snapshot.v1", parse_session_snapshot),
    ("hermes.prompt_history.v1", parse_prompt_history),
    ("hermes.config.v1", parse_config),
)
