r"""Amp (Sourcegraph; npm @sourcegraph/amp, later @ampcode/cli): the local-thread generation, and what the other leaves.

The row rules are those of docs/agents/amp.md.

* ``~/.local/share/amp/threads/T-<uuid>.json`` (builds up to early 2026): one
  JSON document per thread, messages with text, thinking, tool_use and
  tool_result blocks joined by id, usage and model per reply (thread.py).
  Builds from 2026-05 keep threads on Sourcegraph's servers and write no
  thread file: the catalog's ``absences`` says so, and the summary names it.
* ``history.jsonl`` / ``history.json`` (secondary), ``session.json`` and
  ``~/.amp/file-changes/<thread>/<toolUseID>.<id>`` (side.py): written by both
  generations.
* ``~/.config/amp/settings.json`` and ``managed-settings.json`` (settings.py).

``secrets.json`` and ``~/.amp/oauth/`` are never collected.

Sample records::

    {"role":"assistant","messageId":1,"content":[{"type":"tool_use","id":"toolu_9f2","name":"Read",
     "input":{"path":"/Users/ana/src/webapp/tests/login.spec.ts"}}],"usage":{"model":"claude-sonnet-4-5",...}}
    {"role":"user","messageId":2,"content":[{"type":"tool_result","toolUseID":"toolu_9f2",
     "run":{"status":"done","result":{"content":[...]}}}]}
    {"text":"now run the whole suite","cwd":"/Users/ana/src/webapp"}

References: npm:@sourcegraph/amp@0.0.1767830505-ga62310 dist/main.js (anchors ``threads-development``,
``case"info:manual-bash-invocation"``, ``status:"rejected-by-user"``, ``function Du(J){return Math.max(J.created``,
``getRootURI(){``, ``function s78(J)``, ``function e78(J)``, ``"amp.permissions"``);
npm:@sourcegraph/amp@0.0.1777897475-g2324e1 dist/main.js (no ``threads-development`` string at all; anchors
``_n5=Xe.join(Pn5,"history.jsonl"),Tn5=1000``, ``$o5="secrets.json"``, ``lastExecuteThreadId``,
``function Zf0(A)``, ``settings.jsonc``, ``new Ql0(jj(Y,{usesThreadActors:!1}),{maxThreads:200})``);
research/formats-more-cli-agents.md section 2.
"""

from .settings import parse_settings
from .side import parse_file_change, parse_history, parse_history_legacy, parse_session_state
from .thread import parse_thread

PARSERS = (
    ("amp.thread.v1", parse_thread),
    ("amp.history.v1", parse_history),
    ("amp.history_legacy.v1", parse_history_legacy),
    ("amp.session_state.v1", parse_session_state),
    ("amp.file_change.v1", parse_file_change),
    ("amp.settings.v1", parse_settings),
)

# No SESSIONS_NAMED: session.json and the file-change folders name threads, but a server-side build never writes
# the thread file they name, so every one of its threads would read as a deleted transcript (docs/agents/amp.md).
