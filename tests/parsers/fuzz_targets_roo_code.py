"""Roo Code files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

GLOBAL = ".config/Code/User/globalStorage/"
TASK = GLOBAL + "rooveterinaryinc.roo-cline/tasks/019c4a2e-7b40-7c31-9d2a-5e8f1b3c6a70/"
HISTORY = {("roo-code.history_items", TASK + "history_item.json"):
           b'{"id":"019c4a2e-7b40-7c31-9d2a-5e8f1b3c6a70","number":1,"ts":1770737415000,"task":"x","workspace":"/w"}'}

TARGETS = [
    FuzzTarget("roo_code.task.v1", "roo-code.tasks", TASK + "api_conversation_history.json", context=HISTORY),
    FuzzTarget("roo_code.task.v1", "roo-code.tasks", TASK + "ui_messages.json"),
    FuzzTarget("roo_code.task.v1", "roo-code.tasks", TASK + "claude_messages.json"),
    FuzzTarget("roo_code.task.v1", "roo-code.tasks", TASK + "task_metadata.json"),
    FuzzTarget("roo_code.history_item.v1", "roo-code.history_items", TASK + "history_item.json"),
    FuzzTarget("roo_code.task_index.v1", "roo-code.task_index", GLOBAL + "rooveterinaryinc.roo-cline/tasks/_index.json",
               context=HISTORY),
    FuzzTarget("roo_code.global_state.v1", "roo-code.global_state", GLOBAL + "state.vscdb"),
    FuzzTarget("roo_code.user_settings.v1", "roo-code.user_settings", ".config/Code/User/settings.json"),
    FuzzTarget("roo_code.mcp_settings.v1", "roo-code.mcp_settings",
               GLOBAL + "rooveterinaryinc.roo-cline/settings/mcp_settings.json"),
]
