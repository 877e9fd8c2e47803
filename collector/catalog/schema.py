"""The strict schema of a catalog file (documented field by field in docs/catalog.md).

A catalog file is data about one agent: where its stores live, what each
holds, which parser reads it, and what must never be collected. Unknown keys,
wrong types and broken cross-field rules are errors, each naming the file, the
entry and the key, as UAC's artifact validator does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from aitrail.collector.catalog.globs import GlobError, validate_glob

SCHEMA_VERSION = 1

ROLES = (
    "transcript",       # conversation records: prompts, replies, tool calls
    "subagent_transcript",
    "prompt_history",   # typed prompts, often across sessions
    "session_index",    # lists of sessions or tasks with titles and times
    "task_list",        # todos, tasks, task histories
    "plan",
    "settings",         # configuration, incl. model choice
    "permission_state",  # allow/deny lists, auto-approval, trust
    "state_db",         # application key/value or SQLite state
    "log",              # output-channel and debug logs
    "usage",            # token and cost records
    "memory",           # memories and instruction files the agent reads
    "tool_output",      # spilled tool results
    "project_map",      # files that map an id back to a project path
    "checkpoint",       # file snapshots and saved chats
    "credential",       # secrets: catalogued, never read
)

FORMATS = (
    "jsonl", "jsonl_zst", "json", "sqlite", "text", "markdown", "log",
    "toml", "yaml", "starlark", "protobuf", "binary",
)

ORIGINS = ("primary", "secondary", "documentary")
COLLECT_POLICIES = ("always", "never")
# whether the store's format keeps the results of the tool calls it records (docs/catalog.md): where it
# never does, a call without a result is the format's absence, not damage, and gives no parser: row
TOOL_RESULTS = ("recorded", "not_recorded")
SCOPES = ("home", "system")
MACOS_PRIVATE_LINKS = frozenset({"tmp", "var"})  # system heads macOS links into /private

AGENT_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
LOCAL_ID = re.compile(r"^[a-z][a-z0-9_]*$")
PARSER_ID = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.v([1-9][0-9]*)$")
ENV_VAR = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class CatalogError(ValueError):
    """One or more schema violations, each a complete sentence."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class EnvOverride:
    """``$var/join`` is one more place the root lives (live collection only)."""

    var: str
    join: str = ""


@dataclass(frozen=True)
class SettingOverride:
    """A JSON(C) settings file under another root names this root's directory."""

    root: str
    file: str
    key: str


@dataclass(frozen=True)
class Absence:
    """What some versions of an agent keep nowhere on disk, and why (the summary reports it, never 'no activity')."""

    what: str
    versions: str
    reason: str


