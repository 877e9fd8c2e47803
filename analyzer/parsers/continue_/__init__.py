r"""Continue (continuedev/continue): VS Code / JetBrains extensions and the cn CLI, in ~/.continue.

The row rules are those of docs/agents/continue.md:

* sessions/<sessionId>.json, every generation (no tool fields; a single
  ``toolCallState``; the ``toolCallStates`` array with message ids and
  ``reasoning``): one row per history message at the session's ``dateCreated``
  from sessions.json (``index`` time; a reasoning block at its own ``startAt``),
  ``tool_use`` rows from ``message.toolCalls`` (else the call states) joined by
  ``toolCallId`` to the later ``role: "tool"`` items (``tool_result``; cn keeps
  results in the call state's ``output`` instead), a call the
  user rejected (status ``canceled``, output ``Tool Call Rejected``) as
  ``permission decision: denied``, ``model:`` rows from promptLogs;
* sessions/sessions.json: ``session:`` rows for entries whose file is gone;
* dev_data/0.2.0/chatInteraction, toolUsage, chatFeedback, editInteraction
  (secondary, own ISO time) and tokensGenerated; the 0.1.0 and flat layouts;
* dev_data/devdata.sqlite (tokens_generated, secondary to tokensGenerated.jsonl);
* cn's input_history.json (typed prompts) and permissions.yaml (tool policy);
* the editor's state.vscdb: the Continue.continue row's quickEditHistory.

Sample records::

    {"sessionId":"5e0c1a7b-...","title":"Read invoice rounding code","workspaceDirectory":
     "file:///home/alice/src/billing-api","history":[{"message":{"id":"a0e1...","role":"user",
     "content":"Where do we round invoice totals?"},"contextItems":[]}, ...],"mode":"agent"}
    {"eventName":"chatInteraction","schema":"0.2.0","timestamp":"2025-11-18T14:02:21.000Z",
     "modelTitle":"Claude Sonnet 4.5","prompt":"<user>\nWhere ...","completion":"Let me ...","sessionId":"5e0c..."}

References: continuedev/continue@d0a3c0b626b5 core/index.d.ts:274-298,335-545,
core/util/history.ts:33-192, core/llm/index.ts:544-567, core/util/messageContent.ts:34-36,
gui/src/redux/thunks/cancelToolCall.ts:11-47, gui/src/redux/thunks/streamResponseAfterToolCall.ts:56-66,
gui/src/redux/thunks/streamNormalInput.ts:230-252, gui/src/redux/util/index.ts:102-126,
packages/config-yaml/src/schemas/data/{base.ts,chatInteraction,toolUsage,tokensGenerated,chatFeedback,
editInteraction,quickEdit}, extensions/cli/src/util/inputHistory.ts:6-70,
extensions/cli/src/permissions/permissionsYamlLoader.ts:11-68,
extensions/cli/src/services/ChatHistoryService.ts:149-194,297-320,
extensions/cli/src/stream/streamChatResponse.helpers.ts:40-61,515-548, core/data/devdataSqlite.ts:10-49,
core/llm/index.ts:340-369, extensions/vscode/src/quickEdit/HistoryQuickPick.ts:3-25; continuedev/continue@4916cdda2e
core/index.d.ts:394-415 (the single toolCallState); research/formats-vscode-family.md 4.
"""

from .cli import parse_input_history, parse_permissions
from .databases import parse_devdata_sqlite, parse_global_state
from .dev_data import (
    parse_chat_interaction,
    parse_dev_data_v010,
    parse_prompt_events,
    parse_tokens_generated,
    parse_tool_usage,
)
from .sessions import parse_session, parse_session_index

AGENT = "continue"

PARSERS = (
    ("continue.session.v1", parse_session),
    ("continue.session_index.v1", parse_session_index),
    ("continue.dev_data_chat_interaction.v1", parse_chat_interaction),
    ("continue.dev_data_tool_usage.v1", parse_tool_usage),
    ("continue.dev_data_tokens_generated.v1", parse_tokens_generated),
    ("continue.dev_data_prompt_events.v1", parse_prompt_events),
    ("continue.dev_data_v010.v1", parse_dev_data_v010),
    ("continue.cli_input_history.v1", parse_input_history),
    ("continue.permissions.v1", parse_permissions),
    ("continue.devdata_sqlite.v1", parse_devdata_sqlite),
    ("continue.global_state.v1", parse_global_state),
)

# sessions.json lists every session; sessions/<id>.json holds it.
SESSIONS_NAMED = (("continue.session_index.v1", ("continue.session.v1",)),)
