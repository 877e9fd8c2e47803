"""Continue files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

INDEX = {("continue.session_index", ".continue/sessions/sessions.json"):
         b'[{"sessionId":"s1","dateCreated":"1763474530000","workspaceDirectory":"file:///home/alice/w"}]'}
D2 = ".continue/dev_data/0.2.0/"
D1 = ".continue/dev_data/0.1.0/"
STATE = ".config/Code/User/globalStorage/state.vscdb"

TARGETS = [
    FuzzTarget("continue.session.v1", "continue.sessions", ".continue/sessions/s1.json", context=INDEX),
    FuzzTarget("continue.session_index.v1", "continue.session_index", ".continue/sessions/sessions.json"),
    FuzzTarget("continue.dev_data_chat_interaction.v1", "continue.dev_data_chat_interaction",
               D2 + "chatInteraction.jsonl", jsonl=True, context=INDEX),
    FuzzTarget("continue.dev_data_tool_usage.v1", "continue.dev_data_tool_usage", D2 + "toolUsage.jsonl", jsonl=True),
    FuzzTarget("continue.dev_data_tokens_generated.v1", "continue.dev_data_tokens", D2 + "tokensGenerated.jsonl",
               jsonl=True),
    FuzzTarget("continue.dev_data_prompt_events.v1", "continue.dev_data_prompt_events", D2 + "chatFeedback.jsonl",
               jsonl=True, context=INDEX),
    FuzzTarget("continue.dev_data_prompt_events.v1", "continue.dev_data_prompt_events", D2 + "editInteraction.jsonl",
               jsonl=True),
    FuzzTarget("continue.dev_data_v010.v1", "continue.dev_data_v010", D1 + "chatFeedback.jsonl", jsonl=True,
               context=INDEX),
    FuzzTarget("continue.dev_data_v010.v1", "continue.dev_data_v010", D1 + "tokensGenerated.jsonl", jsonl=True),
    FuzzTarget("continue.dev_data_v010.v1", "continue.dev_data_v010", D1 + "quickEdit.jsonl", jsonl=True),
    FuzzTarget("continue.dev_data_v010.v1", "continue.dev_data_flat", ".continue/dev_data/chat.jsonl", jsonl=True),
    FuzzTarget("continue.dev_data_v010.v1", "continue.dev_data_flat", ".continue/dev_data/tokens_generated.jsonl",
               jsonl=True),
    FuzzTarget("continue.cli_input_history.v1", "continue.cli_input_history", ".continue/input_history.json"),
    FuzzTarget("continue.permissions.v1", "continue.cli_permissions", ".continue/permissions.yaml"),
    FuzzTarget("continue.devdata_sqlite.v1", "continue.devdata_sqlite", ".continue/dev_data/devdata.sqlite"),
    FuzzTarget("continue.global_state.v1", "continue.global_state", STATE),
]
