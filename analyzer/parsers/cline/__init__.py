r"""Cline (saoudrizwan.claude-dev; the CLI and JetBrains hosts; the 4.x SDK): every storage generation.

The row rules are those of docs/agents/cline.md:

* task folders ``tasks/<taskId>/`` in the editor's globalStorage (VS Code stable,
  Insiders, VSCodium, Cursor, remote servers: each its own storage) or ``~/.cline/data``
  (``tasks``): api_conversation_history.json is the transcript (XML tool tags before 3.35,
  native ``tool_use`` / ``tool_result`` with ids after; thinking blocks; ``modelInfo`` ->
  ``model:`` rows; denial and approval texts -> ``permission decision:`` rows with the
  call's id); ui_messages.json beside it adds what the API history lacks and is the
  transcript when the API history is gone; task_metadata.json's ``model_usage`` gives the
  ``model:`` rows of a history without ``modelInfo`` (``tasks``);
* task lists: ``state/taskHistory.json`` (3.28+, CLI) and the C1 ``taskHistory`` of the
  state.vscdb row: one ``task:`` row per task, the newer file's when both list it
  (``history``, ``state``);
* standing permissions: ``autoApprovalSettings`` (both shapes) and ``yoloModeToggled`` in
  state.vscdb or ``~/.cline/data/globalState.json`` (``state``), MCP servers'
  ``autoApprove`` lists (``mcp``);
* 4.x sessions: ``sessions/<id>/<id>.messages.json``, the manifest ``<id>.json`` and the
  ``db/sessions.db`` index (``sdk``).

Sample records::

    [{"id":"1768385100000","ts":1768385120000,"task":"Add a --dry-run flag to scripts/migrate.py",
      "tokensIn":25611,"tokensOut":402,"totalCost":0.0213,"cwdOnTaskInitialization":"/home/dana/src/billing-api"}]
    {"role":"assistant","content":[{"type":"tool_use","id":"toolu_01Dk5Rz8Lm2Qa","name":"read_file",
      "input":{"path":"scripts/migrate.py"}}],"modelInfo":{"modelId":"claude-sonnet-4-5-20250929"},"ts":1768385102000}

References: cline/cline@e1bdeef (v3.89.2) apps/vscode/src/shared/ExtensionMessage.ts:118-196,
apps/vscode/src/shared/messages/content.ts:83-105, apps/vscode/src/core/task/tools/utils/ToolResultUtils.ts:17-111,
apps/vscode/src/core/prompts/responses.ts:23-25, apps/vscode/src/shared/AutoApprovalSettings.ts:1-44,
apps/vscode/src/core/context/context-tracking/ContextTrackerTypes.ts:1-32;
cline/cline@053b49b src/shared/AutoApprovalSettings.ts:1-27 (the first shape); cline/cline@0a3eba3
src/shared/tools.ts:8-36 (tool names); cline/cline@2ecb87a src/core/storage/disk.ts:186-195 (taskHistory.json);
cline/cline@21cb8d2 apps/vscode/src/shared/HistoryItem.ts:1-19, sdk/packages/core/docs/messages-contract-v1.md:18-134,
sdk/packages/core/src/services/storage/sqlite-session-store.ts:44-123 (research/formats-vscode-family.md 5).
"""

from .history import parse_task_history
from .mcp import parse_mcp_settings
from .sdk import parse_sdk_manifest, parse_sdk_messages, parse_sessions_db
from .state import parse_global_state, parse_global_state_json
from .tasks import parse_task

PARSERS = (
    ("cline.task.v1", parse_task),
    ("cline.task_history.v1", parse_task_history),
    ("cline.global_state.v1", parse_global_state),
    ("cline.global_state_json.v1", parse_global_state_json),
    ("cline.mcp_settings.v1", parse_mcp_settings),
    ("cline.sdk_messages.v1", parse_sdk_messages),
    ("cline.sdk_manifest.v1", parse_sdk_manifest),
    ("cline.sessions_db.v1", parse_sessions_db),
)

# taskHistory.json names tasks; tasks/<id>/ holds them.
SESSIONS_NAMED = (("cline.task_history.v1", ("cline.task.v1",)),)
