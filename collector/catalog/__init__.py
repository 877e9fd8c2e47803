"""Load and validate the catalog: one YAML file per agent under catalog/.

The catalog directory is found through the import system (ADR 0001) unless a
directory is given. Loading is all-or-nothing: a collection never runs on a
catalog with a single schema error.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aitrail.collector.catalog import documents
from aitrail.collector.catalog.schema import AgentCatalog, CatalogError, Store, parse_agent


@dataclass(frozen=True)
class Catalog:
    """Every agent's catalog, plus the exact bytes they were read from."""

    directory: Path
    agents: tuple[AgentCatalog, ...]
    raw_files: tuple[tuple[str, bytes], ...]

    @property
    def digest(self) -> str:
        """SHA-256 over (name, length, bytes) of every file, in name order."""
        hasher = hashlib.sha256()
        for name, data in self.raw_files:
            hasher.update(f"{name}\0{len(data)}\0".encode())
            hasher.update(data)
        return hasher.hexdigest()

    def agent(self, agent_id: str) -> AgentCatalog:
        """One agent's catalog; KeyError for an unknown id."""
        for agent in self.agents:
            if agent.agent == agent_id:
                return agent
        raise KeyError(agent_id)

    def select(self, agent_ids: tuple[str, ...] | list[str]) -> Catalog:
        """The same catalog restricted to some agents; unknown ids are an error."""
        if not agent_ids:
            return self
        known = {agent.agent for agent in self.agents}
        unknown = sorted(set(agent_ids) - known)
        if unknown:
            raise KeyError(", ".join(unknown))
        chosen = tuple(agent for agent in self.agents if agent.agent in set(agent_ids))
        return Catalog(self.directory, chosen, self.raw_files)

    def stores(self) -> list[tuple[AgentCatalog, Store]]:
        """Every (agent, store) pair, in catalog order."""
        return [(agent, store) for agent in self.agents for store in agent.stores]


def default_directory() -> Path:
    """Where the installed catalog lives (a wheel's package data or the checkout)."""
    spec = importlib.util.find_spec("aitrail.catalog")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the aitrail.catalog package data is not installed")
    for location in spec.submodule_search_locations:
        path = Path(location)
        if path.is_dir():
            return path
    raise FileNotFoundError("no catalog directory found in aitrail.catalog")


def read_file(path: Path) -> AgentCatalog:
    """Read and validate one catalog file."""
    data = path.read_bytes()
    return _parse_bytes(path.name, data)


def _parse_bytes(name: str, data: bytes, parsed: dict[str, Any] | None = None) -> AgentCatalog:
    decoded = documents.parsed_document(parsed or {}, name, data)
    if decoded is documents.NOT_PARSED:
        try:
            decoded = documents.yaml_document(data)
        except documents.DocumentError as exc:
            raise CatalogError([f"{name}: not valid UTF-8 YAML: {exc}"]) from exc
        except documents.YamlUnavailable as exc:
            raise CatalogError([f"{name}: {exc}"]) from exc
    catalog = parse_agent(decoded, name)
    if catalog.agent + ".yaml" != name:
        raise CatalogError([f"{name}: agent id {catalog.agent!r} must match the file name"])
    return catalog


def load(directory: Path | None = None) -> Catalog:
    """Load every ``*.yaml`` file in the catalog directory; raise CatalogError on any problem."""
    directory = Path(directory) if directory else default_directory()
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise CatalogError([f"{directory}: no catalog files (*.yaml)"])
    problems: list[str] = []
    agents: list[AgentCatalog] = []
    raw: list[tuple[str, bytes]] = []
    parsed = documents.read_parsed(directory)  # the build's parsed form of the YAML files (catalog_documents)
    for path in files:
        data = path.read_bytes()
        raw.append((path.name, data))
        try:
            agents.append(_parse_bytes(path.name, data, parsed))
        except CatalogError as exc:
            problems.extend(exc.problems)
    problems.extend(_cross_file_problems(agents))
    if problems:
        raise CatalogError(problems)
    return Catalog(directory, tuple(agents), tuple(raw))


def _cross_file_problems(agents: list[AgentCatalog]) -> list[str]:
    """Rules that span files: a parser id belongs to exactly one agent's module."""
    problems = []
    owners: dict[str, str] = {}
    for agent in agents:
        for store in agent.stores:
            if store.parser is None:
                continue
            owner = owners.setdefault(store.parser, agent.agent)
            if owner != agent.agent:
                problems.append(
                    f"{agent.source_file}: stores ({store.id}): parser {store.parser!r} "
                    f"is already used by agent {owner!r}"
                )
    return problems