@dataclass(frozen=True)
class Root:
    """A directory in which some of an agent's stores live (docs/catalog.md, Roots)."""
    id: str
    description: str
    paths: tuple[str, ...]
    scope: str = "home"
    env: tuple[EnvOverride, ...] = ()
    settings: tuple[SettingOverride, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Store:
    """One store: files of one role and format under a root (docs/catalog.md, Stores)."""
    id: str
    root: str
    include: tuple[str, ...]
    role: str
    format: str
    description: str
    parser: str | None = None
    origin: str = "primary"
    collect: str = "always"
    exclude: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    tool_results: str = "recorded"
    # SQLite tables of a collected database that hold credentials (tokens, API keys) beside the evidence:
    # files.jsonl names them for every file of the store; no parser reads them (docs/catalog.md)
    credential_tables: tuple[str, ...] = ()
    # why a documentary store cannot be read at all (encrypted, a format with no public schema): files.jsonl
    # carries the reason, and the summary and the report name every such file with it (docs/catalog.md)
    opaque: str | None = None


@dataclass(frozen=True)
class AgentCatalog:
    """One agent's catalog file, validated."""
    agent: str
    name: str
    summary: str
    docs: str
    roots: tuple[Root, ...]
    stores: tuple[Store, ...]
    references: tuple[str, ...] = ()
    # what a version of the agent keeps nowhere on disk (threads on a server): a known absence, never "no activity"
    absences: tuple[Absence, ...] = ()
    schema_version: int = SCHEMA_VERSION
    source_file: str = field(default="", compare=False)

    @property
    def module_name(self) -> str:
        """Python module name of the agent's parser (``some-agent`` -> ``some_agent``)."""
        return self.agent.replace("-", "_")

    def root(self, root_id: str) -> Root:
        """The root with this id."""
        return next(root for root in self.roots if root.id == root_id)

    def store(self, store_id: str) -> Store:
        """The store with this (local) id."""
        return next(store for store in self.stores if store.id == store_id)

    def qualified(self, store: Store) -> str:
        """The bundle-wide store id, ``<agent>.<store>``."""
        return f"{self.agent}.{store.id}"


# --- strict reading -------------------------------------------------------

_AGENT_KEYS = {
    "schema_version": True, "agent": True, "name": True, "summary": True,
    "docs": True, "roots": True, "stores": True, "references": False, "absences": False,
}
_ABSENCE_KEYS = {"what": True, "versions": True, "reason": True}
_ROOT_KEYS = {
    "id": True, "description": True, "paths": False, "scope": False,
    "env": False, "settings": False, "exclude": False,
}
_ENV_KEYS = {"var": True, "join": False}
_SETTING_KEYS = {"root": True, "file": True, "key": True}
_STORE_KEYS = {
    "id": True, "root": True, "include": True, "role": True, "format": True,
    "description": True, "parser": False, "origin": False, "collect": False,
    "exclude": False, "references": False, "tool_results": False, "credential_tables": False,
    "opaque": False,
}


class _Reader:
    """Collects every problem in one file instead of stopping at the first."""

    def __init__(self, filename: str):
        self.filename = filename
        self.problems: list[str] = []

    def fail(self, where: str, message: str) -> None:
        self.problems.append(f"{self.filename}: {where}: {message}")

    def keys(self, where: str, data: Any, spec: dict[str, bool]) -> bool:
        if not isinstance(data, dict):
            self.fail(where, f"expected a mapping, got {type(data).__name__}")
            return False
        for key in data:
            if key not in spec:
                self.fail(where, f"unknown key {key!r} (allowed: {', '.join(sorted(spec))})")
        for key, required in spec.items():
            if required and key not in data:
                self.fail(where, f"missing required key {key!r}")
        return True

    def text(self, where: str, value: Any, key: str, default: str | None = None) -> str:
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.fail(where, f"{key!r} must be a non-empty string")
            return default or ""
        return value

    def choice(self, where: str, value: Any, key: str, allowed: tuple[str, ...], default: str) -> str:
        if value is None:
            return default
        if value not in allowed:
            self.fail(where, f"{key!r} is {value!r}; allowed: {', '.join(allowed)}")
            return default
        return value

    def strings(self, where: str, value: Any, key: str, required: bool = False) -> tuple[str, ...]:
        if value is None:
            if required:
                self.fail(where, f"{key!r} must be a non-empty list of strings")
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.fail(where, f"{key!r} must be a list of non-empty strings")
            return ()
        if required and not value:
            self.fail(where, f"{key!r} must not be empty")
        if len(set(value)) != len(value):
            self.fail(where, f"{key!r} lists an entry twice")
        return tuple(value)

    def globs(self, where: str, value: Any, key: str, required: bool = False) -> tuple[str, ...]:
        patterns = self.strings(where, value, key, required)
        for pattern in patterns:
            try:
                validate_glob(pattern)
            except GlobError as exc:
                self.fail(where, f"{key!r}: {exc}")
        return patterns


def parse_agent(data: Any, filename: str) -> AgentCatalog:
    """Validate one decoded catalog file; raise CatalogError listing every problem."""
    reader = _Reader(filename)
    if not reader.keys("top level", data, _AGENT_KEYS):
        raise CatalogError(reader.problems)
    if data.get("schema_version") != SCHEMA_VERSION:
        reader.fail("top level", f"schema_version must be {SCHEMA_VERSION}")
    agent = reader.text("top level", data.get("agent"), "agent")
    if agent and not AGENT_ID.match(agent):
        reader.fail("top level", f"agent id {agent!r} must be kebab-case")
    roots = _parse_roots(reader, data.get("roots"))
    stores = _parse_stores(reader, data.get("stores"), agent, {root.id for root in roots})
    _check_setting_roots(reader, roots)
    catalog = AgentCatalog(
        agent=agent,
        name=reader.text("top level", data.get("name"), "name"),
        summary=reader.text("top level", data.get("summary"), "summary"),
        docs=reader.text("top level", data.get("docs"), "docs"),
        roots=roots,
        stores=stores,
        references=reader.strings("top level", data.get("references"), "references"),
        absences=_parse_absences(reader, data.get("absences")),
        source_file=filename,
    )
    if catalog.docs and catalog.docs != f"docs/agents/{agent}.md":
        reader.fail("top level", f"docs must be 'docs/agents/{agent}.md'")
    if reader.problems:
        raise CatalogError(reader.problems)
    return catalog


def _parse_absences(reader: _Reader, value: Any) -> tuple[Absence, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.fail("absences", "must be a list")
        return ()
    found = []
    for index, item in enumerate(value):
        where = f"absences[{index}]"
        if reader.keys(where, item, _ABSENCE_KEYS):
            found.append(Absence(reader.text(where, item.get("what"), "what"),
                                 reader.text(where, item.get("versions"), "versions"),
                                 reader.text(where, item.get("reason"), "reason")))
    return tuple(found)


def _parse_roots(reader: _Reader, value: Any) -> tuple[Root, ...]:
    if not isinstance(value, list) or not value:
        reader.fail("roots", "must be a non-empty list")
        return ()
    roots: list[Root] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = f"roots[{index}]"
        if not reader.keys(where, item, _ROOT_KEYS):
            continue
        root_id = reader.text(where, item.get("id"), "id")
        where = f"roots[{index}] ({root_id})"
        if root_id and not LOCAL_ID.match(root_id):
            reader.fail(where, "id must be snake_case")
        if root_id in seen:
            reader.fail(where, "duplicate root id")
        seen.add(root_id)
        roots.append(
            Root(
                id=root_id,
                description=reader.text(where, item.get("description"), "description"),
                paths=_root_paths(reader, where, item),
                scope=reader.choice(where, item.get("scope"), "scope", SCOPES, "home"),
                env=_parse_env(reader, where, item.get("env")),
                settings=_parse_settings(reader, where, item.get("settings")),
                exclude=reader.globs(where, item.get("exclude"), "exclude"),
            )
        )
        _check_private_twins(reader, where, roots[-1])
    return tuple(roots)


def _check_private_twins(reader: _Reader, where: str, root: Root) -> None:
    """A system path under tmp/ or var/ names its macOS twin under private/ (and the reverse).

    On macOS /tmp and /var are links into /private: the collector never follows a link, so under
    ``--root`` of a Mac image only the private/ path reaches the files, and live on Linux only the other.
    """
    if root.scope != "system":
        return
    paths = set(root.paths)
    for path in root.paths:
        head = path.split("/", 1)[0]
        linked = path.removeprefix("private/")
        if head in MACOS_PRIVATE_LINKS and f"private/{path}" not in paths:
            reader.fail(where, f"'paths': {path!r} needs its macOS twin 'private/{path}' (/{head} is a link there)")
        elif linked != path and linked.split("/", 1)[0] in MACOS_PRIVATE_LINKS and linked not in paths:
            reader.fail(where, f"'paths': {path!r} needs its twin {linked!r} (Linux has no /private)")


def _root_paths(reader: _Reader, where: str, item: dict) -> tuple[str, ...]:
    """Default locations; may be empty only when env or settings can name one."""
    relocatable = bool(item.get("env") or item.get("settings"))
    paths = reader.strings(where, item.get("paths"), "paths", required=not relocatable)
    for path in paths:
        if path == ".":  # the home (or image root) itself, for files kept directly in it
            continue
        try:
            validate_glob(path)
        except GlobError as exc:
            reader.fail(where, f"'paths': {exc}")
    return paths


def _parse_env(reader: _Reader, where: str, value: Any) -> tuple[EnvOverride, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.fail(where, "'env' must be a list")
        return ()
    overrides = []
    for index, item in enumerate(value):
        here = f"{where} env[{index}]"
        if not reader.keys(here, item, _ENV_KEYS):
            continue
        var = reader.text(here, item.get("var"), "var")
        if var and not ENV_VAR.match(var):
            reader.fail(here, f"{var!r} is not an environment variable name")
        join = item.get("join", "")
        if join:
            try:
                validate_glob(join)
            except GlobError as exc:
                reader.fail(here, f"'join': {exc}")
        overrides.append(EnvOverride(var=var, join=join or ""))
    return tuple(overrides)


def _parse_settings(reader: _Reader, where: str, value: Any) -> tuple[SettingOverride, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.fail(where, "'settings' must be a list")
        return ()
    overrides = []
    for index, item in enumerate(value):
        here = f"{where} settings[{index}]"
        if not reader.keys(here, item, _SETTING_KEYS):
            continue
        file = reader.text(here, item.get("file"), "file")
        try:
            validate_glob(file)
        except GlobError as exc:
            reader.fail(here, f"'file': {exc}")
        overrides.append(
            SettingOverride(
                root=reader.text(here, item.get("root"), "root"),
                file=file,
                key=reader.text(here, item.get("key"), "key"),
            )
        )
    return tuple(overrides)


def _check_setting_roots(reader: _Reader, roots: tuple[Root, ...]) -> None:
    ids = {root.id for root in roots}
    for root in roots:
        for setting in root.settings:
            if setting.root not in ids:
                reader.fail(f"roots ({root.id})", f"settings names unknown root {setting.root!r}")
            elif setting.root == root.id:
                reader.fail(f"roots ({root.id})", "settings must name another root")


def _parse_stores(reader: _Reader, value: Any, agent: str, root_ids: set[str]) -> tuple[Store, ...]:
    if not isinstance(value, list) or not value:
        reader.fail("stores", "must be a non-empty list")
        return ()
    stores: list[Store] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = f"stores[{index}]"
        if not reader.keys(where, item, _STORE_KEYS):
            continue
        store_id = reader.text(where, item.get("id"), "id")
        where = f"stores[{index}] ({store_id})"
        if store_id and not LOCAL_ID.match(store_id):
            reader.fail(where, "id must be snake_case")
        if store_id in seen:
            reader.fail(where, "duplicate store id")
        seen.add(store_id)
        store = Store(
            id=store_id,
            root=reader.text(where, item.get("root"), "root"),
            include=reader.globs(where, item.get("include"), "include", required=True),
            role=reader.choice(where, item.get("role"), "role", ROLES, "transcript"),
            format=reader.choice(where, item.get("format"), "format", FORMATS, "binary"),
            description=reader.text(where, item.get("description"), "description"),
            parser=item.get("parser"),
            origin=reader.choice(where, item.get("origin"), "origin", ORIGINS, "primary"),
            collect=reader.choice(where, item.get("collect"), "collect", COLLECT_POLICIES, "always"),
            exclude=reader.globs(where, item.get("exclude"), "exclude"),
            references=reader.strings(where, item.get("references"), "references"),
            tool_results=reader.choice(where, item.get("tool_results"), "tool_results", TOOL_RESULTS, "recorded"),
            credential_tables=reader.strings(where, item.get("credential_tables"), "credential_tables"),
            opaque=reader.text(where, item["opaque"], "opaque") if "opaque" in item else None,
        )
        if store.credential_tables and store.format != "sqlite":
            reader.fail(where, "credential_tables is only for a sqlite store")
        if store.opaque is not None and (store.parser is not None or store.origin != "documentary"):
            reader.fail(where, "opaque is only for a documentary store with parser: null")
        _check_store_rules(reader, where, store, agent, root_ids)
        stores.append(store)
    return tuple(stores)


def _check_store_rules(reader: _Reader, where: str, store: Store, agent: str, root_ids: set[str]) -> None:
    if store.root and store.root not in root_ids:
        reader.fail(where, f"root {store.root!r} is not defined under roots")
    if store.role == "credential" and store.collect != "never":
        reader.fail(where, "a credential store must say collect: never")
    if store.collect == "never" and store.role != "credential":
        reader.fail(where, "collect: never is only for role: credential")
    if store.parser is None:
        return
    if store.collect == "never":
        reader.fail(where, "a never-collected store cannot name a parser")
    if not isinstance(store.parser, str):
        reader.fail(where, "'parser' must be a string like '<agent>.<name>.v1' or null")
        return
    match = PARSER_ID.match(store.parser)
    if not match:
        reader.fail(where, f"parser id {store.parser!r} must look like '<agent>.<name>.v<N>'")
    elif agent and match.group(1) != agent.replace("-", "_"):
        reader.fail(where, f"parser id {store.parser!r} must start with {agent.replace('-', '_')!r}")
