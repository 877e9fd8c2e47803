r"""Windsurf / Devin Desktop (Codeium, now Cognition): Cascade summaries, MCP servers; the trajectories are opaque.

The row rules are those of docs/agents/windsurf.md. Windsurf is a closed-source
Code-OSS fork whose agent, Cascade, runs in a Go language server; every record
shape here is third-party observation ([obs]).

File families:

* ``~/.codeium/windsurf/cascade/<uuid>.pb`` and ``implicit/**/*.pb``: one
  Cascade conversation per file, encrypted or obfuscated at rest (byte entropy
  7.8-8.0, per-UUID key held by the language server). Catalogued as opaque: the
  run lists each file (size, mtime, SHA-256) and never parses it;
* ``<appdata>/Windsurf/User/globalStorage/state.vscdb`` (and its ``.backup``,
  secondary): the ``codeium.windsurf`` ItemTable row keeps the unencrypted
  trajectory summaries (title, step count, Timestamps, workspace URI, model id)
  per workspace window; each gives a ``session:`` row joined to the opaque
  file by its Cascade id (state.py); the project is the summary's ``file://``
  URI, else the window's ``workspace.json`` (workspaces.py);
* ``~/.codeium/windsurf/mcp_config.json``: one ``permission setting:`` row per
  MCP server, env and header values never read (mcp.py).

Memories, global rules, user_settings.pb, IndexedDB, logs and editor settings
are documentary (see the page for why).

Sample record (``codeium.windsurf`` value, abridged)::

    {"windsurf.state.cachedTrajectorySummaries:9b2f4c0e...": "CpUBCiQ0ZDNjMmIxYS0w...",
     "windsurf.state.cachedActiveTrajectory:9b2f4c0e...": "CiQ0ZDNj..."}

References: research/formats-more-desktop-agents.md section 3 (Exafunction/codeium#127, #137; codeburn#383;
tokscale#894 and vshulcz/deja-vu#308 on Devin Desktop; Pilan-AI/mnemo#10 on the summary cache);
karstenheld3/IPPS _Sessions/_2026-01-26_AutoModelSwitcher/NOTES.md (cascade/*.pb, user_settings.pb, MODEL_*
ids); a Windsurf "Trajectory Extractor" and a Go indexer ``indexWindsurfTrajectoryCache`` (index copies,
repository unresolved: the ``codeium.windsurf`` key, ``windsurf.state.cachedTrajectorySummaries:<workspace
id>``, entry field 1 id, field 2 summary); yigitkonur/cli-continues@0a5088e7 src/parsers/antigravity.ts
(summary field numbers, shared with Antigravity); voideditor/void@b3166e7 src/vs/base/parts/storage/node/
storage.ts:188-194, 329-331 (ItemTable, the .backup copy).
"""

from .mcp import parse_mcp_config
from .state import parse_state_vscdb

PARSERS = (
    ("windsurf.state_vscdb.v1", parse_state_vscdb),
    ("windsurf.mcp_config.v1", parse_mcp_config),
)
