r"""Roo Code (RooCodeInc/Roo-Code, extension RooVeterinaryInc.roo-cline): tasks, task list, standing permissions.

The row rules are those of docs/agents/roo-code.md:

* task folders ``tasks/<taskId>/`` (globalStorage ``rooveterinaryinc.roo-cline``
  or under ``roo-cline.customStoragePath``): api_conversation_history.json
  through the shared Cline walk (formats/cline_tasks.py) with Roo's reader
  (native.py): XML tool tags up to 3.41, native ``tool_use``/``tool_result``
  blocks joined by id from 3.32, JSON status strings as ``permission
  decision:`` rows, condensed and truncated messages kept and marked;
* the task list, one ``task:`` row per task: history_item.json (3.49+), else
  the globalState ``taskHistory`` and tasks/_index.json (secondary);
* standing permissions: the auto-approval keys, allowed/denied commands and
  custom modes of the globalState row, ``roo-cline.allowedCommands`` /
  ``deniedCommands`` of settings.json, and mcp_settings.json's ``alwaysAllow``.

Sample records::

    {"role":"assistant","content":[{"type":"tool_use","id":"toolu_01Sx3Pq7Vd","name":"search_files",
     "input":{"path":".","regex":"fetchAll"}}],"ts":1770737401000}
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Ty8Kw2Zm",
     "content":"{\"status\":\"denied\",\"feedback\":\"use apply_diff, not sed\"}"}],"ts":1770737409000}
    {"id":"019c4a2e-7b40-7c31-9d2a-5e8f1b3c6a70","number":14,"ts":1770737415000,"task":"Rename ...",
     "tokensIn":31840,"tokensOut":1120,"totalCost":0.0412,"workspace":"/home/dana/src/crawler","mode":"code"}

References: RooCodeInc/Roo-Code@cb836567 src/core/task-persistence/apiMessages.ts:12-38,72-90,
src/core/prompts/responses.ts:7-31, src/core/assistant-message/presentAssistantMessage.ts:391-402,449-520,
src/core/condense/index.ts:451-488,530-640, src/core/context-management/index.ts:105-128,
src/core/task/Task.ts:904-960,1980, packages/types/src/history.ts:7-29,
packages/types/src/global-settings.ts:88-113, packages/types/src/mode.ts:96-104,
src/core/config/CustomModesManager.ts:303, src/services/mcp/McpHub.ts:67-72, src/package.json:310-367;
RooCodeInc/Roo-Code@6f0948137f src/core/condense/index.ts:345-395 (3.36-3.43 summary: assistant role,
copied tool_use blocks); @271d01bada src/core/prompts/responses.ts:8-50 (3.33.1: JSON statuses);
@838660f3 (v3.31.0) packages/types/src/tool.ts:17-38 (XML tool names); @4ebbca08b0 src/core/task/Task.ts
(UUIDv7 task ids, 3.41).
"""

from .history import parse_history_item, parse_task_index
from .settings import parse_mcp_settings, parse_user_settings
from .state import parse_global_state
from .tasks import parse_task

PARSERS = (
    ("roo_code.task.v1", parse_task),
    ("roo_code.history_item.v1", parse_history_item),
    ("roo_code.task_index.v1", parse_task_index),
    ("roo_code.global_state.v1", parse_global_state),
    ("roo_code.user_settings.v1", parse_user_settings),
    ("roo_code.mcp_settings.v1", parse_mcp_settings),
)

# The task history (globalState taskHistory, history items, the task index) names tasks; tasks/<id>/ holds them.
SESSIONS_NAMED = tuple((naming, ("roo_code.task.v1",)) for naming in ("roo_code.history_item.v1",
                                                                       "roo_code.task_index.v1"))
