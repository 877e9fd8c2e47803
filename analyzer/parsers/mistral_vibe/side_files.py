"""Mistral Vibe files beside the sessions: prompt history, configuration, folder trust.

* ``vibehistory`` (secondary): the last 100 prompts, one JSON string per line,
  oldest first, rewritten through a temporary file on each prompt; a line that
  is not JSON is the prompt as written (as Vibe reads it). No times: the last
  line has the file's mtime, the others none.
* ``config.toml`` (``~/.vibe``; project ``.vibe/config.toml`` is not
  collected): ``permission setting:`` rows for ``bypass_tool_permissions``,
  ``enabled_tools``/``disabled_tools`` and each ``[tools.<name>]``
  ``permission`` (``always``/``ask``/``never``), ``allowlist`` (where an
  "always allow" answer is appended), ``denylist`` and ``sensitive_patterns``;
  ``setting:`` rows for ``active_model`` and ``session_logging`` (where the
  sessions are written); at the file's mtime.
* ``trusted_folders.toml`` ``{trusted = [...], untrusted = [...]}``: one
  ``permission setting:`` row per folder, with the folder as project_path.

    [tools.bash]
    permission = "ask"
    allowlist = ["git status", "pytest"]

References: mistralai/mistral-vibe@ac8f1a09fd (PyPI mistral-vibe 2.18.4) vibe/cli/history_manager.py
``_load_history``, ``_save_history``; vibe/core/config/_settings.py ``VibeConfig``,
``add_tool_allowlist_patterns``; vibe/core/tools/base.py ``BaseToolConfig``; vibe/core/config/models.py
``SessionLoggingConfig``; vibe/core/trusted_folders.py ``TrustedFoldersManager._load``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.idioms import as_dict, escape_key, file_mtime, settings_value
from aitrail.analyzer.formats.text import bad_file, bad_line
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.decode import decode_json, decode_toml
from aitrail.analyzer.view.rows import Draft

from .session import as_text, compact

_PERMISSION_KEYS = ("bypass_tool_permissions", "enabled_tools", "disabled_tools", "enabled_agents", "disabled_agents")
_TOOL_KEYS = ("permission", "allowlist", "denylist", "sensitive_patterns")
_CONTEXT_KEYS = ("active_model", "session_logging")


def parse_history(ctx: ParseContext) -> Iterator[Draft]:
    """The vibehistory file (secondary): a user row per prompt, one line behind (only the last has a time)."""
    previous: Draft | None = None
    for item in ctx.lines():
        row = _prompt(item) if isinstance(item, RawLine) else item
        if row is None:
            continue
        if previous is not None:
            yield previous
        previous = row
    if previous is not None:
        if previous.turn_type == "user":  # rewritten whole on each prompt, newest last
            when = file_mtime(ctx)
            previous.timestamp_ns, previous.timestamp_source = when["timestamp_ns"], when["timestamp_source"]
        yield previous


def _prompt(item: RawLine) -> Draft | None:
    if not item.raw.strip():
        return None
    try:
        text = item.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return bad_line(item.number, f"not UTF-8 at byte {exc.start}", item.raw)
    try:
        value = decode_json(text)
    except ValueError:
        value = text  # Vibe keeps a line that is not JSON as the prompt itself
    return Draft("user", as_text(value), f"line:{item.number}", timestamp_source="none")


def _toml(ctx: ParseContext, what: str) -> tuple[dict | None, Draft | None]:
    try:
        return decode_toml(ctx.config_data().decode("utf-8-sig")), None
    except UnicodeDecodeError as exc:
        return None, bad_file(f"{what} is not UTF-8 at byte {exc.start}")
    except ValueError as exc:  # TOMLDecodeError, or nested too deep
        return None, bad_file(f"{what} is not valid TOML: {exc}")


def _toml_rows(ctx: ParseContext, what: str, rows: Callable[[dict, str], Iterator[Draft]]) -> Iterator[Draft]:
    """The ``rows`` of a TOML file read whole (given it and the rows' origin text), or why it cannot be read."""
    document, problem = _toml(ctx, what)
    if problem is not None:
        yield problem
        return
    yield from rows(document, f"(from {ctx.source.path}, file mtime)")


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """config.toml: tool permissions and lists, the permission bypass, the model and the session-log settings."""
    yield from _toml_rows(ctx, "config.toml", lambda config, origin: _config_rows(ctx, config, origin))


def _config_rows(ctx: ParseContext, config: dict, origin: str) -> Iterator[Draft]:
    rows = [*_config_permissions(config, origin)]
    if not rows:  # the defaults apply (every tool asks), which is evidence too
        rows.append(Draft("system", f"permission setting: (none set) {origin}", "file"))
    for row in rows:
        yield Draft(row.turn_type, row.text, row.locator, tool_name=row.tool_name, **file_mtime(ctx))
    for key in _CONTEXT_KEYS:
        if key in config:
            yield Draft("system", f"setting: {key}={settings_value(config[key], key)} {origin}", f"toml:/{key}",
                        **file_mtime(ctx))


def _config_permissions(config: dict, origin: str) -> Iterator[Draft]:
    for key in _PERMISSION_KEYS:
        if key in config:
            yield Draft("system", f"permission setting: {key}={settings_value(config[key], key)} {origin}",
                        f"toml:/{key}")
    for name, tool in as_dict(config.get("tools")).items():
        for key in _TOOL_KEYS:
            if key in as_dict(tool):
                yield Draft("system", f"permission setting: tools.{name}.{key}={compact(tool[key])} {origin}",
                            f"toml:/tools/{escape_key(name)}/{key}", tool_name=name)


def parse_trusted_folders(ctx: ParseContext) -> Iterator[Draft]:
    """trusted_folders.toml: one ``permission setting:`` row per trusted or untrusted folder."""
    yield from _toml_rows(ctx, "trusted_folders.toml", lambda document, origin: _trust_rows(ctx, document, origin))


def _trust_rows(ctx: ParseContext, document: dict, origin: str) -> Iterator[Draft]:
    if not document.get("trusted") and not document.get("untrusted"):
        yield Draft("system", f"permission setting: (no trusted or untrusted folder) {origin}", "file",
                    **file_mtime(ctx))
    for key in ("trusted", "untrusted"):
        folders = document.get(key)
        for index, folder in enumerate(folders if isinstance(folders, list) else [folders] if folders else []):
            yield Draft("system", f"permission setting: {key}[{index}]={compact(folder)} {origin}",
                        f"toml:/{key}/{index}", project_path=as_text(folder), **file_mtime(ctx))
