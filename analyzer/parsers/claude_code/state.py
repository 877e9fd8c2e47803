"""Claude Code side files: ~/.claude.json, settings, todos, tasks, plans, sub-agent sidecars.

None of these records carries a time of its own, so every row is at the
file's modification time (``file-mtime``): the state was so when the file
was last written. Rows are written the same way for a live file and its
backups (the source column names the file), so that a backup's row equal to
the live one deduplicates and only what changed stays.

Sample records::

    settings.json   {"permissions":{"allow":["Bash(git status:*)"],"deny":["Read(./.env)"],"defaultMode":"acceptEdits"}}
    ~/.claude.json  {"projects":{"/home/dev/src/acme-api":{"allowedTools":["Bash(npm test)"],"lastSessionId":"4f…"}}}
    todos/<session>-agent-<agent>.json  [{"content":"Run the login tests","status":"pending","activeForm":"…"}]
    tasks/<list>/2.json  {"id":"2","subject":"Add regression test","status":"pending","blocks":[],"blockedBy":["1"]}
    subagents/agent-a3f9c2e1.meta.json  {"toolUseId":"toolu_01Zz…","agentType":"Explore","description":"…"}

References: research/formats-cli-agents.md 1.7, 1.8 (docs code.claude.com settings; todos and tasks
[obs] tony/agentgrep@51dbe54014 store_catalog/claude.py); anthropics/claude-agent-sdk-python@e8bde60164
src/claude_agent_sdk/_internal/sessions.py:1415-1480 (meta sidecar toolUseId, parentAgentId),
session_resume.py:326-380 (~/.claude.json); anthropics/claude-code@5cfc0a1905 CHANGELOG.md:2689,4359 (plans).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, setting_value, settings_value
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .history import (
    legacy_prompts,
    load_state,
    pointer,
    projects,
)

PERMISSION_KEYS = ("allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode",
                   "disableAutoMode")
# Other settings an examiner needs (retention, model, where plans and memory go, hooks that run);
# env and apiKeyHelper may hold secrets and are never read.
OTHER_SETTINGS = ("model", "cleanupPeriodDays", "plansDirectory", "autoMemoryDirectory")
_TODO_NAME = re.compile(r"^(?P<session>.+?)-agent-(?P<agent>.+)\.json$")


def _json_document(ctx: ParseContext, kind: type, what: str) -> tuple[object, Draft | None]:
    return json_document(ctx.data, what, kind)


# -- settings --------------------------------------------------------------------------------------


def _settings_label(ctx: ParseContext) -> str:
    """settings.json, settings.local.json, managed-settings.json or managed-settings.d/<name>."""
    directory = ctx.source.directory.rsplit("/", 1)[-1]
    return f"{directory}/{ctx.source.name}" if directory == "managed-settings.d" else ctx.source.name


def parse_settings(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.settings.v1: ``permission setting:`` rows for permissions.*, ``setting:`` rows for the rest."""
    document, problem = _json_document(ctx, dict, ctx.source.name)
    if problem:
        yield problem
        return
    label, moment = _settings_label(ctx), file_mtime(ctx)
    permissions = document.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        yield bad_record("json:/permissions", f"permissions is a JSON {type(permissions).__name__}, not an object")
    for key in PERMISSION_KEYS if isinstance(permissions, dict) else ():
        if key in permissions:
            yield Draft("system", f"permission setting: permissions.{key}={setting_value(permissions[key])} "
                                  f"(from {label}, file mtime)", f"json:/permissions/{key}", **moment)
    for key in OTHER_SETTINGS:
        if key in document:
            yield Draft("system", f"setting: {key}={settings_value(document[key], key)} (from {label}, file mtime)",
                        f"json:/{key}", **moment)
    hooks = document.get("hooks")
    if isinstance(hooks, dict) and hooks:
        yield Draft("system", f"setting: hooks on {setting_value(sorted(hooks))} (from {label}, file mtime; "
                              "the commands are in the file)", "json:/hooks", **moment)


# -- ~/.claude.json --------------------------------------------------------------------------------

