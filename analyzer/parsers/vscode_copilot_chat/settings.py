"""settings.json (user or profile, JSONC): the standing tool approvals of chat agent mode.

One ``permission setting: <key>=<value> (from settings.json, file mtime)`` row
per key present: ``chat.tools.autoApprove`` (1.99: ``true`` or a map of tool id
to boolean; later ``chat.tools.global.autoApprove``), ``chat.tools.terminal.autoApprove``
(command or ``/regex/`` to true/false/null, or ``{approve, matchCommandLine}``;
its deprecated names ``chat.agent.terminal.autoApprove``, ``chat.agent.terminal.allowList``
/ ``denyList`` and ``github.copilot.chat.agent.terminal.allowList`` / ``denyList``),
``chat.tools.edits.autoApprove`` (glob to allow/deny) and ``chat.permissions.default``; ``chat.useFileStorage`` and
``chat.useLogSessionStorage`` as ``setting:`` rows (they choose where sessions
are written). VS Code writes settings with dotted keys at the top level; a
nested ``{"chat": {"tools": ...}}`` spelling is read too.

References: microsoft/vscode@3bd56894 src/vs/workbench/contrib/terminalContrib/chatAgentTools/common/
terminalChatAgentToolsConfiguration.ts (TerminalChatAgentToolsSettingId); voideditor/void@b3166e7e
src/vs/workbench/contrib/chat/browser/languageModelToolsService.ts:385-403 (chat.tools.autoApprove).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, settings_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

PERMISSION_KEYS = ("chat.tools.autoApprove", "chat.tools.global.autoApprove", "chat.tools.terminal.autoApprove",
                   "chat.tools.edits.autoApprove", "chat.permissions.default",
                   # earlier names of the terminal allow/deny lists (deprecated for chat.tools.terminal.autoApprove)
                   "chat.agent.terminal.autoApprove", "chat.agent.terminal.allowList", "chat.agent.terminal.denyList",
                   "github.copilot.chat.agent.terminal.allowList", "github.copilot.chat.agent.terminal.denyList")
STORAGE_KEYS = ("chat.useFileStorage", "chat.useLogSessionStorage")
_MISSING = object()


def _lookup(document: dict, dotted: str) -> tuple[object, str]:
    """The value of ``dotted`` (top-level dotted key, else nested objects) and its locator."""
    if dotted in document:
        return document[dotted], pointer(dotted)
    node: object = document
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING, ""
        node = node[part]
    return node, pointer(*dotted.split("."))


def parse_user_settings(ctx: ParseContext) -> Iterator[Draft]:
    """A settings.json: one ``permission setting:`` row per approval key, a ``setting:`` row per storage key."""
    try:
        document = load_jsonc(ctx.data)
    except ValueError as exc:
        yield bad_file(f"settings file is not JSONC: {exc}")
        return
    if not isinstance(document, dict):
        yield bad_file(f"settings file is a JSON {type(document).__name__}, not an object")
        return
    origin = f"(from {ctx.source.name}, file mtime)"
    for prefix, keys in (("permission setting", PERMISSION_KEYS), ("setting", STORAGE_KEYS)):
        for key in keys:
            value, locator = _lookup(document, key)
            if value is not _MISSING:
                yield Draft("system", f"{prefix}: {key}={settings_value(value, key)} {origin}", locator,
                            **file_mtime(ctx))
