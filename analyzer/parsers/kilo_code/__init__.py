r"""Kilo Code legacy (<= 5.x, extension kilocode.kilo-code, a Roo Code fork): tasks, task list, standing permissions.

The row rules are those of docs/agents/kilo-code.md. File families:

* task folders ``tasks/<taskId>/`` (globalStorage ``kilocode.kilo-code`` of every
  VS Code-family editor, or under the ``kilo-code.customStoragePath`` setting):
  api_conversation_history.json through the shared Cline walk
  (formats/cline_tasks.py) with Kilo's reader (reader.py): XML tool tags or native
  ``tool_use``/``tool_result`` blocks joined by id, JSON status strings as
  ``permission decision:`` rows, reasoning blocks, condensed and truncated
  messages kept and marked; ui_messages.json for cut streams and as the fallback;
* the task list: the ``taskHistory`` array of the ``kilocode.kilo-code`` row of
  the global state.vscdb, one ``task:`` row per task, with its earlier versions
  from state.vscdb.backup and from the WAL's earlier commits as secondary rows
  (state.py); task_history.json where a build kept the list in a file;
* standing permissions: the auto-approval keys of that row (``yoloMode``,
  ``alwaysAllow*``, ``allowedCommands``, ``deniedCommands``...),
  ``kilo-code.allowedCommands`` / ``deniedCommands`` of settings.json, and
  mcp_settings.json's ``alwaysAllow`` lists.

The new generation (>= 7.x, an OpenCode fork) writes ``~/.local/share/kilo/kilo.db``,
which the kilo-cli agent reads.

Sample records::

    {"role":"assistant","content":[{"type":"text","text":"Reading the module first."},{"type":"tool_use",
     "id":"toolu_01Kilo","name":"read_file","input":{"path":"billing/retry.py"}}],"ts":1788300004200}
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Kilo",
     "content":"{\"status\":\"denied\",\"message\":\"The user denied this operation.\"}"}],"ts":1788300004900}
    {"id":"0190f3a2-7b1c-7d2e-9f00-112233445566","number":3,"ts":1788300000000,"task":"Refactor the payment
     retry loop","tokensIn":18422,"tokensOut":2210,"totalCost":0.1834,"workspace":"/home/ana/code/billing",
     "mode":"code","toolProtocol":"native","status":"completed"}

References: Kilo-Org/kilocode-legacy@56b73d3b (extension 5.10.4) src/package.json:2-5,492-511,546-549,
src/utils/storage.ts:15-49,79-115, src/shared/globalFileNames.ts:1-9, packages/types/src/history.ts:7-40,
packages/types/src/global-settings.ts:75-99, packages/types/src/tool.ts:17-48,
src/core/config/ContextProxy.ts:37, src/core/webview/ClineProvider.ts:1997-2050,
src/core/task-persistence/apiMessages.ts:12-37, src/core/task/Task.ts:1032-1125,2068,
src/core/prompts/responses.ts:20-75, src/core/condense/index.ts:491-503,
src/core/context-management/index.ts:105-118, src/core/environment/getEnvironmentDetails.ts:336,
src/services/mcp/McpHub.ts:88-94, src/utils/mcp-name.ts (``mcp--<server>--<tool>``);
Kilo-Org/kilocode@74d6e483 src/shared/globalFileNames.ts (task_history.json);
voideditor/void@b3166e7e src/vs/base/parts/storage/node/storage.ts:188-194 (state.vscdb.backup).
"""

from .settings import parse_mcp_settings, parse_user_settings
from .state import parse_global_state, parse_task_history_file
from .tasks import parse_task

PARSERS = (
    ("kilo_code.task.v1", parse_task),
    ("kilo_code.global_state.v1", parse_global_state),
    ("kilo_code.task_history.v1", parse_task_history_file),
    ("kilo_code.user_settings.v1", parse_user_settings),
    ("kilo_code.mcp_settings.v1", parse_mcp_settings),
)

# The task list (taskHistory, task_history.json) names tasks; tasks/<id>/ holds them.
SESSIONS_NAMED = tuple((naming, ("kilo_code.task.v1",)) for naming in ("kilo_code.global_state.v1",
                                                                        "kilo_code.task_history.v1"))
