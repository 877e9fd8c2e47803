r"""Void (voideditor/void, a Code-OSS fork): chat threads from the global state.vscdb, encrypted settings, MCP servers.

The row rules are those of docs/agents/void.md. File families:

* ``<appdata>/Void/User/globalStorage/state.vscdb`` (and ``state.vscdb.backup``,
  secondary; the ``-wal``'s earlier commits, secondary): the ItemTable key
  ``void.chatThreadStorageII`` holds every thread as one JSON value (older keys
  ``void.chatThreadStorageI`` / ``void.chatThreadStorage`` read as secondary);
  threads.py turns it into rows, state.py reads the keys and the older versions.
  Messages carry no time: each takes its thread's ``createdAt`` (``index``). A tool
  message holds the call and its outcome (a same-record join on its ``id``).
  ``void.settingsServiceStorageII`` is Electron-safeStorage ciphertext holding the
  API keys and the auto-approve switches: one ``parser: … cannot be read`` row,
  never its bytes;
* ``~/.void-editor/mcp.json``: the MCP servers (mcp.py).

Sample record (one thread of the ``void.chatThreadStorageII`` value)::

    {"7a1c0e5d-…":{"id":"7a1c0e5d-…","createdAt":"2026-08-29T09:00:00.000Z","lastModified":"2026-08-29T09:03:12.000Z",
     "messages":[{"role":"user","content":"rename foo to bar in utils.ts","displayContent":"rename foo to bar in
     utils.ts","selections":null,"state":{…}},{"role":"tool","type":"success","name":"search_for_files","id":"call_v1",
     "params":{"query":"foo"},"rawParams":{"query":"foo"},"result":{"uris":[…]},"content":"file:///home/jo/app/src/
     utils.ts","mcpServerName":null}],"state":{…},"filesWithUserChanges":{}}}

References: voideditor/void@b3166e7e product.json:2,7 (nameShort Void, dataFolderName .void-editor),
src/vs/workbench/contrib/void/common/storageKeys.ts:6-19,
src/vs/workbench/contrib/void/browser/chatThreadService.ts:208-222,394-423,440-455,536-580,593-598,605-720,1651-1661,
src/vs/workbench/contrib/void/common/chatThreadServiceTypes.ts:11-89,
src/vs/workbench/contrib/void/common/toolsServiceTypes.ts:21-83,
src/vs/workbench/contrib/void/common/voidSettingsService.ts:350-366,
src/vs/workbench/contrib/void/common/voidSettingsTypes.ts:441-467,
src/vs/workbench/contrib/void/common/mcpService.ts:46-48,226-231,
src/vs/workbench/contrib/void/electron-main/mcpChannel.ts:178,233 (MCP tool names ``<6 random chars>_<tool>``),
src/vs/platform/encryption/electron-main/encryptionMainService.ts:27-50,
src/vs/platform/environment/node/userDataPath.ts:35-87, src/vs/base/parts/storage/node/storage.ts:188-194.
"""

from .mcp import parse_mcp_config
from .state import parse_state

PARSERS = (
    ("void.thread_storage.v1", parse_state),
    ("void.mcp_config.v1", parse_mcp_config),
)
