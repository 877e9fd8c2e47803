"""mistral-vibe: Mistral AI's Vibe terminal agent, what it keeps in ~/.vibe.

The row rules are those of docs/agents/mistral-vibe.md. File families, per catalog store:

* ``sessions``, ``subagent_sessions``: ``logs/session/<prefix>_<UTC>_<id8>/messages.jsonl``
  (sub-agents of the task tool in ``<session folder>/agents/<agent>_<UTC>_<id8>/``):
  one ``LLMMessage`` per line, no times; calls joined to results by
  ``tool_calls[].id`` = ``tool_call_id`` (``messages``), the session's id,
  project, branch and time from the folder's ``meta.json`` (``session``);
* ``session_meta``, ``subagent_meta``: ``meta.json``, and ``legacy_sessions``:
  the pre-2.0 single file ``{metadata, messages}`` (``meta``);
* ``prompt_history`` (secondary, ``vibehistory``), ``config`` (``config.toml``),
  ``trusted_folders`` (``trusted_folders.toml``) (``side_files``).

A message line, for the record:

    {"role":"tool","content":"returncode: 1","name":"bash","tool_call_id":"cX94","injected":false}

References: mistralai/mistral-vibe@ac8f1a09fdfbadb6d4508a555ba6607fd05eb0dc (2.18.4; read in the PyPI wheel
mistral-vibe 2.18.4): vibe/core/paths/_vibe_home.py:19-39, vibe/core/session/session_logger.py,
vibe/core/session/session_loader.py, vibe/core/session/saved_sessions.py, vibe/core/session/session_migration.py,
vibe/core/types.py, vibe/core/agent_loop.py, vibe/core/agent_loop_hooks.py, vibe/core/utils/tags.py,
vibe/core/tools/base.py, vibe/core/tools/builtins/task.py, vibe/core/config/_settings.py,
vibe/cli/history_manager.py, vibe/core/trusted_folders.py; research/formats-more-cli-agents.md section 14.
"""

from .messages import parse_messages
from .meta import parse_legacy_session, parse_meta
from .side_files import parse_config, parse_history, parse_trusted_folders

PARSERS = (
    ("mistral_vibe.messages.v1", parse_messages),
    ("mistral_vibe.meta.v1", parse_meta),
    ("mistral_vibe.legacy_session.v1", parse_legacy_session),
    ("mistral_vibe.history.v1", parse_history),
    ("mistral_vibe.config.v1", parse_config),
    ("mistral_vibe.trusted_folders.v1", parse_trusted_folders),
)
