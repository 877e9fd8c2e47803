"""The catalog as per-OS path patterns: what every export format is generated from.

Each collected store's ``include`` globs are joined to each of its root's
``paths`` (braces expanded with collector/catalog/globs.py's expand_braces),
and every such path is given the operating systems it can exist on. The
rule, by the path's first segment (docs/catalog-export.md says the same):

* ``AppData``, ``Program Files``, ``Program Files (x86)``, ``ProgramData``,
  ``OneDrive`` (the Windows known-folder redirection of Documents): Windows;
* ``Library`` and ``.Trash`` (the per-user macOS trash): macOS;
* ``.config`` and ``.local`` (the XDG directories): all three, even where
  the same root also names a ``Library/...`` or ``AppData/...`` path:
  ``collect`` looks in every path of a root on every home, and an export
  collects no less (Node agents built on the xdg-basedir package
  keep ``~/.local/share`` on Windows and macOS too; a home can hold an XDG
  copy from a dotfiles sync or an older build); a path that is not there
  costs the other tool one failed lookup;
* ``etc`` and ``run`` (``scope: system`` only): Linux;
* ``tmp``, ``var`` (``scope: system`` only): Linux and macOS (macOS links
  them into ``/private``: ForensicArtifacts' validator wants the link and its
  target both, so a catalog names ``private/tmp/...`` too); ``private``
  (``scope: system``): macOS;
* anything else under a home (a dot-directory of the agent's own,
  ``Documents``, the home itself ``.``): all three;
* any other ``scope: system`` path is an error (no OS is guessed).

``scope: home`` paths are relative to each user's home, ``scope: system``
paths to the file system root. Roots with no fixed ``paths`` (their place is
only named by an environment variable or by a setting in another file)
cannot be exported; the plan lists them so that every export's notes can
say so. Where a root has paths and may also be moved by an environment
variable, only the default paths are exported, and the notes say that too.

The never-collect stores (``collect: never``, role credential) of the whole
catalog, not only of the agents exported, are the exclusions, as they are
the vetoes of a collection (collector/collect.py). A root's ``exclude``
globs are directories the collector prunes; a store's ``exclude`` only
splits files between the stores of one root, and the plan checks that each
is some other store's include, so the union of the includes is what a
collection copies.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from aitrail.collector import __version__
from aitrail.collector.catalog import Catalog
from aitrail.collector.catalog.export.overlap import globs_overlap
from aitrail.collector.catalog.globs import expand_braces
from aitrail.collector.catalog.schema import MACOS_PRIVATE_LINKS, AgentCatalog, Root

OSES = ("linux", "macos", "windows")
_WINDOWS_HEADS = frozenset({"AppData", "Program Files", "Program Files (x86)", "ProgramData", "OneDrive"})
_MACOS_HEADS = frozenset({"Library", ".Trash"})
# uuid5 namespace of every GUID an export writes (KAPE target ids): fixed, so the same catalog gives the same ids
GUID_NAMESPACE = uuid.UUID("5d0c5b8e-6f0a-5c39-9d0e-8a41e7c3a2f1")


class ExportError(ValueError):
    """The catalog cannot be exported to a format as asked; the message names the glob or option."""


@dataclass(frozen=True)
class Pattern:
    """One brace-free glob of one store under one root path, with the OSes that path exists on."""

    agent: str
    store: str  # the store's local id
    root: str
    scope: str  # "home" | "system"
    base: str  # the root path as the catalog writes it ("." is the home itself)
    glob: str  # relative to base, braces expanded
    oses: tuple[str, ...]
    role: str
    never: bool

    @property
    def path(self) -> str:
        """The glob relative to the home (scope home) or to the file system root (scope system)."""
        return self.glob if self.base == "." else f"{self.base}/{self.glob}"

    @property
    def qualified(self) -> str:
        """``agent.store``, as bundles and timelines name the store."""
        return f"{self.agent}.{self.store}"


@dataclass(frozen=True)
class Prune:
    """A directory glob a root prunes (its ``exclude``), under one of the root's paths."""

    agent: str
    root: str
    scope: str
    base: str
    glob: str
    oses: tuple[str, ...]

    @property
    def path(self) -> str:
        """The pruned glob relative to the home or the file system root."""
        return self.glob if self.base == "." else f"{self.base}/{self.glob}"


@dataclass(frozen=True)
class RootNote:
    """A root whose places an export cannot name, or names only in part."""

    agent: str
    root: str
    stores: tuple[str, ...]
    env: tuple[str, ...]  # "$VAR" or "$VAR/join"
    settings: tuple[str, ...]  # "<root>/file: key"
    exported: bool  # False: no fixed path at all; True: the default paths are exported, the others are not


