"""Cursor CLI standing state and side records: cli-config.json, permissions.json, prompt_history.json, agent-tools.

* ``cli-config.json`` (and the ``.bad`` copy the CLI set aside): one
  ``permission setting: permissions.<list>=<JSON entry> (from <file>, file mtime)`` row
  per allow/deny entry (``[]`` for an empty list), ``approvalMode`` likewise, and
  ``model: <id>`` for the selected model. Only these keys are read: ``authInfo``
  (account email, user id) is never looked at, so it can reach no row.
* ``permissions.json`` (JSONC, shared with the editor): one ``permission setting:``
  row per top-level key (``mcpAllowlist``, ``terminalAllowlist``, ``autoRun``, ...).
* ``prompt_history.json`` (secondary): one ``user`` row per prompt, written as the
  transcripts write it so a prompt they hold is dropped and one only here is kept.
* ``agent-tools/<name>.txt``: the file is one ``tool_result`` row (its stem as
  tool_use_id), never a user row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.text import bad_file, bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .places import parts_of, project_name

PERMISSION_LISTS = ("allow", "deny", "ask")
APPROVAL_KEYS = ("approvalMode",)


def _origin(ctx: ParseContext) -> str:
    return f"(from {ctx.source.path}, file mtime)"


def parse_cli_config(ctx: ParseContext) -> Iterator[Draft]:
    """cli-config.json: ``permission setting:`` rows for permissions and approvalMode, a ``model:`` row.

    All at the file's mtime; ``authInfo`` is never read.
    """
    document, problem = json_document(ctx.data, "cli-config.json", dict)
    if problem is not None:
        yield problem
        return
    origin = _origin(ctx)
    permissions = document.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        yield bad_record("json:/permissions", f"permissions is a JSON {type(permissions).__name__}, not an object")
    for key in PERMISSION_LISTS if isinstance(permissions, dict) else ():
        if key in permissions:
            yield from _permission_list(ctx, f"permissions.{key}", permissions[key], ("permissions", key), origin)
    for key in APPROVAL_KEYS:
        if key in document:
            yield Draft("system", f"permission setting: {key}={setting_value(document[key])} {origin}",
                        pointer(key), **file_mtime(ctx))
    yield from _model_row(ctx, document.get("model"), origin)


def _permission_list(ctx: ParseContext, name: str, entries, path: tuple, origin: str) -> Iterator[Draft]:
    if not isinstance(entries, list) or not entries:
        yield Draft("system", f"permission setting: {name}={setting_value(entries)} {origin}", pointer(*path),
                    **file_mtime(ctx))
        return
    for index, entry in enumerate(entries):
        yield Draft("system", f"permission setting: {name}={setting_value(entry)} {origin}",
                    pointer(*path, index), **file_mtime(ctx))


def _model_row(ctx: ParseContext, model, origin: str) -> Iterator[Draft]:
    if isinstance(model, dict):
        model_id = next((model[key] for key in ("modelId", "id", "name") if isinstance(model.get(key), str)), "")
    else:
        model_id = model if isinstance(model, str) else ""
    if model_id:
        yield Draft("system", f"model: {model_id} (selected in {ctx.source.path}, file mtime)", "json:/model",
                    model=model_id,
                    **file_mtime(ctx))
    elif model is not None:
        # the value is not quoted: an unknown shape could hold anything, identity included
        yield bad_record("json:/model", f"model is a JSON {type(model).__name__} that names no model id")


def parse_editor_permissions(ctx: ParseContext) -> Iterator[Draft]:
    """~/.cursor/permissions.json (JSONC): one ``permission setting:`` row per top-level key, at the file's mtime."""
    document, problem = json_document(ctx.data, "permissions.json", dict, loads=load_jsonc)
    if problem is not None:
        yield problem
        return
    origin = _origin(ctx)
    for key, value in document.items():
        yield Draft("system", f"permission setting: {key}={setting_value(value)} {origin}", pointer(key),
                    **file_mtime(ctx))
    if not document:
        yield Draft("system", f"permission setting: {{}} {origin}", "file", **file_mtime(ctx))


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """prompt_history.json (secondary): a ``user`` row per prompt, no time (the file keeps none), no session."""
    document, problem = json_document(ctx.data, "prompt_history.json", list)
    if problem is not None:
        yield problem
        return
    for index, prompt in enumerate(document):
        yield _prompt_row(pointer(index), prompt)


def _prompt_row(where: str, prompt) -> Draft:
    """One entry: a prompt as the transcripts' user rows read (stripped), else the row saying what it is."""
    if not isinstance(prompt, str):
        return bad_record(where, f"a JSON {type(prompt).__name__}, not a prompt", setting_value(prompt))
    if not prompt.strip():
        return Draft("system", "empty prompt", where, timestamp_source="none")
    return Draft("user", prompt.strip(), where, timestamp_source="none")


def parse_agent_tool(ctx: ParseContext) -> Iterator[Draft]:
    """projects/<p>/agent-tools/<name>.txt: the captured output of one tool call, one ``tool_result`` row.

    The file keeps no session and no call id the transcripts share ([obs]); its stem is
    the tool_use_id, its mtime the time.
    """
    try:
        text = ctx.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield bad_file(f"tool output is not UTF-8 at byte {exc.start}")
        return
    stem = parts_of(ctx.source.path)[-1].removesuffix(".txt")
    yield Draft("tool_result", text, "file", tool_use_id=stem,
                project_path="", session_id="", **file_mtime(ctx), extra={"project": project_name(ctx.source.path)})
