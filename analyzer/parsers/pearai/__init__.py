r"""PearAI: chat sessions (Continue fork), agent tasks (Roo Code 3.15 fork), and their side records.

The row rules are those of docs/agents/pearai.md (the seed's Parser plan):

* chat sessions: one row per history / perplexityHistory item, every row at the
  session's ``dateCreated`` from sessions.json (``index`` time), with
  ``model:`` rows when promptLogs name a model or change it;
* agent tasks: api_conversation_history.json, XML tool tags as tool_use rows
  (tool_use_id = the assistant message's index), ``[tool for 'arg'] Result:``
  blocks as tool_result rows, permission decision rows after denied or
  annotated results, project from the task list in state.vscdb;
* state.vscdb: one ``task:`` row per taskHistory entry and one
  ``permission setting:`` row per standing auto-approval key;
* the PearAI output channel log and dev_data/chat.jsonl as secondary sources,
  dev_data/tokens_generated.jsonl as ``tokens generated:`` rows.

Sample records::

    {"history":[{"message":{"role":"user","content":"why does build.sh fail"}, ...}],
     "perplexityHistory":[], "sessionId":"9b1c2d3e-...", "workspaceDirectory":"/home/alice/proj"}
    [{"role":"assistant","content":[{"type":"text",
      "text":"<execute_command>\n<command>npm test</command>\n</execute_command>"}],"ts":1759400103000}]

References: trypear/pearai-submodule@51eceef core/index.d.ts:207-332, core/util/history.ts:7-135,
core/llm/index.ts:247-291,373-384,548-588, extensions/vscode/src/extension/VsCodeExtension.ts:132-155;
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:323-327,1271-1386, src/core/prompts/responses.ts:8-14,
src/schemas/index.ts:327-352,584-597; trypear/PearAI-Roo-Code@7bd0c94 src/core/assistant-message/index.ts
(tool names).
"""

from .chat import parse_chat_session, parse_dev_data_chat, parse_session_index, parse_tokens_generated
from .output_log import parse_output_log
from .state import parse_global_state
from .tasks import parse_agent_task

PARSERS = (
    ("pearai.chat_session.v1", parse_chat_session),
    ("pearai.session_index.v1", parse_session_index),
    ("pearai.agent_task.v1", parse_agent_task),
    ("pearai.global_state.v1", parse_global_state),
    ("pearai.output_log.v1", parse_output_log),
    ("pearai.dev_data_chat.v1", parse_dev_data_chat),
    ("pearai.tokens_generated.v1", parse_tokens_generated),
)