LIVE_STATE_STORES = ("global_state", "global_state_config_dir")


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.global_state.v1: project map, allowedTools, 1.0.x prompt history of ~/.claude.json.

    A backup (any name but ``.claude.json``) gives only the rows the live
    file(s) of the same location do not hold, so what stays is what changed.
    """
    document, problem = load_state(ctx)
    if document is None:
        yield problem
        return
    rows = _state_rows(document, file_mtime(ctx))
    if ctx.source.name != ".claude.json":
        live = ctx.cached(("claude-code-live-state", ctx.source.location), lambda: _live_rows(ctx))
        rows = (row for row in rows if row.text.startswith("parser:") or _same_as(row) not in live)
    yield from rows


def _same_as(row: Draft) -> bytes:
    """What a backup's row is compared by: a 16-byte digest of its turn, text and project.

    A digest, not the texts: the live rows are kept for the worker's whole run,
    and a live file within the document limits can give a million of them.
    """
    key = "\0".join((row.turn_type, row.text, row.project_path)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(key).digest()[:16]


def _live_rows(ctx: ParseContext) -> set:
    """What the live ~/.claude.json (and a CLAUDE_CONFIG_DIR one) of this location give (``_same_as`` digests)."""
    found = set()
    for store in LIVE_STATE_STORES:
        for source in ctx.related(store):
            try:
                document = decode_json(ctx.read(source))
            except (ValueError, UnicodeDecodeError, MemberUnreadable):
                continue
            if isinstance(document, dict):
                found.update(_same_as(row) for row in _state_rows(document, {}))
    return found


def _state_rows(document: dict, moment: dict) -> Iterator[Draft]:
    mapping, problem = projects(document)
    if problem:
        yield problem
    if "bypassPermissionsModeAccepted" in document:
        yield Draft("system", "permission setting: bypassPermissionsModeAccepted="
                              f"{setting_value(document['bypassPermissionsModeAccepted'])} "
                              "(from .claude.json, file mtime)",
                    pointer("bypassPermissionsModeAccepted"), **moment)
    for path, project in mapping.items():
        where = pointer("projects", path)
        if not isinstance(project, dict):
            yield bad_record(where, "project entry is not an object", json.dumps(project, ensure_ascii=False))
            continue
        facts = [f"{key}={setting_value(project[key])}" for key in ("lastSessionId", "hasTrustDialogAccepted")
                 if key in project]
        text = f"project: {path} (listed in .claude.json" + (f"; {' '.join(facts)})" if facts else ")")
        yield Draft("system", text, where, project_path=path, **moment)
        tools = project.get("allowedTools")
        if tools:  # "don't ask again" approvals of 1.0.x; an empty list says nothing
            yield Draft("system", f"permission setting: allowedTools={setting_value(tools)} (from .claude.json projects"
                                  f"[{path}], file mtime)", f"{where}/allowedTools", project_path=path, **moment)
    yield from legacy_prompts(mapping)


# -- todos, tasks, plans -----------------------------------------------------------------------------


def _todo_session(name: str) -> str:
    """todos/<sessionId>-agent-<agentId>.json: the main thread's agentId is its sessionId."""
    match = _TODO_NAME.match(name)
    if not match:
        return name.removesuffix(".json")
    session, agent = match.group("session"), match.group("agent")
    return session if agent == session else f"{session}/agent-{agent}"


def parse_todos(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.todos.v1: one ``task:`` row per TodoWrite item (current and older shapes)."""
    items, problem = _json_document(ctx, list, ctx.source.name)
    if problem:
        yield problem
        return
    base = {"session_id": _todo_session(ctx.source.name), **file_mtime(ctx)}
    if not items:
        yield Draft("system", "task: (no items; TodoWrite empties the list when every item is done)", "file", **base)
    for position, item in enumerate(items):
        where = f"json:/{position}"
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            yield bad_record(where, "todo item without content", json.dumps(item, ensure_ascii=False))
            continue
        extra = "".join(f" {key}={_scalar(item[key])}" for key in ("priority", "id") if key in item)
        status = _scalar(item.get("status", ""))
        yield Draft("system", f"task: {item['content']} | status={status}{extra}", where, **base)


def _scalar(value) -> str:
    return value if isinstance(value, str) else setting_value(value)


def parse_tasks(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.tasks.v1: one ``task:`` row per tasks/<listId>/<id>.json (TaskCreate/TaskUpdate)."""
    task, problem = _json_document(ctx, dict, ctx.source.name)
    if problem:
        yield problem
        return
    if not isinstance(task.get("subject"), str):
        yield bad_record("json:/", "task without a subject", json.dumps(task, ensure_ascii=False))
        return
    fields = " ".join(f"{key}={_scalar(task[key])}" for key in ("id", "status", "owner", "blocks", "blockedBy")
                      if key in task)
    text = f"task: {task['subject']} | {fields}"
    if isinstance(task.get("description"), str) and task["description"]:
        text += f" | {task['description']}"
    list_id = ctx.source.directory.rsplit("/", 1)[-1]
    yield Draft("system", text, "file", session_id=list_id, **file_mtime(ctx))


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.plan.v1: one ``task: plan <slug> | <markdown>`` row per plans/<slug>.md."""
    text = ctx.data.decode("utf-8", "replace")
    slug = ctx.source.name.removesuffix(".md")
    yield Draft("system", f"task: plan {slug} | {text}", "file", **file_mtime(ctx))


# -- sub-agent sidecar --------------------------------------------------------------------------------


def parse_subagent_meta(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.subagent_meta.v1: the link from a sub-agent run to the tool call that started it."""
    meta, problem = _json_document(ctx, dict, ctx.source.name)
    if problem:
        yield problem
        return
    agent = ctx.source.name.removesuffix(".meta.json").removeprefix("agent-")
    parts = ctx.source.path.split("/")
    session = parts[parts.index("subagents") - 1] if "subagents" in parts[1:] else ""
    call = meta.get("toolUseId") if isinstance(meta.get("toolUseId"), str) else ""
    facts = [f"{key}={_scalar(meta[key])}" for key in ("agentType", "description", "parentAgentId") if key in meta]
    started = f"started by tool call {call}" if call else "with no toolUseId recorded"
    text = f"subagent: agent-{agent} {started}" + (f" ({', '.join(facts)})" if facts else "")
    yield Draft("system", text, "file", session_id=f"{session}/agent-{agent}", tool_use_id=call, **file_mtime(ctx))
