"""gemini-cli: Google's Gemini CLI, everything it keeps in ~/.gemini (and the machine-wide settings).

What is read, per catalog store (details in this package's modules and docs/agents/gemini-cli.md):

* ``chats``, ``subagent_chats``, ``unreadable_chats``: the JSONL event log
  ``tmp/<id>/chats/session-<UTC minute>-<id8>.jsonl`` replayed as a mutation
  log (``chats``, ``replay``, ``messages``);
* ``chats_legacy``: the single-object ``session-*.json`` of 2025-08 to 2026-04;
* ``prompt_log`` (secondary), ``shell_history`` (secondary), ``saved_chats``
  (secondary), ``edit_checkpoints``, ``tracker`` (``history``);
* ``projects_registry``, ``project_roots``: the project map, also the join
  that gives every per-project row its project_path (``projects``);
* ``user_settings``, ``system_settings``, ``policies``, ``system_policies``,
  ``trusted_folders``: standing permissions (``settings``).

A chat line, for the record:

    {"id":"c1000000-0000-4000-8000-000000000001","timestamp":"2026-07-02T09:14:05.310Z","type":"user",
     "content":[{"text":"The login endpoint times out under load. Find the cause."}]}

References: google-gemini/gemini-cli@5411f113ca packages/core/src/services/chatRecordingService.ts:76-345,
packages/core/src/services/chatRecordingTypes.ts:12-140, packages/core/src/core/logger.ts:15-345,
packages/core/src/config/projectRegistry.ts:16-421, packages/core/src/config/storage.ts:54-360
(research/formats-cli-agents.md section 3).
"""

from .chats import (
    parse_chat_jsonl,
    parse_chat_legacy_json,
)
from .history import (
    parse_edit_checkpoint,
    parse_logs_json,
    parse_saved_chat,
    parse_shell_history,
    parse_tracker,
)
from .projects import (
    parse_project_root,
    parse_projects_registry,
)
from .settings import (
    parse_policy,
    parse_settings,
    parse_trusted_folders,
)

PARSERS = (
    ("gemini_cli.chat_jsonl.v1", parse_chat_jsonl),
    ("gemini_cli.chat_legacy_json.v1", parse_chat_legacy_json),
    ("gemini_cli.logs_json.v1", parse_logs_json),
    ("gemini_cli.shell_history.v1", parse_shell_history),
    ("gemini_cli.saved_chat.v1", parse_saved_chat),
    ("gemini_cli.edit_checkpoint.v1", parse_edit_checkpoint),
    ("gemini_cli.tracker.v1", parse_tracker),
    ("gemini_cli.projects_registry.v1", parse_projects_registry),
    ("gemini_cli.project_root.v1", parse_project_root),
    ("gemini_cli.settings.v1", parse_settings),
    ("gemini_cli.policy.v1", parse_policy),
    ("gemini_cli.trusted_folders.v1", parse_trusted_folders),
)

# logs.json names each prompt's session (sessionId); the chat recordings hold them.
SESSIONS_NAMED = (("gemini_cli.logs_json.v1", ("gemini_cli.chat_jsonl.v1", "gemini_cli.chat_legacy_json.v1")),)
