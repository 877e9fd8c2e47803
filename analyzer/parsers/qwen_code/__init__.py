"""qwen-code: Alibaba's Qwen Code terminal agent (a Gemini CLI fork), what it keeps in ~/.qwen.

The row rules are those of docs/agents/qwen-code.md. File families, per catalog store:

* ``chats``, ``archived_chats``, ``subagent_chats``: one ``ChatRecord`` per
  JSONL line, ``projects/<sanitized cwd>/chats/<sessionId>.jsonl`` (moved to
  ``chats/archive/`` when archived) and
  ``projects/<sanitized cwd>/subagents/<sessionId>/agent-<agentId>.jsonl``;
  Gemini ``Content`` messages walked by ``formats/gemini_content.py`` (shared
  with Gemini CLI), system records by subtype (``chat``, ``records``);
* ``subagent_meta``, ``todos``, ``prompt_log`` (secondary, Gemini CLI's
  ``logs.json`` via ``formats/gemini_logs.py``), ``shell_history``
  (secondary), ``user_settings``, ``system_settings``, ``trusted_folders``
  (``formats/gemini_settings.py`` with Qwen Code's keys), ``usage_history``
  (secondary: per-session totals written before a transcript is deleted)
  (``side_files``).

A transcript line, for the record:

    {"uuid":"a1000000-0000-4000-8000-000000000004","parentUuid":"a1000000-0000-4000-8000-000000000003",
     "sessionId":"3b8f6a4e-51c2-4d7e-9f00-2a1b3c4d5e6f","timestamp":"2026-08-02T06:40:21.611Z","type":"tool_result",
     "cwd":"/home/mei/proj/etl","version":"0.24.4","gitBranch":"main","provenance":"tool_result",
     "message":{"role":"user","parts":[{"functionResponse":{"id":"call_5d2","name":"read_file",
     "response":{"output":"schedule: 0 2 * * 2-7"}}}]},"toolCallResult":{"callId":"call_5d2","status":"success"}}

References: npm @qwen-code/qwen-code@0.24.4 (the published bundle, unminified esbuild chunks):
chunks/chunk-DPEB6S2R.js (packages/core/src/services/chatRecordingService.ts, sessionService.ts
``getChatsDir``/``getSessionFilePath``/``cleanupRemovedSessionFiles``, agents/agent-transcript.ts,
core/coreToolScheduler.ts), chunks/chunk-EL2S73QY.js (config/storage.ts: ``getGlobalQwenDir``,
``getRuntimeBaseDir``, ``getProjectDir``, ``getProjectTempDir``), chunks/chunk-JSVXABP6.js
(``sanitizeCwd``, ``getProjectHash``), chunks/chunk-CK5HUN74.js (core/logger.ts), chunks/todoWrite-QTSCFAI3.js,
chunks/chunk-2VS5EEXU.js (telemetry ``ToolCallEvent``), chunks/chunk-D2H63VR2.js (settings schema);
QwenLM/qwen-code@015346f1d5d7312fddaf84a7ef1f83c7d217d389 packages/core/src/services/chatRecordingService.ts
(the typed ``ChatRecord`` interface); research/formats-more-cli-agents.md section 5.
"""

from .chat import parse_chat
from .side_files import (
    parse_logs_json,
    parse_settings,
    parse_shell_history,
    parse_subagent_meta,
    parse_todos,
    parse_trusted_folders,
    parse_usage,
)

PARSERS = (
    ("qwen_code.chat.v1", parse_chat),
    ("qwen_code.subagent_meta.v1", parse_subagent_meta),
    ("qwen_code.todos.v1", parse_todos),
    ("qwen_code.logs_json.v1", parse_logs_json),
    ("qwen_code.shell_history.v1", parse_shell_history),
    ("qwen_code.settings.v1", parse_settings),
    ("qwen_code.trusted_folders.v1", parse_trusted_folders),
    ("qwen_code.usage.v1", parse_usage),
)

# logs.json and usage_record.jsonl name sessions (sessionId); the transcripts hold them.
SESSIONS_NAMED = tuple((naming, ("qwen_code.chat.v1",)) for naming in ("qwen_code.logs_json.v1", "qwen_code.usage.v1"))
