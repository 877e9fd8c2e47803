"""config.yaml: Hermes Agent's approval policy, its allow and deny lists, the default model.

[src] pypi hermes-agent 0.19.0 hermes_cli/config.py ``DEFAULT_CONFIG``
(``approvals: {mode: manual | smart | off, timeout, cron_mode: deny |
approve, deny: [glob], mcp_reload_confirm, destructive_slash_confirm}``,
``command_allowlist: [pattern]`` (the "always" approvals), ``model`` (a name,
or ``{default | model, provider}``), ``sessions: {auto_prune,
retention_days, write_json_snapshots}``) and tools/approval.py
(``_normalize_approval_mode``; ``approvals.mode: off`` is the config form of
``--yolo``, whose other forms, the ``HERMES_YOLO_MODE`` variable and the
per-session ``/yolo`` toggle, are on no disk). Only these keys are read: the
file may also hold provider settings with keys, which travel with it.
Every row is timed by the file's mtime.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, pointer, setting_value
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.yaml_config import mapping_rows, nothing_read, scalar_text
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

SESSION_SETTINGS = ("auto_prune", "retention_days", "vacuum_after_prune", "write_json_snapshots")


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """config.yaml: ``permission setting:`` rows for the approval policy and lists, ``model:`` and ``setting:`` rows."""
    yield from mapping_rows(ctx, lambda document, at: _config_rows(ctx, document, at))


def _config_rows(ctx: ParseContext, document: dict, at: dict) -> Iterator[Draft]:
    if document and not {"approvals", "command_allowlist", "model", "sessions"} & set(document):
        yield nothing_read(ctx, document, "approvals, command_allowlist, model, sessions")
    approvals = document.get("approvals")
    if approvals is not None and not isinstance(approvals, dict):
        yield bad_record(pointer("approvals", scheme="yaml"), f"approvals is a YAML {type(approvals).__name__}, "
                                                              "not a mapping")
    for key, value in as_dict(approvals).items():
        name = scalar_text(key) or type(key).__name__
        # deny globs are matched against terminal commands; the other approval keys apply to every gated tool
        tool = "terminal" if name == "deny" else ""
        yield from _permission_rows(f"approvals.{name}", value, ("approvals", name), {**at, "tool_name": tool})
    yield from _permission_rows("command_allowlist", document.get("command_allowlist"), ("command_allowlist",),
                                {**at, "tool_name": "terminal"})
    yield from _model_rows(document.get("model"), at)
    sessions = as_dict(document.get("sessions"))
    for key in SESSION_SETTINGS:
        value = scalar_text(sessions.get(key))
        if value is not None:
            yield Draft("system", f"setting: sessions.{key}={value} (from config.yaml, file mtime)",
                        pointer("sessions", key, scheme="yaml"), **at)


def _permission_rows(key: str, value, path: tuple, at: dict) -> Iterator[Draft]:
    """One row for a scalar setting, one per entry for a list (an allow or deny pattern each)."""
    if value is None:
        return
    if isinstance(value, list):
        for position, entry in enumerate(as_list(value)):
            text = scalar_text(entry)
            locator = pointer(*path, position, scheme="yaml")
            if text is None:
                yield bad_record(locator, f"{key} entry is a YAML {type(entry).__name__}, not text")
            else:
                yield Draft("system", f"permission setting: {key}={setting_value(text)} (from config.yaml, "
                                      "file mtime)", locator, **at)
        return
    text = scalar_text(value)
    if text is None:
        return  # a nested table under approvals: not a setting Hermes reads as one
    yield Draft("system", f"permission setting: {key}={setting_value(text)} (from config.yaml, file mtime)",
                pointer(*path, scheme="yaml"), **at)


def _model_rows(value, at: dict) -> Iterator[Draft]:
    """The default model: a name, or a table naming it (``default`` or ``model``) and its provider."""
    table = as_dict(value)
    name = scalar_text(value) if not table else scalar_text(table.get("default")) or scalar_text(table.get("model"))
    if name:
        provider = scalar_text(table.get("provider")) or ""
        yield Draft("system", f"model: {name} (provider={provider}; the default model, from config.yaml, file mtime)",
                    pointer("model", scheme="yaml"), model=name, **at)
