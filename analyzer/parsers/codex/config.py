"""Codex standing permission state: config.toml, requirements.toml and the rules files.

* ``config.toml`` (and ``<profile>.config.toml``, ``managed_config.toml``)::

      model = "gpt-5.5-codex"
      approval_policy = "on-request"
      sandbox_mode = "workspace-write"
      [sandbox_workspace_write]
      network_access = false
      [projects."/home/dev/src/acme-api"]
      trust_level = "trusted"

* ``requirements.toml``: admin constraints (``allowed_approval_policies = [...]`` ...);
* ``rules/*.rules``: Starlark calls appended when the user chooses "always allow"::

      prefix_rule(pattern=["git", "status"], decision="allow")
      network_rule(host="pypi.org", protocol="https", decision="allow")

Values of keys the parser does not read (MCP servers may hold tokens in ``env``)
are never copied into the timeline; only their names are listed.

References: openai/codex@ed6e5cf919 codex-rs/config/src/config_toml.rs:159,185,311,406,550;
codex-rs/protocol/src/protocol.rs:754-800; codex-rs/protocol/src/config_types.rs:82-96;
codex-rs/core/src/exec_policy.rs:49-51,758; codex-rs/execpolicy/src/amend.rs:65-125;
openai/codex@b98130406a codex-rs/core/src/config_loader/mod.rs:74-108
(research/formats-cli-agents.md 2.7).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value, settings_value
from aitrail.analyzer.formats.text import bad_file, bad_line, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_toml
from aitrail.analyzer.view.rows import Draft

PERMISSION_KEYS = ("approval_policy", "sandbox_mode", "approvals_reviewer", "default_permissions")
PERMISSION_TABLES = ("sandbox_workspace_write", "permissions")
PROFILE_KEYS = ("approval_policy", "sandbox_mode")
SETTING_TABLES = ("history",)  # not permission state, but says why history.jsonl is empty or trimmed
RULE_CALLS = ("prefix_rule", "network_rule")


def _key(key: str) -> str:
    """A TOML key as TOML would write it: bare when it can be, quoted otherwise."""
    return key if key and all(char.isalnum() or char in "-_" for char in key) else json.dumps(key)


def _read_toml(ctx: ParseContext) -> tuple[dict | None, str]:
    try:  # imported only here (about 30 ms): most bundles hold no config.toml
        import tomllib  # noqa: F401 - Python 3.11+; the analyzer's other parsers run on 3.10 too
    except ImportError:  # pragma: no cover - exercised only on 3.10
        return None, "TOML cannot be read on this Python (3.11 or later is needed)"
    try:
        return decode_toml(ctx.config_data().decode("utf-8")), ""
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 at byte {exc.start}"
    except (ValueError, RecursionError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        return None, f"not TOML: {exc}"


# -- config.toml ----------------------------------------------------------------------------


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """config.toml: ``model:`` and ``permission setting:`` rows for the keys and tables that grant or choose.

    Project trust levels and profiles are read the same way; every row takes the file's
    mtime, and the keys not read are named in one ``config: other keys set`` row.
    """
    document, problem = _read_toml(ctx)
    if document is None:
        yield bad_file(f"{ctx.source.name}: {problem}")
        return
    name = ctx.source.name
    moment = file_mtime(ctx)
    read: set[str] = set()
    if isinstance(document.get("model"), str):
        read.add("model")
        yield Draft("system", f"model: {document['model']} (default in {name})", pointer("model", scheme="toml"),
                    model=document["model"], **moment)
    for key in PERMISSION_KEYS:
        if key in document:
            read.add(key)
            yield Draft("system", f"permission setting: {key}={setting_value(document[key])} (from {name})",
                        pointer(key, scheme="toml"), **moment)
    for table in PERMISSION_TABLES + SETTING_TABLES:
        if isinstance(document.get(table), dict):
            read.add(table)
            prefix = "permission setting" if table in PERMISSION_TABLES else "setting"
            for key, value in document[table].items():
                yield Draft("system", f"{prefix}: {table}.{_key(key)}={settings_value(value, _key(key))} (from {name})",
                            pointer(table, key, scheme="toml"), **moment)
    if isinstance(document.get("projects"), dict):
        read.add("projects")
        yield from _project_rows(document["projects"], name, moment)
    if isinstance(document.get("profiles"), dict):
        read.add("profiles")
        yield from _profile_rows(document["profiles"], name, moment)
    others = [key for key in document if key not in read]
    if others or not document:
        text = f"config: other keys set, not read: {', '.join(others)}" if others else "config: no keys set"
        yield Draft("system", f"{text} (in {name})", "file", **moment)


def _project_rows(projects: dict, name: str, moment: dict) -> Iterator[Draft]:
    for path, table in projects.items():
        if not isinstance(table, dict):
            continue
        for key in ("trust_level",):
            if key in table:
                yield Draft("system", f"permission setting: projects.{_key(path)}.{key}={setting_value(table[key])} "
                                      f"(from {name})", pointer("projects", path, key, scheme="toml"),
                            project_path=path, **moment)


def _profile_rows(profiles: dict, name: str, moment: dict) -> Iterator[Draft]:
    for profile, table in profiles.items():
        if not isinstance(table, dict):
            continue
        if isinstance(table.get("model"), str):
            yield Draft("system", f"model: {table['model']} (profile {profile} in {name})",
                        pointer("profiles", profile, "model", scheme="toml"), model=table["model"], **moment)
        for key in PROFILE_KEYS:
            if key in table:
                yield Draft("system", f"permission setting: profiles.{_key(profile)}.{key}={setting_value(table[key])} "
                                      f"(from {name})", pointer("profiles", profile, key, scheme="toml"), **moment)


# -- requirements.toml ------------------------------------------------------------------------


def _leaves(table: dict, keys: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    for key, value in table.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, keys + (key,))
        else:
            yield keys + (key,), value


def parse_requirements(ctx: ParseContext) -> Iterator[Draft]:
    """Every leaf of requirements.toml is an admin constraint on permissions: one row each."""
    document, problem = _read_toml(ctx)
    if document is None:
        yield bad_file(f"{ctx.source.name}: {problem}")
        return
    moment = file_mtime(ctx)
    if not document:
        yield Draft("system", f"config: no keys set (in {ctx.source.name})", "file", **moment)
    for keys, value in _leaves(document):
        dotted = ".".join(_key(key) for key in keys)
        yield Draft("system", f"permission setting: {dotted}={settings_value(value, dotted)} (from {ctx.source.name})",
                    pointer(*keys, scheme="toml"), **moment)


# -- rules/*.rules ----------------------------------------------------------------------------


def _statements(text: str) -> tuple[list[tuple[int, ast.stmt, str]], list[tuple[int, str]]]:
    """(line, statement, the text its offsets refer to) per statement, and (line, reason) per bad line.

    The whole file is parsed first (a call may span lines); if that fails, each
    line is parsed alone so that one damaged line does not hide the others.
    Nothing is ever evaluated: only literals are read from the syntax tree.
    """
    try:
        return [(node.lineno, node, text) for node in ast.parse(text).body], []
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    found, problems = [], []
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            found += [(number, node, stripped) for node in ast.parse(stripped).body]
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            problems.append((number, f"not a rule: {type(exc).__name__}: {exc}"))
    return found, problems


def _argument(node: ast.expr, source: str) -> str:
    try:
        return setting_value(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return ast.get_source_segment(source, node) or ast.dump(node)


def rule_text(node: ast.stmt, source: str) -> str | None:
    """``prefix_rule pattern=["git","status"] decision="allow"`` for a known rule call; None otherwise."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id not in RULE_CALLS:
        return None
    parts = [call.func.id]
    parts += [f"arg{position}={_argument(arg, source)}" for position, arg in enumerate(call.args)]
    parts += [f"{keyword.arg or '**'}={_argument(keyword.value, source)}" for keyword in call.keywords]
    return " ".join(parts)


def parse_rules(ctx: ParseContext) -> Iterator[Draft]:
    """rules/*.rules (Starlark): one ``permission setting:`` row per ``prefix_rule`` statement.

    A statement that is not a rule is named as not read; a file with only comments says so.
    """
    try:
        text = ctx.config_data().decode("utf-8")
    except UnicodeDecodeError as exc:
        yield bad_file(f"{ctx.source.name}: not UTF-8 at byte {exc.start}")
        return
    lines = text.split("\n")
    moment = file_mtime(ctx)
    origin = f"rules/{ctx.source.name}"
    statements, problems = _statements(text)
    for number, reason in problems:
        yield bad_line(number, reason, lines[number - 1].encode())
    for number, node, source in statements:
        rule = rule_text(node, source)
        if rule is not None:
            yield Draft("system", f"permission setting: {rule} (from {origin})", f"line:{number}", **moment)
        else:
            statement = ast.get_source_segment(source, node) or ast.dump(node)
            yield Draft("system", f"rules: statement not read: {excerpt(statement)}", f"line:{number}", **moment)
    if not statements and not problems and ctx.data.strip():
        yield Draft("system", f"rules: no rules in {origin} (only comments or blank text)", "file", **moment)
