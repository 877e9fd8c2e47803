"""JetBrains AI Assistant and Junie files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

CONFIG = ".config/JetBrains/IntelliJIdea2026.1"
SESSION = ".junie/sessions/session-260830-101500-k3z9"
INDEX = {("jetbrains-ai.junie_session_index", ".junie/sessions/index.jsonl"):
         b'{"sessionId":"session-260830-101500-k3z9","createdAt":1788084900000}\n'}

TARGETS = [
    FuzzTarget("jetbrains_ai.workspace_chats.v1", "jetbrains-ai.workspace_chats", f"{CONFIG}/workspace/abc.xml"),
    FuzzTarget("jetbrains_ai.task_events.v1", "jetbrains-ai.task_history",
               f"{CONFIG}/aia-task-history/b3c4d5e6-0000-4000-8000-00000000a1b2.events"),
    FuzzTarget("jetbrains_ai.junie_index.v1", "jetbrains-ai.junie_session_index", ".junie/sessions/index.jsonl",
               jsonl=True),
    # events.jsonl is not jsonl=True: a block's earlier snapshots (coalesced by stepId) and repeated
    # statuses, environment variables and opaque state give no row of their own by design
    FuzzTarget("jetbrains_ai.junie_events.v1", "jetbrains-ai.junie_events", f"{SESSION}/events.jsonl",
               context=INDEX),
    FuzzTarget("jetbrains_ai.junie_history.v1", "jetbrains-ai.junie_history", ".junie/history.jsonl", jsonl=True),
]