@dataclass(frozen=True)
class ExportPlan:
    """Everything a format generator needs, taken from one catalog."""

    version: str
    digest: str
    agents: tuple[AgentCatalog, ...]
    collect: tuple[Pattern, ...]  # the chosen agents' collected globs
    never: tuple[Pattern, ...]  # every agent's never-collect globs
    prunes: tuple[Prune, ...]  # the chosen agents' pruned directories
    roots: tuple[RootNote, ...]
    uncovered_store_excludes: tuple[str, ...]  # "agent.store: glob" a format without exclusions still copies

    def header(self, fmt: str, comment: str = "#") -> str:
        """The first lines of every generated file: what made it, from which catalog."""
        return (f"{comment} Generated by aitrail {self.version} from catalog sha256:{self.digest}\n"
                f"{comment} (aitrail catalog export --format {fmt}); regenerate it from the catalog, do not edit.\n")

    def for_os(self, os_name: str, patterns: tuple[Pattern, ...] | None = None) -> list[Pattern]:
        """The patterns (collected ones unless given) that exist on one OS."""
        return [pattern for pattern in (self.collect if patterns is None else patterns) if os_name in pattern.oses]

    def agent_patterns(self, agent: str) -> list[Pattern]:
        """One agent's collected patterns, in catalog order."""
        return [pattern for pattern in self.collect if pattern.agent == agent]

    def credential_overlaps(self, scope: str, path: str) -> list[Pattern]:
        """The never-collect patterns (any OS, same scope) a path glob could match."""
        return [never for never in self.never if never.scope == scope and globs_overlap(path, never.path)]

    def require_no_credential(self, pattern: Pattern, tool: str) -> None:
        """Raise ExportError when a format without exclusions would copy a credential through this glob."""
        hits = self.credential_overlaps(pattern.scope, pattern.path)
        if hits:
            names = ", ".join(f"{hit.qualified} ({hit.path})" for hit in hits)
            raise ExportError(f"{tool} has no exclusion, and {pattern.qualified}'s glob {pattern.path!r} "
                              f"can match the never-collected {names}")


def guid(name: str) -> str:
    """A GUID that depends only on ``name`` (uuid5 in GUID_NAMESPACE)."""
    return str(uuid.uuid5(GUID_NAMESPACE, name))


def oses_for(root: Root, path: str) -> tuple[str, ...]:
    """The operating systems a root path exists on (the rule in this module's docstring)."""
    head = path.split("/", 1)[0]
    if head in _WINDOWS_HEADS:
        return ("windows",)
    if head in _MACOS_HEADS:
        return ("macos",)
    if root.scope == "system":
        if head in ("etc", "run"):  # /run (the per-user runtime directories /run/user/<uid>) is Linux's
            return ("linux",)
        if head in MACOS_PRIVATE_LINKS:  # on macOS these are links into /private: a catalog names private/... too
            return ("linux", "macos")
        if head == "private":
            return ("macos",)
        raise ExportError(f"root {root.id!r}: no OS rule for the system path {path!r}")
    return OSES


def _patterns(agent: AgentCatalog, never: bool) -> list[Pattern]:
    patterns = []
    for store in agent.stores:
        if (store.collect == "never") != never:
            continue
        root = agent.root(store.root)
        for base in root.paths:
            oses = oses_for(root, base)
            for include in store.include:
                for glob in expand_braces(include):
                    patterns.append(Pattern(agent.agent, store.id, root.id, root.scope, base, glob, oses,
                                            store.role, never))
    return patterns


def _prunes(agent: AgentCatalog) -> list[Prune]:
    return [Prune(agent.agent, root.id, root.scope, base, glob, oses_for(root, base))
            for root in agent.roots for base in root.paths
            for pattern in root.exclude for glob in expand_braces(pattern)]


def _root_notes(agent: AgentCatalog) -> list[RootNote]:
    notes = []
    for root in agent.roots:
        if not root.env and not root.settings:
            continue
        stores = tuple(store.id for store in agent.stores if store.root == root.id)
        env = tuple(f"${item.var}" + (f"/{item.join}" if item.join else "") for item in root.env)
        settings = tuple(f"<{item.root}>/{item.file}: {item.key}" for item in root.settings)
        notes.append(RootNote(agent.agent, root.id, stores, env, settings, exported=bool(root.paths)))
    return notes


def _uncovered_store_excludes(agent: AgentCatalog) -> list[str]:
    """Store excludes no other collected store of the same root includes (a union would copy them)."""
    uncovered = []
    for store in agent.stores:
        if store.collect == "never":
            continue
        others = {glob for other in agent.stores
                  if other.root == store.root and other.id != store.id and other.collect != "never"
                  for include in other.include for glob in expand_braces(include)}
        for exclude in store.exclude:
            uncovered += [f"{agent.agent}.{store.id}: {glob}" for glob in expand_braces(exclude) if glob not in others]
    return uncovered


def build_plan(catalog: Catalog, agent_ids: tuple[str, ...] | list[str] = ()) -> ExportPlan:
    """The export plan of some agents (all when none are named; KeyError names unknown ones)."""
    chosen = catalog.select(tuple(agent_ids)).agents
    return ExportPlan(
        version=__version__,
        digest=catalog.digest,
        agents=chosen,
        collect=tuple(pattern for agent in chosen for pattern in _patterns(agent, never=False)),
        never=tuple(pattern for agent in catalog.agents for pattern in _patterns(agent, never=True)),
        prunes=tuple(prune for agent in chosen for prune in _prunes(agent)),
        roots=tuple(note for agent in chosen for note in _root_notes(agent)),
        uncovered_store_excludes=tuple(item for agent in chosen for item in _uncovered_store_excludes(agent)),
    )


def split_glob(glob: str) -> list[str]:
    """The segments of a brace-free glob, with repeated ``**`` folded (they mean the same)."""
    segments: list[str] = []
    for segment in glob.split("/"):
        if not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)
    return segments


def reaches_pruned(plan: ExportPlan, pattern: Pattern) -> list[Prune]:
    """The pruned directories of the pattern's own root (same path) its glob can reach into."""
    return [prune for prune in plan.prunes
            if (prune.agent, prune.root, prune.base) == (pattern.agent, pattern.root, pattern.base)
            and globs_overlap(pattern.glob, prune.glob + "/**")]
