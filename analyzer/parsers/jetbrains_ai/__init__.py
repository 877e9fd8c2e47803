r"""JetBrains AI Assistant (workspace chats, agent task history) and the Junie CLI (~/.junie).

The row rules are those of docs/agents/jetbrains-ai.md. Every record shape is
observed only ([obs]): the IDE plugins and Junie are closed source.

* ``<JetBrains config>/<Product><ver>/workspace/<hash>.xml``, component
  ``ChatSessionStateTemp``: AI Assistant chats, parsed with the standard
  library after refusing any DOCTYPE or ENTITY declaration, bounded in size
  and depth (workspace.py, xml_safe.py); the chat time's unit is not
  confirmed, so it stays raw in the ``session:`` row and the rows are untimed;
* ``<JetBrains config>/<Product><ver>/aia-task-history/**/*.events``: agent
  sessions, base64 JSON lines after an ``AUI_EVENTS_V1`` header
  (task_events.py, blocks.py);
* ``~/.junie/sessions/index.jsonl`` (epoch ms), ``sessions/session-*/events.jsonl``
  (no time of their own: the index's ``createdAt``, ``timestamp_source``
  index), ``history.jsonl`` (secondary) (junie.py). Block events of both
  stores are coalesced by ``stepId`` (blocks.py).

Sample records::

    <SerializedChat><option name="chatModelId" value="agent_claude" /><option name="uid" value="b3c4..." />
      ...<SerializedChatMessage><option name="author" value="User" /><option name="displayContent" value="..." />
    AUI_EVENTS_V1
    eyJ0eXBlIjoiY29tLmludGVsbGlqLm1sLmxsbS5jaGF0LnNoYXJlZC5DaGF0U2Vzc2lvblVzZXJQcm9tcHRFdmVudCIsInByb21wdCI6Ii4uLiJ9
    {"sessionId":"session-260830-101500-k3z9","createdAt":1788084900000,"updatedAt":1788085321000,"taskName":"..."}
    {"kind":"SessionA2uxEvent","event":{"state":"IN_PROGRESS","agentEvent":{"kind":"TerminalBlockUpdatedEvent",
     "stepId":"step-4","command":"./gradlew test","output":"1 test failed","status":"COMPLETED"}}}

References: sfinktah/junie-export@12e9cc24ae README.md and @eaa5838705 extract_aichat.py (workspace discovery,
``extract_chat_sessions``, ``decode_event_records``, ``summarize_block``); Haehnchen/idea-de-espend-ml-llm@14f1bb4bbf
JUNIE_SESSION_ADAPTER.md (index.jsonl, events.jsonl kinds); research/formats-more-desktop-agents.md section 8.
"""

from .junie import parse_junie_events, parse_junie_history, parse_junie_index
from .task_events import parse_task_events
from .workspace import parse_workspace_chats

PARSERS = (
    ("jetbrains_ai.workspace_chats.v1", parse_workspace_chats),
    ("jetbrains_ai.task_events.v1", parse_task_events),
    ("jetbrains_ai.junie_index.v1", parse_junie_index),
    ("jetbrains_ai.junie_events.v1", parse_junie_events),
    ("jetbrains_ai.junie_history.v1", parse_junie_history),
)

# The Junie session index names sessions; their events.jsonl holds them.
SESSIONS_NAMED = (("jetbrains_ai.junie_index.v1", ("jetbrains_ai.junie_events.v1",)),)
