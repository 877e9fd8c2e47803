r"""Google Antigravity (the IDE and the ``agy`` CLI): step transcripts, summaries, artifacts; gen-1/2 opaque.

The row rules are those of docs/agents/antigravity.md. Antigravity is closed
source; every shape here is third-party observation ([obs]). Roots
``~/.gemini/antigravity`` (IDE), ``~/.gemini/antigravity-cli`` (agy),
``~/.gemini/antigravity-ide`` and the editor's ``<appdata>/Antigravity``.

Format generations and what reads them:

* gen 0 ``code_tracker/**/*.json(l)``: chat lines behind a binary prefix
  (code_tracker.py); current installs keep file snapshots there (no rows);
* gen 1 ``conversations/<uuid>.pb``: encrypted (entropy 8.0): opaque, listed;
* gen 2 ``conversations/<uuid>.db``: SQLite of protobuf rows with no public
  schema: opaque, listed;
* gen 3 ``brain/<uuid>/.system_generated/logs/transcript.jsonl`` (and the
  secondary ``transcript_full.jsonl``): one line per step; a tool call and its
  result are one step record (transcript.py);
* brain artifacts ``task.md``, ``implementation_plan.md``, ``walkthrough.md``
  and their ``.resolved*`` versions (artifacts.py); agy's ``history.jsonl``
  (history.py); ``conversation_summaries.db`` (summaries_db.py);
* the editor's state.vscdb ``antigravityUnifiedStateSync.trajectorySummaries``
  (state.py): base64 protobuf summaries, read with formats/protobuf_wire.py.

The ``<uuid>`` is the same in conversations/, brain/, the summaries and
``agy --conversation``: every session row names the files of its id.

Sample record (transcript.jsonl)::

    {"step_index":3,"source":"MODEL","type":"VIEW_FILE","status":"DONE","created_at":"2026-08-20T08:00:09Z",
     "content":"TODO: a","tool_calls":[{"name":"view_file","id":"call-7f1","arguments":"{\"path\":\"notes.txt\"}"}]}

References: Dicklesworthstone/franken_agent_detection@034906e8 src/connectors/antigravity.rs (transcript
record, USER_REQUEST / USER_SETTINGS_CHANGE / ADDITIONAL_METADATA blocks, tool_calls variants,
model_from_settings); yigitkonur/cli-continues@0a5088e7 src/parsers/antigravity.ts (SUMMARY_STATE_KEYS,
parseStateSummaryMap, extractStateSummaryFromProto, BRAIN_ARTIFACT_BASE_FILES, parseLegacyLine); xiufengsun/
TokenTracker#183 (gen-1 entropy, gen-2 .db); kenn-io/agentsview#529 (agy directory listing); tenequm/pond#201
(conversation_summaries.db, agy 1.1.24); research/formats-more-desktop-agents.md section 4.
"""

from .artifacts import parse_artifact
from .code_tracker import parse_code_tracker
from .history import parse_history
from .state import parse_state_vscdb
from .summaries_db import parse_summaries_db
from .transcript import parse_transcript

PARSERS = (
    ("antigravity.transcript.v1", parse_transcript),
    ("antigravity.artifact.v1", parse_artifact),
    ("antigravity.history.v1", parse_history),
    ("antigravity.code_tracker.v1", parse_code_tracker),
    ("antigravity.summaries_db.v1", parse_summaries_db),
    ("antigravity.state_vscdb.v1", parse_state_vscdb),
)

# agy's prompt history names conversations; their transcripts hold them.
SESSIONS_NAMED = (("antigravity.history.v1", ("antigravity.transcript.v1",)),)
