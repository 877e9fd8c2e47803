"""Trae (ByteDance's VS Code fork, international ``Trae`` and China ``Trae CN``): the agent's per-workspace state.

The row rules are those of docs/agents/trae.md. Trae is closed source; every
record shape here is [obs] (community parsers and usage trackers) and only
the fields they agree on are read:

* ``User/workspaceStorage/<id>/state.vscdb`` (and its ``.backup``, and the
  earlier versions its ``-wal`` still holds, read as a secondary store), ItemTable key
  ``memento/icube-ai-agent-storage``: the session list with titles, times,
  models and (not on every workspace) the messages (storage.py);
* the same databases' ``icube-ai-agent-storage-input-history``: every prompt
  typed in the workspace, no time, read as a secondary store (history.py).

The project is the workspace folder's ``workspace.json``
(formats/workspace_storage.py). ``ModularData/ai-agent/database.db``, where
the full conversations are believed to live, is encrypted (SQLCipher) and
catalogued as an opaque store: collected and named, never parsed.
``long-text/`` and ``paste-files/`` are collected as documentary stores (what
their files belong to is not established).

Sample record (the ItemTable value of ``memento/icube-ai-agent-storage``)::

    {"currentSessionId":"sess-20260830-01","list":[{"sessionId":"sess-20260830-01","title":"Add dark mode toggle",
     "createdAt":"2026-08-30T03:12:44.000Z","messages":[{"id":"m1","role":"user","content":"Add a dark mode
     toggle to the navbar"},{"id":"m2","role":"assistant","content":"Added ThemeToggle.tsx ..."}]}]}

References: research/formats-more-desktop-agents.md section 11 (community Trae adapter and Trae2OpenCode
plan, index copies with no resolvable repository); a Go session parser (index copy, repository unresolved:
``traeSession``/``traeMessage`` with ``createdAt``/``updatedAt``/``timestamp`` as RFC 3339 text or an epoch
number, ``model``, ``agentTaskContent``); a usage tracker's ``TraeInputHistoryItem {inputText}`` (index copy);
DangDangMao01/Breakout
incubator/graduated/Kiro-KB-Plugin/docs/kiro-knowledge-base/docs/feature-request-trae-support.md (database.db
with -wal and -shm, ~23 MB); research/formats-vscode-family.md 1.3-1.4 (state.vscdb, workspace.json).
"""

from .history import parse_input_history
from .storage import parse_agent_storage, parse_wal_history

PARSERS = (
    ("trae.agent_storage.v1", parse_agent_storage),
    ("trae.wal_history.v1", parse_wal_history),
    ("trae.input_history.v1", parse_input_history),
)
