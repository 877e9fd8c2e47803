r"""OpenCode: opencode.db (1.2+), the storage/ JSON tree (up to 1.1.x) and its oldest layout, TUI state, config.

The row rules are those of docs/agents/opencode.md:

* opencode.db (read with its -wal applied): a ``session metadata:`` row per session,
  then its messages in order; each part is a row (text as user or assistant, reasoning
  as thinking, a tool part as a ``tool_use`` and a ``tool_result`` row sharing
  ``callID``, a refusal as ``permission decision:``), ``model:`` rows where the
  answering model is first seen or changes, ``task:`` rows for todos and
  ``permission setting:`` rows for session rulesets and stored approvals;
* storage/ (and the oldest ``project/<dir>/storage/session/`` layout): the same rows
  from one file per session, message and part, except for ids opencode.db holds too
  (the copy the migration left): a migrated session is counted once, a session only
  in the tree (deleted after the migration) is read whole; ``storage/todo`` and
  ``storage/permission`` likewise;
* ~/.local/state/opencode: prompt-history.jsonl (secondary), prompt-stash.jsonl, model.json;
* ~/.config/opencode/opencode.json[c]: ``permission setting:`` rows.

The database walk, the part renderer and the TUI and config readers are shared with
OpenCode's fork Kilo CLI and live in analyzer/formats/opencode_*.py; the storage/ tree
and the database ids it is checked against are OpenCode's own (storage.py, database.py).

Sample records (``part.data`` of a tool part, one prompt-history line)::

    {"type":"tool","callID":"toolu_01Ab...","tool":"bash","state":{"status":"error",
     "input":{"command":"rm -rf build"},"error":"The user rejected permission to use this specific tool call.",
     "time":{"start":1782983650100,"end":1782983650100}}}
    {"input":"The login endpoint times out under load. Find the cause.","parts":[]}

References: anomalyco/opencode@296250f1b7 (v1.2.10, read through UpstageAI/opencode, research
formats-cli-agents.md 4) packages/opencode/src/session/message-v2.ts:76-444,
src/session/session.sql.ts:1-88, migration/20260127222353_familiar_lady_ursula/migration.sql;
UpstageAI/opencode@63e38555c9 packages/opencode/src/session/session.sql.ts (tables and columns);
UpstageAI/opencode@c2e234ec4d packages/opencode/src/permission/next.ts (fromConfig, RejectedError,
CorrectedError, DeniedError texts); anomalyco/opencode@0a8a0ed8bb packages/opencode/src/storage/json-migration.ts
(ids from paths, tree left in place) and src/cli/cmd/tui/component/prompt/stash.tsx;
anomalyco/opencode@00d1fee82d packages/opencode/src/storage/storage.ts (migration 0: the oldest layout
copied unchanged); anomalyco/opencode@097ed81eee packages/opencode/src/cli/cmd/tui/component/prompt/history.tsx.
"""

from .config import parse_config
from .database import parse_database
from .storage import parse_legacy_permission, parse_legacy_storage, parse_legacy_todo, parse_project_storage
from .tui import parse_model_state, parse_prompt_history, parse_prompt_stash

PARSERS = (
    ("opencode.db.v1", parse_database),
    ("opencode.legacy_storage.v1", parse_legacy_storage),
    ("opencode.legacy_todo.v1", parse_legacy_todo),
    ("opencode.legacy_permission.v1", parse_legacy_permission),
    ("opencode.project_storage.v1", parse_project_storage),
    ("opencode.prompt_history.v1", parse_prompt_history),
    ("opencode.prompt_stash.v1", parse_prompt_stash),
    ("opencode.model_state.v1", parse_model_state),
    ("opencode.config.v1", parse_config),
)
