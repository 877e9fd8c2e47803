r"""Augment Code's VS Code extension (``augment.vscode-augment``): per-workspace LevelDB conversations and memories.

The row rules are those of docs/agents/augment.md. The extension is closed
source; the store layout and the exchange fields are [obs] (community
extractors and recovery guides), the tool nodes inferred from Augment's own
CLI (Auggie) bundle, which speaks the same chat API. Files, under every VS
Code host's ``User/workspaceStorage/<id>/Augment.vscode-augment/``:

* ``augment-kv-store/`` is a LevelDB (``*.log`` write-ahead logs, ``*.ldb``
  tables): keys ``exchange:<conversation>:<exchange>`` hold one exchange each
  as JSON; ``metadata:``, ``tooluse:`` and other keys are shown as excerpts.
  Read with the pure-Python reader analyzer/formats/leveldb.py; each file's
  versions are weighed against the whole directory (versions.py): a key's
  newest version gives primary rows (``kv_store``), older versions and
  deleted keys still on disk the rows of a secondary store read from the same
  files (``kv_store_history``) (kv_store.py, exchange.py);
* ``Augment-Memories``: the agent's memories, one row (memories.py);
* the folder's ``workspace.json``: a ``project:`` row where the folder holds
  Augment data, nothing elsewhere (project.py).

``augment-user-assets/`` (agent edits, checkpoint documents, task storage,
command execution history) and ``augment-global-state/`` are collected as
documentary stores: their shapes are not established. The project is the
folder's ``workspace.json`` (formats/workspace_storage.py).

Sample record (the LevelDB value of key ``exchange:c0nv-0001:ex-0003``)::

    {"uuid":"ex-0003","conversationId":"c0nv-0001","request_message":"Why is the cache never invalidated?",
     "response_text":"Because invalidate() is only called on PUT; DELETE skips it.","request_nodes":[],
     "response_nodes":[{"id":1,"type":5,"tool_use":{"tool_use_id":"toolu_1","tool_name":"codebase-retrieval",
     "input_json":"{\"information_request\":\"invalidate cache\"}"}}],"model_id":"claude-sonnet-4-5",
     "status":"success","timestamp":"2026-08-28T16:40:12.511Z"}

References: research/formats-more-desktop-agents.md section 12; Vaeshkar/create-ai-chat-context-experimental
src/readers/AugmentLevelDBReader.ts (key prefixes exchange:, history:, history-metadata:, tooluse:, metadata:)
and AUGMENT-EXTRACTION-PLAN.md @067cc38a (exchange fields uuid, conversationId, request_message,
response_text, request_nodes, response_nodes, model_id, timestamp); an "Augment Conversation History
Extraction" guide (index copy, repository unresolved: metadata:/tooluse: keys, status values, Snappy blocks);
npm @augmentcode/auggie 0.36.0 augment.mjs (response node types 5 tool_use and 8 thinking, request node type 1
tool_result_node); google/leveldb doc/log_format.md and doc/table_format.md.
"""

from .kv_store import parse_kv_history, parse_kv_store
from .memories import parse_memories
from .project import parse_workspace_map

PARSERS = (
    ("augment.kv_store.v1", parse_kv_store),
    ("augment.kv_history.v1", parse_kv_history),
    ("augment.memories.v1", parse_memories),
    ("augment.workspace_map.v1", parse_workspace_map),
)
