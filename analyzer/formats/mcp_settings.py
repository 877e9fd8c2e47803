"""MCP server settings: which servers an agent may start, and the tools it may call on them without asking.

Shapes read (the file is decoded as JSONC: VS Code's ``mcp.json`` allows comments):

- ``{"mcpServers": {name: config}}``: Cline ``settings/cline_mcp_settings.json``
  (extension storage or ``~/.cline/data/settings/``; research/formats-vscode-family.md
  5.7), Roo Code ``settings/mcp_settings.json`` (6.6), PearAI-Roo-Code
  ``settings/pearai_agent_mcp_settings.json`` (6.8), Cursor ``~/.cursor/mcp.json`` (3.1);
- ``{"servers": {name: config}, "inputs": [...]}``: VS Code ``User/mcp.json`` (1.2);
- ``{"mcp": {"servers": {...}}}``: the same inside a VS Code ``settings.json``.

A config has ``command``/``args``/``cwd`` (stdio) or ``url`` (sse, streamable
HTTP), ``type`` (legacy ``transportType``), ``disabled``, and the standing
approval list: ``autoApprove`` in Cline (cline/cline@1a196376
src/services/mcp/schemas.ts ``BaseConfigSchema``, legacy ``transportType``),
``alwaysAllow`` plus ``disabledTools`` in Roo Code and its forks (``BaseConfigSchema``
of src/services/mcp/McpHub.ts, seen in index copies of Roo Code forks; the
upstream commit is not pinned here). Both spellings are read as the file has them.

**Secrets never leave this module.** ``env`` and ``headers`` hold API keys and
bearer tokens (research 6.6: "MCP env values in mcp_settings.json"): only their
*names* are kept, never a value. A URL keeps scheme, host and path (no
user:password, no query, no fragment, where tokens are put). In ``command`` and
``args``, a ``NAME=value`` or ``--flag=value`` whose name looks like a
credential has its value replaced by ``<redacted>``, and so does the argument
after such a flag (``--api-key sk-...``). Problem rows never quote the file.

Values are spelled as in the other ``permission setting:`` rows
(``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, keys in file
order), e.g. ``mcpServers[github].alwaysAllow=["get_file_contents"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

APPROVAL_KEYS = ("alwaysAllow", "autoApprove")  # Roo Code (and forks), Cline
REDACTED = "<redacted>"
_CREDENTIAL = re.compile(r"(?i)(token|secret|passw|api[-_]?key|apikey|auth|bearer|credential|private[-_]?key|"
                         r"access[-_]?key|client[-_]?key|cookie|session)")


def compact(value: object) -> str:
    """The spelling of a value in a ``permission setting:`` row (compact JSON, key order kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def pointer(*parts: object) -> str:
    """``json:/a/b~1c`` (RFC 6901)."""
    return "json:/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def safe_url(url: str) -> str:
    """``url`` with only scheme, host, port and path: credentials, query and fragment removed."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return REDACTED  # not a URL we can take apart: keep nothing of it
    if not parts.scheme:
        return REDACTED
    return f"{parts.scheme}://{host}{port}{parts.path}"


def redact_args(args: list[str]) -> list[str]:
    """``args`` with credential-looking values replaced (``--token=x``, ``KEY=x``, and the value after ``--token``)."""
    out, hide_next = [], False
    for arg in args:
        if hide_next and not arg.startswith("-"):
            out.append(REDACTED)  # the value of a credential flag given as the next argument
            hide_next = False
            continue
        hide_next = False
        name, equals, _value = arg.partition("=")
        if equals and _CREDENTIAL.search(name):
            out.append(f"{name}={REDACTED}")
        elif arg.startswith("-") and _CREDENTIAL.search(arg):
            out.append(arg)
            hide_next = True
        else:
            out.append(REDACTED if _looks_like_secret(arg) else _url_in_arg(arg))
    return out


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,30}://)[^/@\s]*@")


def _url_in_arg(arg: str) -> str:
    """An argument holding a URL (a DSN, an endpoint) without its user:password, query and fragment."""
    if "://" not in arg:
        return arg
    arg = _URL_USERINFO.sub(lambda found: f"{found.group(1)}{REDACTED}@", arg)
    return arg.split("?", 1)[0].split("#", 1)[0]


def _looks_like_secret(arg: str) -> bool:
    # well-known token prefixes (sk-, ghp_, github_pat_, xox*-, AKIA...) and "Bearer x"
    return bool(re.match(r"(?i)^(sk-|sk_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA[0-9A-Z]{12}|bearer\s)", arg))


def redact_command(command: str) -> str:
    """``command`` split on spaces and redacted as ``redact_args`` does (``env TOKEN=x npx ...``)."""
    return " ".join(redact_args(command.split(" ")))


@dataclass
class Setting:
    """One standing permission setting: the row's ``name=value`` and the JSON pointer it came from."""

    server: str
    name: str  # e.g. ``mcpServers[github].alwaysAllow``
    value: str  # compact JSON
    locator: str

    @property
    def assignment(self) -> str:
        """``name=value``, the row text before the caller's ``(from <file>, …)``."""
        return f"{self.name}={self.value}"


@dataclass
class McpServer:
    """A configured server, with nothing secret in it."""

    name: str
    locator: str
    transport: str
    command: str
    args: list[str]
    cwd: str
    url: str
    env_keys: list[str]
    header_keys: list[str]
    disabled: bool | None
    approved_tools: list[str] | None  # None: no approval list in the file
    approval_key: str  # "alwaysAllow" or "autoApprove" as the file spells it
    disabled_tools: list[str] | None
    settings: list[Setting] = field(default_factory=list)


def _strings(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, str)]


