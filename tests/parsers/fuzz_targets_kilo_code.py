"""Kilo Code (legacy extension) files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

GLOBAL = ".config/Code/User/globalStorage/"
TASK = GLOBAL + "kilocode.kilo-code/tasks/0197b2c0-4444-7ccc-8ddd-000000000004/"
API = (b'[{"role":"user","content":[{"type":"text","text":"<task>\\nx\\n</task>"}],"ts":1788400000000},'
       b'{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}}]}]')
BESIDE = {("kilo-code.tasks", TASK + "api_conversation_history.json"): API}

TARGETS = [
    FuzzTarget("kilo_code.task.v1", "kilo-code.tasks", TASK + "api_conversation_history.json"),
    FuzzTarget("kilo_code.task.v1", "kilo-code.tasks", TASK + "ui_messages.json", context=BESIDE),
    FuzzTarget("kilo_code.task.v1", "kilo-code.tasks", TASK + "task_metadata.json"),
    FuzzTarget("kilo_code.global_state.v1", "kilo-code.global_state", GLOBAL + "state.vscdb"),
    FuzzTarget("kilo_code.task_history.v1", "kilo-code.task_history_file",
               GLOBAL + "kilocode.kilo-code/task_history.json"),
    FuzzTarget("kilo_code.user_settings.v1", "kilo-code.user_settings", ".config/Code/User/settings.json"),
    FuzzTarget("kilo_code.mcp_settings.v1", "kilo-code.mcp_settings",
               GLOBAL + "kilocode.kilo-code/settings/mcp_settings.json"),
]
