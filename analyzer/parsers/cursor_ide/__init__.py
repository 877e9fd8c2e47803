r"""Cursor IDE: composers and bubbles in the global state.vscdb, workspace composer lists, the legacy chat panel.

The row rules are those of docs/agents/cursor-ide.md:

* global ``state.vscdb`` (and its ``.backup``, secondary; and ``~/.cursor/state.vscdb``):
  ``cursorDiskKV`` ``composerData:<composer>`` gives a ``composer:`` row and a
  ``model:`` row from ``modelConfig``; its bubbles, inline (``conversation``,
  2024) or split (``fullConversationHeadersOnly`` + ``bubbleId:<composer>:<bubble>``
  rows), give user, assistant, thinking, tool_use and tool_result rows
  (``toolFormerData``: call and result in one object, ``toolCallId`` joins them),
  ``model: a -> b`` where a bubble's ``modelInfo`` changes the model; a
  ``composerHeaders`` row (newer builds) gives a composer's folder, and a
  ``session:`` row when its composer has no composerData; the
  ItemTable applicationUser blob gives ``permission setting:`` rows for the
  auto-run allow/deny lists and ``model:`` rows for configured surfaces;
* workspace ``state.vscdb``: ``composer.composerData`` lists which composers belong
  to the folder of ``workspace.json`` (the project_path of their rows); a listed
  composer with no composerData gives a ``session:`` row; the 2023-2024 chat
  panel's tabs give user and assistant rows;
* ``aiService.prompts`` / ``aiService.generations`` (secondary) give user rows.

Times: bubbles' ``createdAt`` is ISO text, composers' ``createdAt`` and
generations' ``unixMs`` are epoch ms; a bubble without its own time takes the
composer's (``index``). cursorAuth/* rows and secret:// rows are never read.

Sample records (cursorDiskKV)::

    composerData:7a1e... {"_v":10,"composerId":"7a1e...","name":"Fix flaky retry test",
      "createdAt":1764787200000,"modelConfig":{"modelName":"claude-4.5-sonnet"},
      "fullConversationHeadersOnly":[{"bubbleId":"b1...","type":1}, ...]}
    bubbleId:7a1e...:b2... {"_v":3,"type":2,"createdAt":"2025-12-03T18:40:02.000Z",
      "toolFormerData":{"toolCallId":"toolu_01Xr8KpWq3","name":"run_terminal_cmd",
      "rawArgs":"{\"command\":\"pytest\"}","result":"{\"exitCode\":1}","status":"completed"}}

References: (third-party, Cursor is closed source) tony/agentgrep@0ec73f2
src/agentgrep/adapters/cursor_ide.py (_CURSOR_STATE_EXACT_KEYS, _CURSOR_COMPOSER_KEY_PREFIXES and
_CURSOR_BUBBLE_ROLES: key prefixes, bubble type 1/2; _cursor_nested_model: modelConfig, modelInfo;
_cursor_worktree_origin: gitWorktree; _cursor_composer_headers), src/agentgrep/store_catalog/cursor_ide.py
(global and workspace databases, composerHeaders, conversation-search.db); michaeldhood/chatrxiv@d28513a
docs/cursor/storage-reference.md (composerData _v 10, bubble _v 3, toolFormerData), as summarised in
research/formats-vscode-family.md 3; voideditor/void@b3166e7 src/vs/base/parts/storage/node/storage.ts:188-194,
329-331 (ItemTable schema, the .backup copy), src/vs/platform/storage/electron-main/storageMain.ts:415-434
(workspace.json).
"""

from .state import parse_state_vscdb
from .workspace import parse_workspace_prompts, parse_workspace_state

PARSERS = (
    ("cursor_ide.state_vscdb.v1", parse_state_vscdb),
    ("cursor_ide.workspace_state.v1", parse_workspace_state),
    ("cursor_ide.workspace_prompts.v1", parse_workspace_prompts),
)
