r"""Crush (charmbracelet/crush): crush.db of each data directory, projects.json, the JSON configs.

The row rules are those of docs/agents/crush.md.

* ``<data dir>/crush.db`` (SQLite, WAL, read with its -wal applied): a
  ``session metadata:`` row per session (top level, sub-agent run, title
  helper), ``subagent:`` rows tying an agent run to its tool call, ``task:``
  rows for the todo list, each message's parts as rows (parts.py), ``model:``
  rows, ``compaction:`` for a summary message, a ``tokens generated:`` row of
  each session's totals, ``file history:`` and ``file read:`` rows, and
  ``session deleted:`` for a parent id no session row holds any more
  (database.py, sessions.py). Every time is Unix seconds (times.py).
* ``<global data>/projects.json``: a ``project:`` row per working directory
  and its data directory (config.py).
* ``crush.json`` configs (user, system, a data directory's workspace config):
  ``permission setting:`` and ``setting:`` rows; the global data directory's
  crush.json holds provider keys and is never collected (config.py).

Sample record (``messages.parts`` of an assistant message)::

    [{"type":"text","data":{"text":"Profiling first."}},
     {"type":"tool_call","data":{"id":"call_8Hq","name":"bash","input":"{\"command\":\"go test -bench Import ./...\"}",
      "provider_executed":false,"finished":true}},
     {"type":"finish","data":{"reason":"tool_use","time":1765449195}}]

References: charmbracelet/crush@37f36e9382 internal/db/migrations/20250424200609_initial.sql:4-82 and the
later migrations (summary_message_id, provider, is_summary_message, todos, read_files),
internal/db/sql/{sessions,messages,files,read_files}.sql (strftime('%s','now') writers),
internal/db/connect.go:17-27 (WAL, secure_delete), internal/message/content.go:20-144,
internal/message/message.go:163-168,528-579, internal/session/session.go:19-169,350-362,
internal/agent/agent.go:1126-1150,2090-2130, internal/agent/tools/tools.go:64-70,
internal/agent/hooked_tool.go:54-75, internal/projects/projects.go:14-75, internal/config/config.go:287-330;
research formats-more-cli-agents.md section 7.
"""

from .config import parse_config, parse_projects
from .database import parse_database

PARSERS = (
    ("crush.db.v1", parse_database),
    ("crush.projects.v1", parse_projects),
    ("crush.config.v1", parse_config),
)
