r"""Pi (pi-mono coding agent): session files on every branch, settings, project trust, context-mode events.

* ``sessions/--<cwd>--/<time>_<uuid>.jsonl`` (also relocated session dirs and
  the trash): a header (``type: session``; ``version`` absent in v1, 3 now;
  id, cwd, parentSession) then entries. Messages give ``user``,
  ``assistant`` (one row per text block), ``thinking`` and ``tool_use`` rows
  (``toolCall`` blocks, id = the call's id) and ``tool_result`` rows joined by
  ``toolCallId``; a user's ``!`` shell command (``bashExecution``) is a
  tool_use and its tool_result; ``model_change`` and a reply's model give
  ``model:`` rows; thinking-level changes, compactions, branch summaries,
  custom entries, labels and session names are ``system`` rows. Every entry
  is a row whatever branch of the id/parentId tree it is on; ``branch:`` rows
  name the runs of lines that are not on the path to the last entry.
* ``settings.json``: ``permission setting:`` rows for defaultProjectTrust and
  defaultTools, ``model:`` for defaultModel, ``setting:`` for the rest.
* ``trust.json``: saved project-trust decisions as ``permission setting:`` rows.
* the trash's ``.trashinfo`` of a deleted session: a ``session deleted:`` row.
* ``~/.pi/context-mode/sessions/*.db`` (third-party extension): hook events,
  session meta, resume snapshots and tool-call counts as secondary rows.

Sample record::

    {"type":"message","id":"e5f6a7b8","parentId":"d4e5f6a7","timestamp":"2026-07-02T09:14:09.400Z",
     "message":{"role":"toolResult","toolCallId":"toolu_01AbC","toolName":"bash",
                "content":[{"type":"text","text":"src/db/pool.py:14:    pool_timeout=2,"}],"isError":false}}

References: badlogic/pi-mono@83378aad7e packages/coding-agent/src/core/session-manager.ts:27-149,199-274,
421-423,696-716,724-810, packages/coding-agent/docs/session.md:5-317, packages/ai/src/types.ts:137-216;
badlogic/pi-mono@02c721866b packages/coding-agent/docs/settings.md; mksglu/context-mode@002f8cf src/session/db.ts
(session_events, session_meta, session_resume, tool_calls).
"""

from .context_mode import parse_context_mode_db
from .session import parse_session
from .settings import parse_settings, parse_trust
from .trash import parse_trash_info

PARSERS = (
    ("pi.session.v1", parse_session),
    ("pi.settings.v1", parse_settings),
    ("pi.trust.v1", parse_trust),
    ("pi.context_mode_db.v1", parse_context_mode_db),
    ("pi.trash_info.v1", parse_trash_info),
)
