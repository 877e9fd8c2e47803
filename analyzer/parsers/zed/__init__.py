r"""Zed's agent panel: threads in SQLite (zstd JSON), the legacy LMDB store, and the agent settings.

The row rules are those of docs/agents/zed.md.

* ``<data_dir>/threads/threads.db`` (with its -wal), table ``threads``: one row
  per thread, ``data`` the thread's JSON, zstd-compressed (``data_type`` 'zstd')
  or stored as it is ('json'); four JSON generations (none, "0.1.0", "0.2.0",
  "0.3.0"); each thread's session, model, project snapshot (worktree path,
  branch, HEAD commit, remote and the working-tree diff at the thread's start),
  messages, tool calls joined to results by ``ToolUse.id`` = key of the same
  message's ``tool_results``, and token usage; earlier versions of a rewritten
  or deleted thread from the -wal as secondary rows (threads_db.py, thread.py,
  messages.py, blobs.py);
* ``<data_dir>/threads/threads-db.1.mdb/data.mdb``: the legacy LMDB store,
  read with formats/lmdb.py (legacy.py);
* ``<config_dir>/settings.json``: tool permissions, profiles and models
  (settings.py).

No message records a time: every message row carries its thread's
``created_at`` (``timestamp_source`` index) and a locator that orders it.

Sample record (a ``threads`` row; ``data`` shown decompressed)::

    ('3f2a9c1e-...', None, '/home/eli/src/ledger', '0', 'Fix rounding in totals',
     '2026-08-30T12:04:05.123456+00:00', 'zstd', <zstd of {"version":"0.3.0","title":...,
     "messages":[{"User":{"id":"9b8a...","content":[{"Text":"Totals are off by a cent"}]}},
     {"Agent":{"content":[{"ToolUse":{"id":"toolu_01","name":"read_file","input":{...}}}],
     "tool_results":{"toolu_01":{"tool_use_id":"toolu_01","tool_name":"read_file",
     "is_error":false,"content":[{"Text":"..."}],"output":null}}}}]}>,
     '2026-08-30T11:58:00.000001+00:00')

References: zed-industries/zed@0642ec7e49e2d2c06f55db8c5bb2d4eca0f5223b crates/agent/src/db.rs (``DbThread``,
``ThreadsDatabase::new``, ``save_thread_sync``, ``deserialize_thread``, ``delete_thread``, ``SharedThread``);
zed-industries/zed@4410b97021c7c3c6bb81d744c55ddd8866cffa7f crates/agent/src/legacy_thread.rs
(``SerializedThread``, ``SerializedThreadV0_1_0::upgrade``, ``LegacySerializedThread``);
zed-industries/zed crates/agent/src/thread.rs (``Message``, ``AgentMessageContent``, ``ProjectSnapshot``,
``GitState``; index copies); zed-industries/zed@010c9b6fa6d6efbf90a3b8d5ee64cb30297ba275
crates/paths/src/paths.rs (``support_dir``, ``config_dir``, ``contexts_dir``, ``prompts_dir``, ``logs_dir``);
zed-industries/zed crates/util/src/path_list.rs (``PathList::serialize``); zed-industries/zed@07b5ab52ac
docs/src/ai/tool-permissions.md; research/formats-more-desktop-agents.md section 7.
"""

from .legacy import parse_legacy_threads
from .settings import parse_settings
from .threads_db import parse_threads_db

PARSERS = (
    ("zed.threads_db.v1", parse_threads_db),
    ("zed.legacy_threads.v1", parse_legacy_threads),
    ("zed.settings.v1", parse_settings),
)
