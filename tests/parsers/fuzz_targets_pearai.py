"""PearAI files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TASK = ".config/PearAI/User/globalStorage/pearai.pearai-roo-cline/tasks/1759400100000/"
LOG = ".config/PearAI/logs/20251002T101500/window1/exthost/output_logging_20251002T101502/2-PearAI.log"
INDEX = {("pearai.session_index", ".pearai/sessions/sessions.json"):
         b'[{"sessionId":"s1","dateCreated":"1759400000000"}]'}

TARGETS = [
    FuzzTarget("pearai.chat_session.v1", "pearai.chat_sessions", ".pearai/sessions/s1.json", context=INDEX),
    FuzzTarget("pearai.session_index.v1", "pearai.session_index", ".pearai/sessions/sessions.json"),
    FuzzTarget("pearai.agent_task.v1", "pearai.agent_tasks", TASK + "api_conversation_history.json"),
    FuzzTarget("pearai.agent_task.v1", "pearai.agent_tasks", TASK + "ui_messages.json"),
    FuzzTarget("pearai.output_log.v1", "pearai.output_logs", LOG),
    FuzzTarget("pearai.dev_data_chat.v1", "pearai.dev_data_chat", ".pearai/dev_data/chat.jsonl", jsonl=True,
               context=INDEX),
    FuzzTarget("pearai.tokens_generated.v1", "pearai.tokens_generated", ".pearai/dev_data/tokens_generated.jsonl",
               jsonl=True),
    FuzzTarget("pearai.global_state.v1", "pearai.global_state", ".config/PearAI/User/globalStorage/state.vscdb"),
]
