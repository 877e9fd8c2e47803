"""Claude Desktop settings: claude_desktop_config.json, a Cowork engine's settings.json, scheduled-tasks.json.

* ``claude_desktop_config.json`` ([obs] KAPE; research 1.2, 1.7): ``mcpServers``
  (the shape every MCP host writes: formats/mcp_settings.py gives one
  ``permission setting: mcpServers[<name>]=…`` row per server, env and header
  *names* only) and the app's preferences, read at the top level and under
  ``preferences``: the ones that grant or withhold permission
  (``bypassPermissionsGateByAccount``, ``coworkScheduledTasksEnabled``,
  ``coworkWebSearchEnabled``) as ``permission setting:`` rows, the others the
  research names as ``setting:`` rows. All at the file's mtime.
* ``local_<uuid>/.claude/settings.json`` ([obs/inf]: the VM engine's Claude Code
  settings): only ``permissions`` (``allow``, ``deny``, ``ask``, ``defaultMode``,
  ``additionalDirectories``) and ``model``; its ``env`` (what the app injects
  into the VM) is never read.
* ``scheduled-tasks.json`` ([obs] IRFlow; a community reader writes
  ``{"scheduledTasks": []}``): the task list under ``scheduledTasks`` (or
  ``tasks``, or a top-level array). One ``scheduled task: <id> (...)`` row per
  task (cron expression, prompt file, folders, enabled), timed by its
  ``createdAt`` when that is an epoch-ms number, else the file's mtime; each
  task's permission fields (``permissions``, ``chromePermissionMode``,
  ``permissionMode``) as ``permission setting: scheduledTasks[<id>].<key>=…``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, settings_value
from aitrail.analyzer.formats.json_values import document_or_row, label
from aitrail.analyzer.formats.mcp_settings import setting_rows
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .values import cowork_project, cowork_record, facts, first_string, ms_time, transcript_ids

PERMISSION_PREFERENCES = ("bypassPermissionsGateByAccount", "coworkScheduledTasksEnabled", "coworkWebSearchEnabled")
OTHER_PREFERENCES = ("coworkUserFilesPath", "coworkModelAutoFallbackByAccount", "sidebarMode", "coworkEnabled")
ENGINE_PERMISSIONS = ("allow", "deny", "ask", "defaultMode", "additionalDirectories")
TASK_FACTS = ("name", "title", "cronExpression", "cron", "filePath", "prompt", "enabled", "userSelectedFolders",
              "model", "lastRunAt", "nextRunAt", "lastFiredAt", "recurring")
TASK_PERMISSIONS = ("permissions", "chromePermissionMode", "permissionMode", "allowedTools")
MAX_TASKS = 10_000


def parse_desktop_config(ctx: ParseContext) -> Iterator[Draft]:
    """claude_desktop_config.json: MCP servers and the permission-bearing preferences, at the file's mtime."""
    document = yield from document_or_row(json_document(ctx.data, ctx.source.name))
    if document is None:
        return
    yield from setting_rows(ctx, ctx.source.name)
    when = file_mtime(ctx)
    preferences = document.get("preferences")
    for where, table in (((), document), (("preferences",), preferences if isinstance(preferences, dict) else {})):
        for key in PERMISSION_PREFERENCES + OTHER_PREFERENCES:
            if key not in table:
                continue
            prefix = "permission setting" if key in PERMISSION_PREFERENCES else "setting"
            name = ".".join((*where, key))
            yield Draft("system", f"{prefix}: {name}={settings_value(table[key], key)} (from {ctx.source.name}, "
                        "file mtime)", pointer(*where, key), **when)


def parse_engine_settings(ctx: ParseContext) -> Iterator[Draft]:
    """A Cowork engine's .claude/settings.json: its permission rules and model (never its env)."""
    document = yield from document_or_row(json_document(ctx.data, ctx.source.name))
    if document is None:
        return
    when = file_mtime(ctx)
    session_directory = ctx.source.directory.rpartition("/")[0]  # <org>/local_<uuid>, above .claude
    origin = f"{session_directory.rpartition('/')[2]}/.claude/settings.json"
    source, record = cowork_record(ctx, session_directory)
    ids = transcript_ids(record) if record is not None else []
    columns = {"session_id": ids[0][1] if ids else session_directory.rpartition("/")[2],
               "project_path": cowork_project(record, source.name)[0] if record is not None and source else ""}
    permissions = document.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        yield bad_record("json:/permissions", "permissions is not an object")
        permissions = None
    for key in ENGINE_PERMISSIONS:
        if isinstance(permissions, dict) and key in permissions:
            yield Draft("system", f"permission setting: permissions.{key}={settings_value(permissions[key], key)} "
                        f"(from {origin}, file mtime)", pointer("permissions", key), **columns, **when)
    model = label(document.get("model"))
    if model:
        yield Draft("system", f"model: {model} (the engine's settings.json)", "json:/model", model=model, **columns,
                    **when)


def _task_list(document) -> tuple[str, list] | None:
    if isinstance(document, list):
        return "", document
    if isinstance(document, dict):
        for key in ("scheduledTasks", "tasks"):
            if isinstance(document.get(key), list):
                return key, document[key]
    return None


def parse_scheduled_tasks(ctx: ParseContext) -> Iterator[Draft]:
    """scheduled-tasks.json: one row per scheduled run, and its permission fields."""
    document = yield from document_or_row(json_document(ctx.data, ctx.source.name, kind=object))
    if document is None:
        return
    found = _task_list(document)
    if found is None:
        yield bad_record("json:/", "no task list (scheduledTasks, tasks or a top-level array)")
        return
    key, tasks = found
    for number, task in enumerate(tasks[:MAX_TASKS]):
        where = (key, number) if key else (number,)
        if not isinstance(task, dict):
            yield bad_record(pointer(*where), "task is not an object")
            continue
        yield from _task_rows(ctx, task, where)


def _task_rows(ctx: ParseContext, task: dict, where: tuple) -> Iterator[Draft]:
    name = label(task.get("id")) or f"#{where[-1]}"
    created = ms_time(task.get("createdAt"))
    when = {"timestamp_ns": created, "timestamp_source": "record"} if created else file_mtime(ctx)
    columns = {"project_path": first_string(task.get("userSelectedFolders")), "model": label(task.get("model"))}
    described = facts(task, TASK_FACTS)
    yield Draft("system", f"scheduled task: {name} ({described or 'no fields recorded'}; from {ctx.source.name})",
                pointer(*where), **columns, **when)
    for key in TASK_PERMISSIONS:
        if key in task and task[key] is not None:
            yield Draft("system", f"permission setting: scheduledTasks[{name}].{key}="
                        f"{settings_value(task[key], key)} (from {ctx.source.name}, file mtime)",
                        pointer(*where, key), **columns, **file_mtime(ctx))
