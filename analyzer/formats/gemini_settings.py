"""Settings files of Gemini CLI and its fork Qwen Code: ``settings.json`` keys by dotted path, ``trustedFolders.json``.

Both CLIs read ``settings.json`` with strip-json-comments and then
``JSON.parse`` (comments allowed, trailing commas not), in a nested layout
(``tools.allowed``) that replaced a flat one (``allowedTools``); each agent
names the keys that allow, refuse or skip confirmation of tool calls. Rows,
at the file's modification time (the files hold no time of their own):

* ``permission setting: <key>=<JSON> (from <file>, file mtime)`` per permission
  key present, and per ``mcpServers.<name>.trust|includeTools|excludeTools``
  (a trusted server's tools run without confirmation);
* ``setting: <key>=<JSON> …`` for the keys that explain other evidence;
* ``permission setting: trustedFolders[<path>]=<level> …`` per folder of
  ``trustedFolders.json`` (``TRUST_FOLDER``, ``TRUST_PARENT``, ``DO_NOT_TRUST``),
  with the folder as project_path.

A flat key that names a group of the nested layout (``sandbox``,
``folderTrust``, ``model``) counts only when it holds a value, not the group's
object. A credential's value is withheld (``idioms.settings_value``).

    {"tools": {"approvalMode": "auto-edit"}, "permissions": {"deny": ["Bash(rm *)"]},
     "mcpServers": {"github": {"command": "gh-mcp", "trust": true}}}

References: google-gemini/gemini-cli@5411f113ca packages/cli/src/config/settingsSchema.ts:228-246,389-437,
1669-1720; packages/core/src/utils/trust.ts:18-22; npm @qwen-code/qwen-code@0.24.4
chunks/chunk-D2H63VR2.js (settings schema: ``permissions.allow|ask|deny``, ``tools.approvalMode``),
chunks/chunk-BW4333PP.js ``V1_TO_V2_MIGRATION_MAP`` (the flat names), chunks/chunk-HS5OZTQF.js
(strip-json-comments, ``trustedFolders.json``).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import escape_key, file_mtime, pointer, setting_value, settings_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

# Per MCP server: a trusted server's tools run without confirmation.
SERVER_KEYS = ("trust", "includeTools", "excludeTools")
# Flat (pre-nested) keys that are also the names of nested groups: only a value counts, not the group.
GROUP_NAMES = ("sandbox", "folderTrust", "model")


def load_settings(data: bytes):
    """Settings and trust files allow // and /* */ comments, not trailing commas; ValueError if not JSON.

    Both CLIs strip comments (strip-json-comments) and then call JSON.parse, so a
    trailing comma fails there as it does here.
    """
    return load_jsonc(data, trailing_commas=False)


def lookup(document: dict, dotted: str) -> tuple[object, bool]:
    """The value at a dotted key path, and whether it is present."""
    value: object = document
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return None, False
        value = value[key]
    return value, True


def _counts(key: str, value: object) -> bool:
    return not (isinstance(value, dict) and key in GROUP_NAMES)


def setting_rows(ctx: ParseContext, document: dict, permission_keys: tuple[str, ...],
                 context_keys: tuple[str, ...]) -> Iterator[Draft]:
    """``permission setting:`` rows for ``permission_keys`` and MCP-server trust, ``setting:`` rows for the rest."""
    origin = f"(from {ctx.source.path}, file mtime)"
    for key in permission_keys:
        value, present = lookup(document, key)
        if present and _counts(key, value):
            yield Draft("system", f"permission setting: {key}={settings_value(value, key)} {origin}",
                        pointer(*key.split(".")), **file_mtime(ctx))
    servers = document.get("mcpServers")
    for name, server in (servers.items() if isinstance(servers, dict) else ()):
        for key in SERVER_KEYS:
            if isinstance(server, dict) and key in server:
                path = f"mcpServers.{name}.{key}"
                yield Draft("system", f"permission setting: {path}={setting_value(server[key])} {origin}",
                            "json:/mcpServers/" + escape_key(name) + "/" + key, **file_mtime(ctx))
    for key in context_keys:
        value, present = lookup(document, key)
        if present and _counts(key, value):
            yield Draft("system", f"setting: {key}={settings_value(value, key)} {origin}", pointer(*key.split(".")),
                        **file_mtime(ctx))


def settings_file_rows(ctx: ParseContext, permission_keys: tuple[str, ...],
                       context_keys: tuple[str, ...]) -> Iterator[Draft]:
    """A settings.json read whole: its ``setting_rows``, or the row saying why it cannot be read."""
    document, problem = json_document(ctx.data, "settings file", dict, loads=load_settings)
    if problem is not None:
        yield problem
        return
    yield from setting_rows(ctx, document, permission_keys, context_keys)


def trusted_folder_rows(ctx: ParseContext) -> Iterator[Draft]:
    """trustedFolders.json: one ``permission setting:`` row per folder and its trust level (or the file's problem)."""
    document, problem = json_document(ctx.data, "trustedFolders.json", dict, loads=load_settings)
    if problem is not None:
        yield problem
        return
    origin = f"(from {ctx.source.path}, file mtime)"
    for path, level in document.items():
        yield Draft("system", f"permission setting: trustedFolders[{path}]={setting_value(level)} {origin}",
                    f"json:/{escape_key(path)}", project_path=path, **file_mtime(ctx))
