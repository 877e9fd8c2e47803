"""Mistral Vibe session metadata: ``meta.json`` of a session folder, and the legacy single-file session.

``meta.json`` is rewritten atomically after every interaction:
``SessionMetadata`` (``session_id``, ``parent_session_id``, ``start_time``,
``end_time`` ISO 8601 UTC, ``git_commit``, ``git_branch``,
``environment.working_directory``, ``username``, ``title``, ``title_source``,
``loops``) plus ``stats`` (``AgentStats``), ``total_messages``,
``tools_available``, ``config`` (the whole configuration, with
``active_model``, ``bypass_tool_permissions`` and ``tools``),
``agent_profile {name, overrides}`` and ``system_prompt``.

Rows: ``session: <title> (…)`` at ``start_time``; for a sub-agent folder
``subagent: <agent> (…)``; at ``end_time`` (the last save):
``model: <active_model> (…)``, ``permission setting: …`` for the session's
``bypass_tool_permissions``, per-tool permissions and lists, enabled and
disabled tools and its agent profile (``auto-approve`` bypasses every
confirmation), ``tokens generated: …`` and ``session stats: …`` from
``stats``; one ``task: loop …`` per scheduled loop at its ``created_at`` (Unix
seconds). The system prompt and tool list are not rows.

A legacy session (before 2.0, ``logs/session/<prefix>_<UTC>_<id8>.json``,
``{metadata, messages}``; migrated into a folder and deleted by 2.x) gives the
same rows from ``metadata`` and the messages' rows (``messages.py``).

    {"session_id":"7c1d2e3f-8a9b-4c0d-b1e2-a3b4c5d6e7f8","start_time":"2026-06-21T09:15:00.412+00:00",
     "git_branch":"main","environment":{"working_directory":"/home/sam/lib"},"title":"Explain the retry decorator",
     "config":{"active_model":"devstral-2","bypass_tool_permissions":false,"tools":{"bash":{"allowlist":["git *"]}}}}

References: mistralai/mistral-vibe@ac8f1a09fd (PyPI mistral-vibe 2.18.4) vibe/core/types.py ``SessionMetadata``,
``AgentStats``, ``ScheduledLoop``; vibe/core/session/session_logger.py ``save_interaction``,
``persist_metadata``; vibe/core/session/session_migration.py ``migrate_sessions``;
vibe/core/config/_settings.py ``VibeConfig``; vibe/core/tools/base.py ``BaseToolConfig``, ``ToolPermission``;
vibe/core/agents/models.py (built-in agent profiles).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, escape_key, settings_value
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_seconds

from .messages import Conversation
from .session import Copies, SessionFacts, as_text, compact, folder_time, parent_copies, read_json

_SESSION_FACTS = ("title_source", "start_time", "end_time", "username", "git_commit", "total_messages",
                  "parent_session_id")
_TOOL_KEYS = ("permission", "allowlist", "denylist", "sensitive_patterns")
_TOKENS = ("session_prompt_tokens", "session_completion_tokens")


def _when(text) -> dict:
    ns = ns_from_iso(text)  # a time without a zone is no time
    return {"timestamp_ns": ns, "timestamp_source": "record" if ns is not None else "none"}


def _columns(meta: dict) -> dict:
    return {"session_id": as_text(meta.get("session_id")),
            "project_path": as_text(as_dict(meta.get("environment")).get("working_directory")),
            "git_branch": as_text(meta.get("git_branch"))}


def meta_rows(meta: dict, root: str, subagent: str = "") -> Iterator[Draft]:
    """The rows of a SessionMetadata dump whose JSON pointer is ``root`` (``json:`` or ``json:/metadata``)."""
    columns, where = _columns(meta), root if root != "json:" else "file"
    named = "meta.json" if root == "json:" else "the legacy session file"
    facts = "; ".join(f"{key}={as_text(meta[key])}" for key in _SESSION_FACTS if meta.get(key) not in (None, ""))
    yield Draft("system", f"session: {as_text(meta.get('title'))} ({facts})", where, **columns,
                **_when(meta.get("start_time")))
    if subagent:
        yield Draft("system", f"subagent: {subagent}", where, **columns, **_when(meta.get("start_time")))
    last = {**columns, **_when(meta.get("end_time"))}
    config = as_dict(meta.get("config"))
    model = as_text(config.get("active_model"))
    if model:
        yield Draft("system", f"model: {model} (the active model at the session's last save, from {named})",
                    f"{root}/config/active_model", model=model, **last)
    yield from _permission_rows(meta, config, root, last, named)
    yield from _stats_rows(as_dict(meta.get("stats")), model, root, last, named)
    for index, loop in enumerate(as_list(meta.get("loops"))):
        loop = as_dict(loop)
        when = ns_from_seconds(loop.get("created_at"))
        yield Draft("system", f"task: loop {as_text(loop.get('id'))} every {as_text(loop.get('interval_seconds'))} s:"
                              f" {as_text(loop.get('prompt'))}", f"{root}/loops/{index}", **columns,
                    timestamp_ns=when, timestamp_source="record" if when is not None else "none")


def _permission_rows(meta: dict, config: dict, root: str, last: dict, named: str) -> Iterator[Draft]:
    origin = f"(the session's configuration at its last save, from {named})"
    for key in ("bypass_tool_permissions", "enabled_tools", "disabled_tools"):
        if key in config and config[key] not in ([], None):
            yield Draft("system", f"permission setting: {key}={settings_value(config[key], key)} {origin}",
                        f"{root}/config/{key}", **last)
    for name, tool in as_dict(config.get("tools")).items():
        for key in _TOOL_KEYS:
            value = as_dict(tool).get(key)
            if value not in (None, []):
                yield Draft("system", f"permission setting: tools.{name}.{key}={compact(value)} {origin}",
                            f"{root}/config/tools/{escape_key(name)}/{key}", tool_name=name, **last)
    profile = as_dict(meta.get("agent_profile"))
    if profile:
        yield Draft("system", f"permission setting: agent_profile={compact(profile.get('name'))} overrides="
                              f"{settings_value(profile.get('overrides'))} (from {named})", f"{root}/agent_profile",
                    **last)


def _stats_rows(stats: dict, model: str, root: str, last: dict, named: str) -> Iterator[Draft]:
    if not stats:
        return
    numbers = {key: value for key, value in stats.items()
               if isinstance(value, (int, float)) and not isinstance(value, bool)}
    tokens = " ".join(f"{key}={numbers[key]}" for key in _TOKENS if key in numbers)
    if tokens:
        yield Draft("system", f"tokens generated: model={model} {tokens} (session totals, {named} stats)",
                    f"{root}/stats", model=model, **last)
    rest = " ".join(f"{key}={value}" for key, value in numbers.items() if key not in _TOKENS)
    yield Draft("system", f"session stats: {rest}", f"{root}/stats", **last)


def parse_meta(ctx: ParseContext) -> Iterator[Draft]:
    """<session folder>/meta.json: the session's facts, model, configuration and totals."""
    meta, problem = json_document(ctx.data, "session meta.json")
    if problem is not None:
        yield problem
        return
    yield from meta_rows(meta, "json:", _subagent_of(ctx, meta))


