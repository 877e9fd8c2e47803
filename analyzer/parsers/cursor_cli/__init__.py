r"""Cursor CLI (``cursor-agent``): transcripts, chat stores, standing permissions, prompt history, plans.

Closed source: every data-store shape here is observed by third parties ([obs],
docs/agents/cursor-cli.md), the config file is documented by Cursor. File families:

* ``projects/<dashed cwd>/agent-transcripts/<session>/<session>.jsonl`` and
  ``…/<session>/subagents/<agent>.jsonl``: one ``{role, message: {content}}`` per line,
  no time (rows take the file's mtime), ``<user_query>`` text the prompt, tool_use blocks
  without ids (``pos:<line>.<block>``), results kept elsewhere;
* ``agent-transcripts/<id>.txt`` (older builds): ``user:`` / ``assistant:`` turns with
  ``[Thinking]``, ``[Tool call]`` and ``[Tool result]`` blocks;
* ``projects/<p>/agent-tools/*.txt``: one captured tool output per file, a tool_result row;
* ``chats/<md5(cwd)>/<session>/store.db``: hex-JSON meta and content-addressed blobs,
  walked from ``latestRootBlobId`` with the -wal applied;
* ``cli-config.json`` (permissions.allow/deny, approvalMode, model; ``authInfo`` never
  read) and ``permissions.json``: ``permission setting:`` and ``model:`` rows;
* ``prompt_history.json`` (secondary), ``plans/*.plan.md``, and ``ai-tracking/ai-code-tracking.db``
  (conversation summaries, files the agent deleted, scored commits).

Sample record::

    {"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nfix the login timeout\n</user_query>"}]}}

References: tony/agentgrep@75a2c680e8 src/agentgrep/adapters/cursor_cli.py (transcript, prompt history,
chat store meta and blobs, the ``default`` model placeholder); tony/agentgrep@0ec73f23f5
docs/_observations/cursor-cli/2026.09.10-fd3934a.toml (store paths, record keys ``role``/``message`` and
``type``/``status``); tony/agentgrep@51dbe54014 src/agentgrep/store_catalog/cursor_cli.py:18-357;
cursor.com/docs/cli/reference/configuration.md and permissions.md (cli-config.json);
research/formats-cli-agents.md section 7.
"""

from .chat_store import parse_chat_store
from .plans import parse_plan
from .settings import parse_agent_tool, parse_cli_config, parse_editor_permissions, parse_prompt_history
from .tracking import parse_ai_tracking
from .transcript import parse_text_transcript, parse_transcript

PARSERS = (
    ("cursor_cli.transcript.v1", parse_transcript),
    ("cursor_cli.transcript_text.v1", parse_text_transcript),
    ("cursor_cli.agent_tool.v1", parse_agent_tool),
    ("cursor_cli.chat_store.v1", parse_chat_store),
    ("cursor_cli.cli_config.v1", parse_cli_config),
    ("cursor_cli.permissions.v1", parse_editor_permissions),
    ("cursor_cli.prompt_history.v1", parse_prompt_history),
    ("cursor_cli.plan.v1", parse_plan),
    ("cursor_cli.ai_tracking.v1", parse_ai_tracking),
)
