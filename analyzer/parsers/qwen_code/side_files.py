"""Qwen Code files beside the transcripts: sub-agent meta, todos, prompt logs, settings, folder trust.

* ``projects/<sanitized cwd>/subagents/<sessionId>/agent-<agentId>.meta.json``:
  ``{agentId, agentType, description, parentSessionId, toolUseId,
  parentAgentId, createdAt, status, lastUpdatedAt, lastError?,
  resolvedApprovalMode, …}``: ``subagent: <type>: <description> (…)`` at
  ``createdAt``, joined to the parent's ``agent`` call by ``toolUseId``, and
  ``permission setting: approvalMode=…`` for the mode the sub-agent ran in;
* ``todos/<sessionId>.json`` ``{planId?, todos: [{id, content, status,
  blockedBy?}], sessionId}``: one ``task:`` row per item at the file mtime;
* ``tmp/<sha256 of the project root>/logs.json`` (secondary): Gemini CLI's
  prompt log, read by ``formats.gemini_logs``; its folder name is a hash, so
  its rows carry the session id and no project path;
* ``tmp/<sha256>/shell_history`` (secondary): shell-mode commands, a JSON array
  of strings, oldest first (0.24.4), or one command per line (the Gemini CLI
  format it replaced); the last command has the file's mtime, the others no time;
* ``usage_record.jsonl`` (secondary): one line per ended or deleted session,
  ``{version, sessionId, timestamp, startTime (Unix ms), project, durationMs,
  models: {<model>: {requests, inputTokens, …}}, tools, files}``, written
  before a transcript is deleted: ``session usage: …`` and a ``tokens
  generated:`` row per model, at the record's end time;
* ``settings.json`` (user, system, system-defaults) and ``trustedFolders.json``:
  ``formats.gemini_settings`` with Qwen Code's keys.

    todos/3b8f6a4e-….json  {"todos":[{"id":"1","content":"Read cron.yaml","status":"completed"}],"sessionId":"3b8f…"}

References: npm @qwen-code/qwen-code@0.24.4 chunks/chunk-DPEB6S2R.js (agent-transcript.ts
``getAgentMetaPath``, ``writeAgentMeta``; tools/agent/agent.ts the meta written at launch);
chunks/todoWrite-QTSCFAI3.js (``getTodoFilePath``, ``writeTodosToFile``, the todo item schema);
chunks/startInteractiveUI-PJDI6SSE.js (useShellHistory.ts: ``writeHistoryFile``, ``parseLegacyHistoryFile``);
chunks/chunk-D2H63VR2.js (settings schema), chunks/chunk-BW4333PP.js (``V1_TO_V2_MIGRATION_MAP``);
chunks/chunk-DPEB6S2R.js ``getUsageHistoryPath``, ``metricsToUsageRecord``, ``prepareUsageBeforeTranscriptDeletion``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.gemini_content import compact, moment
from aitrail.analyzer.formats.gemini_logs import prompt_log_rows
from aitrail.analyzer.formats.gemini_settings import settings_file_rows, trusted_folder_rows
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, json_document
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms

from .values import as_dict, as_text

# Keys that allow, ask for or refuse tool calls, or skip confirmation: the nested layout, then the flat one.
PERMISSION_KEYS = (
    "permissions.allow", "permissions.ask", "permissions.deny", "tools.approvalMode", "tools.autoAccept",
    "tools.allowed", "tools.core", "tools.exclude", "tools.disabled", "tools.sandbox", "mcp.allowed", "mcp.excluded",
    "security.folderTrust.enabled",
    "approvalMode", "autoAccept", "allowedTools", "coreTools", "excludeTools", "allowMCPServers",
    "excludeMCPServers", "folderTrust", "sandbox",
)
# Not permissions, but they explain other rows: the default model, the auth type, edit checkpoints.
CONTEXT_KEYS = ("model.name", "security.auth.selectedType", "general.checkpointing", "model", "selectedAuthType",
                "checkpointing")
_META_FACTS = ("agentId", "status", "parentAgentId", "depth", "isolation", "executor", "lastUpdatedAt", "lastError")


# -- sub-agent meta ----------------------------------------------------------------------------------------


def parse_subagent_meta(ctx: ParseContext) -> Iterator[Draft]:
    """agent-<id>.meta.json: ``subagent:`` at its createdAt, joined to the parent's call by toolUseId."""
    meta, problem = json_document(ctx.data, "sub-agent meta")
    if problem is not None:
        yield problem
        return
    facts = " ".join(f"{key}={as_text(meta[key])}" for key in _META_FACTS if meta.get(key) not in (None, ""))
    call_id = as_text(meta.get("toolUseId"))  # the parent's ``agent`` call that launched the run
    columns = {"session_id": as_text(meta.get("parentSessionId")), "tool_use_id": call_id,
               "tool_name": "agent" if call_id else "", **moment(meta.get("createdAt"))}
    yield Draft("system", f"subagent: {as_text(meta.get('agentType'))}: {as_text(meta.get('description'))} "
                          f"({facts})", "file", **columns)
    mode = meta.get("resolvedApprovalMode")
    if mode is not None:
        yield Draft("system", f"permission setting: approvalMode={compact(mode)} (the mode sub-agent "
                              f"{as_text(meta.get('agentId'))} ran in, from its meta.json)",
                    "json:/resolvedApprovalMode", **columns)


# -- todos --------------------------------------------------------------------------------------------------