def _subagent_of(ctx: ParseContext, meta: dict) -> str:
    """For a sub-agent folder (``<session>/agents/<agent>_<UTC>_<id8>/``): who ran it; '' for a session."""
    directory = ctx.source.directory
    if "/agents/" not in directory:
        return ""
    parent_dir, _, folder = directory.rpartition("/agents/")
    parent_meta = ctx.at(f"{parent_dir}/meta.json")
    parent = read_json(ctx, parent_meta) if parent_meta is not None else None
    parent_id = as_text(parent.get("session_id")) if parent else folder_time(parent_dir)[1]
    agent = folder.rsplit("_", 3)[0]
    return f"{agent} (session {as_text(meta.get('session_id'))}, run by the task tool of session {parent_id})"


def parse_legacy_session(ctx: ParseContext) -> Iterator[Draft]:
    """A pre-2.0 session file ``{metadata, messages}``: the metadata's rows, then every message's."""
    document, problem = json_document(ctx.data, "legacy session file")
    if problem is not None:
        yield problem
        return
    metadata = as_dict(document.get("metadata"))
    yield from meta_rows(metadata, "json:/metadata")
    messages = document.get("messages")
    if not isinstance(messages, list):
        yield bad_record("json:/messages", "messages is not an array", compact(messages))
        return
    start = _when(metadata.get("start_time"))
    if start["timestamp_ns"] is not None:
        start["timestamp_source"] = "index"
    facts = SessionFacts({**_columns(metadata), **start}, as_text(metadata.get("parent_session_id")))
    conversation = Conversation(facts, parent_copies(ctx, facts.parent) if facts.parent else Copies(), False)
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            yield from conversation.rows(message, f"json:/messages/{index}")
        else:
            yield bad_record(f"json:/messages/{index}", "message is not an object", compact(message))
    yield from conversation.finish()
