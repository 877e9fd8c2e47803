"""Crush's JSON configs (user, system, a data directory's workspace config) and the global projects.json.

Config (internal/config/config.go:287-330): ``permissions.allowed_tools`` (a
tool, or ``tool:action``, run without a prompt: permission/permission.go:182-193)
and ``options.disabled_tools`` (tools hidden from the agent) give
``permission setting:`` rows; ``options.data_directory`` (where the data
directory, and so crush.db, is) and ``models.<large|small>`` give ``setting:``
rows. Nothing else is read: ``providers`` and ``mcp`` hold keys and tokens.
Every row is timed by the file's mtime (a config records no time).

projects.json (internal/projects/projects.go:14-75): ``{projects: [{path,
data_dir, last_accessed}]}``, ``last_accessed`` a Go ``time.Time`` in UTC (RFC
3339 with ``Z``): a ``project:`` row per entry at that time.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, file_mtime, pointer, settings_value
from aitrail.analyzer.formats.text import bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .parts import text_of

# (section, key, row prefix, what the value means)
CONFIG_KEYS = (
    ("permissions", "allowed_tools", "permission setting", "run without asking"),
    ("options", "disabled_tools", "permission setting", "hidden from the agent"),
    ("options", "data_directory", "setting", "where this config's data directory and crush.db are"),
)
MODEL_TYPES = ("large", "small")


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """crush.json (user, system or workspace): permission and model settings; provider and MCP entries never read."""
    document, problem = json_document(ctx.data, f"{ctx.source.name} config")
    if problem:
        yield problem
        return
    when = file_mtime(ctx)
    for section, key, prefix, meaning in CONFIG_KEYS:
        values = as_dict(document.get(section))
        if key in values:
            text = (f"{prefix}: {section}.{key}={settings_value(values[key], key)} "
                    f"(from {ctx.source.name}, file mtime: {meaning})")
            yield Draft("system", text, pointer(section, key), **when)
    models = as_dict(document.get("models"))
    for kind in MODEL_TYPES:
        if kind in models:
            text = (f"setting: models.{kind}={settings_value(models[kind], kind)} "
                    f"(from {ctx.source.name}, file mtime: the preferred {kind} model)")
            yield Draft("system", text, pointer("models", kind), model=_model_id(models[kind]), **when)


def _model_id(selected) -> str:
    model = as_dict(selected).get("model")
    return model if isinstance(model, str) else ""


def parse_projects(ctx: ParseContext) -> Iterator[Draft]:
    """projects.json: a ``project:`` row per project Crush was started in, with its data directory."""
    document, problem = json_document(ctx.data, "projects.json")
    if problem:
        yield problem
        return
    projects = document.get("projects")
    if not isinstance(projects, list):
        yield bad_record(pointer("projects"), "no projects array", text_of(projects))
        return
    for position, entry in enumerate(projects):
        where = pointer("projects", position)
        item = as_dict(entry)
        path = item.get("path")
        if not isinstance(path, str) or not path:
            yield bad_record(where, "project without a path", text_of(entry))
            continue
        stamp = text_of(item.get("last_accessed"))
        when = ns_from_iso(stamp)  # written in UTC with Z; a time without a zone stays text only
        text = (f"project: {path} (data directory {excerpt(text_of(item.get('data_dir')), 4096)}; last accessed "
                f"{excerpt(stamp, 80) or 'not recorded'})")
        yield Draft("system", text, where, project_path=path, timestamp_ns=when,
                    timestamp_source="record" if when is not None else "none")
