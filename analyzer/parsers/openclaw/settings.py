"""OpenClaw session entries (the legacy ``sessions.json`` and ``session_nodes.entry_json``) and exec approvals.

A session entry (``SessionEntry``, docs/reference/session-management-compaction/schema.md)
maps a session key (``agent:main:main``, ``agent:main:slack:channel:C1``,
``cron:<job>``) to its current session id, with labels, chat type, model
overrides, per-session toggles and best-effort token counters; times are epoch
milliseconds. Only the keys named in ENTRY_KEYS are shown: the entry also
names auth profiles and delivery targets, which are not transcript evidence.
``elevatedLevel`` (exec on the host outside the sandbox) is a
``permission setting:`` row of its own.

Exec approvals (docs/tools/exec-approvals.md): the legacy
``exec-approvals.json`` and the ``exec_approvals_config`` row of
``state/openclaw.sqlite`` hold one document: ``defaults`` and per-agent
``security`` / ``ask`` / ``askFallback`` / ``autoAllowSkills``, an
``allowlist`` of command patterns (``source: allow-always`` when the user
answered a prompt with "always") and ``mcpTools`` allowed per server. Each is a
``permission setting:`` row. ``socket.token`` is a credential: it is withheld
like every credential-keyed value (formats/idioms.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, file_mtime, pointer, setting_value, settings_value
from aitrail.analyzer.formats.text import json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms

TITLE_KEYS = ("label", "displayName", "autoLabel", "subject")
ENTRY_KEYS = ("chatType", "provider", "room", "space", "providerOverride", "modelOverride", "thinkingLevel",
              "verboseLevel", "reasoningLevel", "sendPolicy", "inputTokens", "outputTokens", "totalTokens",
              "contextTokens", "compactionCount", "sessionFile")
TIME_KEYS = ("sessionStartedAt", "lastInteractionAt", "lastActivityAt", "archivedAt", "pinnedAt")
PERMISSION_ENTRY_KEYS = ("elevatedLevel",)
APPROVAL_KEYS = ("security", "ask", "askFallback", "autoAllowSkills")
MAX_INDEX_ROWS = 100_000  # session keys of one sessions.json read; a hostile file cannot make millions of rows
MAX_LIST_ROWS = 10_000  # allowlist and mcpTools entries of one approvals document


def ms_text(value) -> str:
    """An epoch-ms value as ISO UTC (the format states ms since the epoch), else as written."""
    ns = ns_from_ms(value)
    return format_timestamp(ns) if ns is not None else setting_value(value)


def entry_title(entry: dict, fallback: str) -> str:
    """The name a session shows: its label, display name, automatic label or subject, else ``fallback``."""
    for key in TITLE_KEYS:
        if isinstance(entry.get(key), str) and entry[key].strip():
            return entry[key]
    return fallback


def entry_details(entry: dict) -> list[str]:
    """``key=value`` for the entry's shown keys (times as ISO UTC), in ENTRY_KEYS order."""
    parts = [f"{key}={setting_value(entry[key])}" for key in ENTRY_KEYS if key in entry]
    parts += [f"{key}={ms_text(entry[key])}" for key in TIME_KEYS if key in entry]
    return parts


def entry_permission_rows(entry: dict, session_key: str, session_id: str, where: str, times: dict,
                          origin: str) -> Iterator[Draft]:
    """A ``permission setting:`` row per per-session exec toggle the entry holds."""
    for key in PERMISSION_ENTRY_KEYS:
        if key in entry:
            yield Draft("system", f"permission setting: {key}={setting_value(entry[key])} (session {session_key}, "
                                  f"from {origin})", f"{where}/{key}", session_id=session_id, **times)


def parse_session_index(ctx: ParseContext) -> Iterator[Draft]:
    """Legacy ``sessions.json``: a ``session:`` row per session key, timed by its updatedAt."""
    document, problem = json_document(ctx.data, "session index")
    if problem is not None:
        yield problem
        return
    for number, (key, entry) in enumerate(document.items()):
        if number >= MAX_INDEX_ROWS:
            yield Draft("system", f"parser: session keys over the limit ({MAX_INDEX_ROWS} read); the other "
                                  f"{len(document) - MAX_INDEX_ROWS} were not read", pointer(key),
                        timestamp_source="none")
            return
        yield from _index_entry(ctx, key, as_dict(entry))


def _index_entry(ctx: ParseContext, key: str, entry: dict) -> Iterator[Draft]:
    session_id = entry.get("sessionId") if isinstance(entry.get("sessionId"), str) else ""
    ns = ns_from_ms(entry.get("updatedAt"))
    times = {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else file_mtime(ctx)
    parts = [f"key={key}", f"session {session_id or '(none)'}", *entry_details(entry)]
    where = pointer(key)
    yield Draft("system", f"session: {entry_title(entry, key)} ({', '.join(parts)})", where, session_id=session_id,
                **times)
    yield from entry_permission_rows(entry, key, session_id, where, times, ctx.source.path)


# -- exec approvals ---------------------------------------------------------------------------------------------


def approval_rows(document: dict, origin: str, where, times: dict) -> Iterator[Draft]:
    """The ``permission setting:`` rows of an exec approvals document (``where(*parts)`` locates a value)."""
    if "socket" in document:
        yield _setting("socket", document["socket"], origin, where("socket"), times)
    defaults = as_dict(document.get("defaults"))
    for key in APPROVAL_KEYS:
        if key in defaults:
            yield _setting(f"defaults.{key}", defaults[key], origin, where("defaults", key), times)
    for agent, policy in as_dict(document.get("agents")).items():
        yield from _agent_rows(agent, as_dict(policy), origin, where, times)


def _agent_rows(agent: str, policy: dict, origin: str, where, times: dict) -> Iterator[Draft]:
    for key in APPROVAL_KEYS:
        if key in policy:
            yield _setting(f"agents.{agent}.{key}", policy[key], origin, where("agents", agent, key), times)
    for kind in ("allowlist", "mcpTools"):
        items = as_list(policy.get(kind))
        for index, item in enumerate(items[:MAX_LIST_ROWS]):
            yield _setting(f"agents.{agent}.{kind}[{index}]", item, origin, where("agents", agent, kind, index), times,
                           _mcp_tool(item) if kind == "mcpTools" else "exec")
        if len(items) > MAX_LIST_ROWS:
            yield Draft("system", f"parser: {kind} entries over the limit ({MAX_LIST_ROWS} read); the other "
                                  f"{len(items) - MAX_LIST_ROWS} were not read", where("agents", agent, kind),
                        timestamp_source="none")


def _mcp_tool(item) -> str:
    """An allowed MCP tool as the model calls it, ``<server>__<tool>`` (docs/gateway/config-tools/tool-policy.md)."""
    server, tool = as_dict(item).get("server"), as_dict(item).get("tool")
    return f"{server}__{tool}" if isinstance(server, str) and isinstance(tool, str) else ""


def _setting(name: str, value, origin: str, locator: str, times: dict, tool: str = "exec") -> Draft:
    shown = settings_value(value, name.rsplit(".", 1)[-1])
    return Draft("system", f"permission setting: exec approvals {name}={shown} (from {origin})", locator,
                 tool_name=tool, **times)


def parse_exec_approvals(ctx: ParseContext) -> Iterator[Draft]:
    """The legacy ``exec-approvals.json``: its permission settings, at the file's mtime."""
    document, problem = json_document(ctx.data, "exec approvals file")
    if problem is not None:
        yield problem
        return
    yield from approval_rows(document, f"{ctx.source.path}, file mtime", pointer, file_mtime(ctx))