def _keys(value: object) -> list[str]:
    return [str(key) for key in value] if isinstance(value, dict) else []


def _description(server: McpServer) -> dict:
    description: dict = {}
    if server.transport:
        description["type"] = server.transport
    if server.command:
        description["command"] = server.command
    if server.args:
        description["args"] = server.args
    if server.cwd:
        description["cwd"] = server.cwd
    if server.url:
        description["url"] = server.url
    if server.env_keys:
        description["env"] = server.env_keys  # names only
    if server.header_keys:
        description["headers"] = server.header_keys  # names only
    return description


def _server(name: str, config: dict, base: tuple, problems: list[Draft]) -> McpServer:
    where = base + (name,)
    label = f"{'.'.join(map(str, base))}[{name}]"
    transport = config.get("type") if isinstance(config.get("type"), str) else config.get("transportType")
    command = config.get("command") if isinstance(config.get("command"), str) else ""
    url = config.get("url") if isinstance(config.get("url"), str) else ""
    args = _strings(config.get("args")) or []
    approval_key = next((key for key in APPROVAL_KEYS if key in config), "")
    approved = _strings(config.get(approval_key)) if approval_key else None
    if approval_key and approved is None:
        problems.append(bad_record(pointer(*where, approval_key), f"{approval_key} is not an array"))
    disabled = config.get("disabled") if isinstance(config.get("disabled"), bool) else None
    server = McpServer(name, pointer(*where), transport if isinstance(transport, str) else "",
                       redact_command(command), redact_args(args),
                       config.get("cwd") if isinstance(config.get("cwd"), str) else "", safe_url(url) if url else "",
                       _keys(config.get("env")), _keys(config.get("headers")), disabled, approved, approval_key,
                       _strings(config.get("disabledTools")))
    server.settings.append(Setting(name, label, compact(_description(server)), server.locator))
    if approved is not None:
        server.settings.append(Setting(name, f"{label}.{approval_key}", compact(approved),
                                       pointer(*where, approval_key)))
    if disabled is not None:
        server.settings.append(Setting(name, f"{label}.disabled", compact(disabled), pointer(*where, "disabled")))
    if server.disabled_tools is not None:
        server.settings.append(Setting(name, f"{label}.disabledTools", compact(server.disabled_tools),
                                       pointer(*where, "disabledTools")))
    return server


def _server_table(document: dict) -> tuple[tuple, object] | None:
    if "mcpServers" in document:
        return ("mcpServers",), document["mcpServers"]
    if "servers" in document:
        return ("servers",), document["servers"]
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and "servers" in mcp:
        return ("mcp", "servers"), mcp["servers"]
    return None


def read_mcp_settings(data: bytes) -> tuple[list[McpServer], list[Draft]]:
    """The servers of an MCP settings file, and ``parser:`` rows for what could not be read.

    Never raises; a file without a server table gives no servers and no row
    (a ``settings.json`` need not configure MCP).
    """
    try:
        document = load_jsonc(data)
    except ValueError as exc:  # the reason names a position, never the file's text
        return [], [bad_file(f"MCP settings are not JSON: {exc}")]
    if not isinstance(document, dict):
        return [], [bad_file(f"MCP settings are a JSON {type(document).__name__}, not an object")]
    found = _server_table(document)
    if found is None:
        return [], []
    base, table = found
    if not isinstance(table, dict):
        return [], [bad_record(pointer(*base), f"{base[-1]} is not an object")]
    servers, problems = [], []
    for name, config in table.items():
        if not isinstance(config, dict):
            problems.append(bad_record(pointer(*base, name), "server entry is not an object"))
            continue
        servers.append(_server(name, config, base, problems))
    return servers, problems


def setting_rows(ctx: ParseContext, origin: str) -> Iterator[Draft]:
    """The ``permission setting:`` rows of an MCP settings file, at its mtime, then its ``parser:`` rows.

    ``permission setting: <name>=<value> (from <origin>, file mtime)``, one per server
    (its description, nothing secret), its approval list, ``disabled`` and ``disabledTools``.
    """
    servers, problems = read_mcp_settings(ctx.data)
    when = file_mtime(ctx)
    for server in servers:
        for setting in server.settings:
            yield Draft("system", f"permission setting: {setting.assignment} (from {origin}, file mtime)",
                        setting.locator, **when)
    yield from problems
