r"""Kimi CLI (MoonshotAI/kimi-cli, PyPI ``kimi-cli``): sessions under ~/.kimi/sessions/<md5(work dir)>/<uuid>/.

The row rules are those of docs/agents/kimi-cli.md.

* ``wire.jsonl``: the event log, one record per merged wire message, timed by
  its float-seconds ``timestamp``; turns, text, thinking, calls joined to
  results by id, approvals, token usage, compaction, sub-agent events (wire.py,
  wire_events.py). A sub-agent's own wire.jsonl is secondary.
* ``context.jsonl``, its rotations ``context_<N>.jsonl`` and the first
  layout's ``<id>.jsonl`` (secondary, untimed): the model's context (context.py).
* ``kimi.json`` (the md5 directories mapped back to work directories),
  ``state.json`` / ``metadata.json``, sub-agent ``meta.json``, background
  ``tasks/``, ``user-history/`` (secondary) and ``plans/`` (files.py).
* ``config.toml`` (provider API keys), ``credentials/`` and ``mcp-oauth/`` are
  never collected.

Sample records::

    {"timestamp": 1752652814.907, "message": {"type": "ToolCall", "payload": {"type": "function",
     "id": "Shell:0", "function": {"name": "Shell", "arguments": "{\"command\": \"ls\"}"}, "extras": null}}}
    {"role":"tool","content":"./app/main.py:3:import calc","tool_call_id":"Shell:0"}

References: MoonshotAI/kimi-cli@4a550effdfcb29a25a5d325bf935296cc50cd417 src/kimi_cli/metadata.py:17-79,
src/kimi_cli/session.py:99-334, src/kimi_cli/session_state.py:12-132, src/kimi_cli/soul/context.py:91-340,
src/kimi_cli/soul/message.py:19-61, src/kimi_cli/soul/approval.py:82-101, src/kimi_cli/wire/file.py:18-131,
src/kimi_cli/wire/__init__.py:18-140, src/kimi_cli/wire/types.py:37-660, src/kimi_cli/subagents/store.py:17-130,
src/kimi_cli/subagents/runner.py:395-430, src/kimi_cli/background/models.py:28-90,
src/kimi_cli/ui/shell/prompt.py:806-807,1196-1199,2077-2095, src/kimi_cli/tools/plan/heroes.py:8,
packages/kosong/src/kosong/message.py:60-290, packages/kosong/src/kosong/tooling/__init__.py:98-170,319-325;
research/formats-more-cli-agents.md section 9.
"""

from .context import parse_context
from .files import (
    parse_background_task,
    parse_plan,
    parse_session_state,
    parse_subagent_meta,
    parse_user_history,
    parse_work_dirs,
)
from .wire import parse_wire

PARSERS = (
    ("kimi_cli.wire.v1", parse_wire),
    ("kimi_cli.context.v1", parse_context),
    ("kimi_cli.work_dirs.v1", parse_work_dirs),
    ("kimi_cli.session_state.v1", parse_session_state),
    ("kimi_cli.subagent_meta.v1", parse_subagent_meta),
    ("kimi_cli.background_task.v1", parse_background_task),
    ("kimi_cli.user_history.v1", parse_user_history),
    ("kimi_cli.plan.v1", parse_plan),
)

# kimi.json names each work directory's last session; the wire log and the context hold it.
SESSIONS_NAMED = (("kimi_cli.work_dirs.v1", ("kimi_cli.wire.v1", "kimi_cli.context.v1")),)
