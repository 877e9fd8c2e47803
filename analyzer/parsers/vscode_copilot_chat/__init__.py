"""GitHub Copilot Chat in VS Code: chat sessions of three generations, their index, approvals, side copies.

The transcript is VS Code core's (``contrib/chat``); the extension adds
``result.metadata`` (tool call rounds and results) and its own sidecar files.
Row rules: docs/agents/vscode-copilot-chat.md.

* ``chatSessions/<id>.json`` (generation B, session object v1-v3) and
  ``<id>.jsonl`` (generation C, >= 1.109: an ObjectMutationLog replayed, kind 0
  snapshot, 1 set, 2 push with array-index paths, 3 delete); the same folders
  under ``globalStorage/emptyWindowChatSessions`` for folder-less windows. A
  ``.json`` beside the ``.jsonl`` of its id is an older snapshot (upstream reads
  the ``.jsonl`` only): one ``superseded:`` row. Per request: the prompt (user),
  thinking, each model tool call (tool_use, joined to ``toolCallResults`` and to
  its ``toolInvocationSerialized`` part by the model's call id, ``__vscode-<n>``
  stripped), its ``permission decision:`` (``isConfirmed`` boolean or
  ``{type}``), its tool_result, then ONE assistant row for the response.
  The project is the folder's ``workspace.json`` (local, WSL, SSH, containers).
* ``state.vscdb`` (workspace and global, read with the -wal; ``secret://``
  never read): ``interactive.sessions`` (generation A), the session index
  (``session:`` rows for entries without a file), ``chat/autoconfirm``.
  The ``.backup`` copies are secondary.
* Secondary prompt copies: ``memento/interactive-session`` and
  ``inline-chat-history``; the extension's ``transcripts/<id>.jsonl``.
* ``settings.json``: ``chat.tools.*autoApprove`` and ``chat.permissions.default``.

Sample record (generation C, one line)::

    {"kind":2,"k":["requests",0,"response"],"v":[{"kind":"toolInvocationSerialized",
     "isConfirmed":{"type":2,"id":"chat.tools.terminal.autoApprove"},"toolCallId":"call_Zr4X",
     "toolId":"run_in_terminal", ...}]}

References: microsoft/vscode@047238f9 src/vs/workbench/contrib/chat/common/model/chatSessionStore.ts
(readSessionFromLocation: .jsonl before .json); microsoft/vscode@ce1580aa
src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts (EntryKind, read); microsoft/vscode@c3c6e234
src/vs/workbench/contrib/chat/common/chatService/chatService.ts (ToolConfirmKind); voideditor/void@b3166e7e
src/vs/workbench/contrib/chat/common/chatModel.ts:962-1103,1618-1677, chatSessionStore.ts:26-62,144-174,
chatWidgetHistoryService.ts:40-80, browser/languageModelToolsService.ts:385-478;
microsoft/vscode-copilot-chat@31acd00a src/extension/prompt/common/conversation.ts:348-404,
src/extension/intents/node/toolCallingLoop.ts:1361, src/extension/chat/vscode-node/sessionTranscriptService.ts:21-356.
"""

from .history import parse_prompt_history
from .sessions import parse_chat_session_json, parse_chat_session_jsonl
from .settings import parse_user_settings
from .state import parse_global_state, parse_workspace_state
from .transcripts import parse_hook_transcript

PARSERS = (
    ("vscode_copilot_chat.chat_session_json.v1", parse_chat_session_json),
    ("vscode_copilot_chat.chat_session_jsonl.v1", parse_chat_session_jsonl),
    ("vscode_copilot_chat.workspace_state.v1", parse_workspace_state),
    ("vscode_copilot_chat.global_state.v1", parse_global_state),
    ("vscode_copilot_chat.prompt_history.v1", parse_prompt_history),
    ("vscode_copilot_chat.hook_transcript.v1", parse_hook_transcript),
    ("vscode_copilot_chat.user_settings.v1", parse_user_settings),
)
