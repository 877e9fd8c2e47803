"""Cline files for the parser property tests (one target per parser id and per file name it branches on)."""

import json

from tests.analyzer.fuzz import FuzzTarget

STORAGE = ".config/Code/User/globalStorage/"
TASK = STORAGE + "saoudrizwan.claude-dev/tasks/1768385100000/"
SESSION = ".cline/data/sessions/1782979200000_k3v9q/"
HISTORY = {("cline.task_history", STORAGE + "saoudrizwan.claude-dev/state/taskHistory.json"):
           json.dumps([{"id": "1768385100000", "ts": 1768385113000, "task": "t",
                        "cwdOnTaskInitialization": "/home/alice/src"}]).encode()}
API = {("cline.tasks", TASK + "api_conversation_history.json"):
       b'[{"role":"assistant","content":[{"type":"text","text":"x"}],"modelInfo":{"modelId":"m"}}]'}
UI = {("cline.tasks", TASK + "ui_messages.json"): b'[{"ts":1,"type":"ask","ask":"tool","text":"{}"}]'}
MANIFEST = {("cline.sdk_manifests", SESSION + "1782979200000_k3v9q.json"):
            b'{"session_id":"1782979200000_k3v9q","started_at":"2026-07-02T08:00:00.000Z","cwd":"/home/alice"}'}

TARGETS = [
    FuzzTarget("cline.task.v1", "cline.tasks", TASK + "api_conversation_history.json", context={**HISTORY, **UI}),
    FuzzTarget("cline.task.v1", "cline.tasks", TASK + "ui_messages.json", context={**HISTORY, **API}),
    FuzzTarget("cline.task.v1", "cline.tasks", TASK + "ui_messages.json", context=HISTORY),
    FuzzTarget("cline.task.v1", "cline.tasks", TASK + "task_metadata.json", context=HISTORY),
    FuzzTarget("cline.task.v1", "cline.data_tasks", ".cline/data/tasks/1782800000000/api_conversation_history.json"),
    FuzzTarget("cline.task_history.v1", "cline.task_history",
               STORAGE + "saoudrizwan.claude-dev/state/taskHistory.json"),
    FuzzTarget("cline.global_state.v1", "cline.global_state", STORAGE + "state.vscdb", context=HISTORY),
    FuzzTarget("cline.global_state_json.v1", "cline.data_global_state", ".cline/data/globalState.json"),
    FuzzTarget("cline.mcp_settings.v1", "cline.mcp_settings",
               STORAGE + "saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
    FuzzTarget("cline.sdk_messages.v1", "cline.sdk_messages", SESSION + "1782979200000_k3v9q.messages.json",
               context=MANIFEST),
    FuzzTarget("cline.sdk_manifest.v1", "cline.sdk_manifests", SESSION + "1782979200000_k3v9q.json"),
    FuzzTarget("cline.sessions_db.v1", "cline.sessions_db", ".cline/data/db/sessions.db", context=MANIFEST),
]