def parse_todos(ctx: ParseContext) -> Iterator[Draft]:
    """todos/<sessionId>.json: one ``task:`` row per todo item, at the file mtime."""
    plan, problem = json_document(ctx.data, "todo list")
    if problem is not None:
        yield problem
        return
    session = as_text(plan.get("sessionId")) or ctx.source.name.removesuffix(".json")
    base = {"session_id": session, **file_mtime(ctx)}
    todos = plan.get("todos")
    if not isinstance(todos, list):
        yield bad_record("json:/todos", "todos is not an array", compact(todos))
        return
    if not todos:
        yield Draft("system", "task: (no items: the list was emptied)", "json:/todos", **base)
    for index, item in enumerate(todos):
        where = f"json:/todos/{index}"
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            yield bad_record(where, "todo item without content", compact(item))
            continue
        extra = "".join(f" {key}={as_text(item[key])}" for key in ("id", "blockedBy")
                        if item.get(key) not in (None, []))
        plan_id = f" planId={as_text(plan['planId'])}" if plan.get("planId") else ""
        yield Draft("system", f"task: {item['content']} | status={as_text(item.get('status'))}{extra}{plan_id}",
                    where, **base)


# -- prompt logs --------------------------------------------------------------------------------------------


def parse_logs_json(ctx: ParseContext) -> Iterator[Draft]:
    """tmp/<sha256>/logs.json (secondary): a user row per prompt, with its session id (the folder is a hash)."""
    yield from prompt_log_rows(ctx, "")


def parse_shell_history(ctx: ParseContext) -> Iterator[Draft]:
    """tmp/<sha256>/shell_history (secondary): a user row per shell-mode command; the newest has the file mtime."""
    head = ctx.data.lstrip()[:1]
    if head == b"[":
        try:
            commands = decode_json(ctx.data)
        except (ValueError, UnicodeDecodeError) as exc:
            yield bad_file(f"shell history is not JSON: {exc}")
            return
        if not isinstance(commands, list):
            yield bad_file("shell history is not an array")
            return
        for index, command in enumerate(commands):
            last = index == len(commands) - 1
            yield Draft("user", as_text(command), f"json:/{index}",
                        **(file_mtime(ctx) if last else {"timestamp_source": "none"}))
        return
    yield from _legacy_lines(ctx)


def _legacy_lines(ctx: ParseContext) -> Iterator[Draft]:
    """One command per line (a trailing odd run of backslashes joins the next line), oldest first.

    The whole file is already held (``ctx.data``, within MAX_DOCUMENT_BYTES), so a
    joined command is never longer than the file.
    """
    previous: Draft | None = None
    for item in ctx.lines():
        if isinstance(item, RawLine):
            if not item.raw.strip():
                continue
            try:
                text = item.raw.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError as exc:
                item = bad_line(item.number, f"not UTF-8 at byte {exc.start}", item.raw)
            else:
                if previous is not None and previous.turn_type == "user" and _continues(previous.text):
                    previous.text = previous.text[:-1] + " " + text
                    continue
                item = Draft("user", text, f"line:{item.number}", timestamp_source="none")
        if previous is not None:
            yield previous
        previous = item
    if previous is not None:
        if previous.turn_type == "user":  # the file is rewritten when a command is added: the last one is timed
            when = file_mtime(ctx)
            previous.timestamp_ns, previous.timestamp_source = when["timestamp_ns"], when["timestamp_source"]
        yield previous


def _continues(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


# -- usage records -------------------------------------------------------------------------------------------


def parse_usage(ctx: ParseContext) -> Iterator[Draft]:
    """usage_record.jsonl (secondary): per session ``session usage:`` and a ``tokens generated:`` row per model."""
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            yield from _usage_rows(line.value, line.locator)
        else:
            yield line


def _usage_rows(record: dict, locator: str) -> Iterator[Draft]:
    end, start = ns_from_ms(record.get("timestamp")), ns_from_ms(record.get("startTime"))
    columns = {"session_id": as_text(record.get("sessionId")), "project_path": as_text(record.get("project")),
               "timestamp_ns": end, "timestamp_source": "record"}
    tools, files = as_dict(record.get("tools")), as_dict(record.get("files"))
    span = f"{format_timestamp(start) or compact(record.get('startTime'))} to " \
           f"{format_timestamp(end) or compact(record.get('timestamp'))}"
    yield Draft("system", f"session usage: {span} (durationMs={compact(record.get('durationMs'))}); tools "
                          f"{_numbers(tools)} byName={compact(tools.get('byName'))}; files {_numbers(files)} "
                          "(usage_record.jsonl)", locator, **columns)
    for model, usage in as_dict(record.get("models")).items():
        yield Draft("system", f"tokens generated: model={model} {_numbers(as_dict(usage))} (session totals, "
                              "usage_record.jsonl)", f"{locator}/models", model=model, **columns)


def _numbers(values: dict) -> str:
    return " ".join(f"{key}={value}" for key, value in values.items()
                    if isinstance(value, (int, float)) and not isinstance(value, bool))


# -- settings and folder trust -------------------------------------------------------------------------------


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """settings.json: ``permission setting:`` rows for allow/ask/deny rules, approval mode and tool lists."""
    yield from settings_file_rows(ctx, PERMISSION_KEYS, CONTEXT_KEYS)


def parse_trusted_folders(ctx: ParseContext) -> Iterator[Draft]:
    """trustedFolders.json: one ``permission setting:`` row per folder and its trust level."""
    yield from trusted_folder_rows(ctx)

