"""Parser ids to parser functions, from the explicit package list in analyzer/parsers/__init__.py.

Each agent package's ``__init__`` ends with a ``PARSERS`` tuple of (parser
id, function). A parser id is registered exactly once; a duplicate is an
error at import time, and a parser id must start with its package's id
prefix (``AGENT`` if the package sets it, else the package name: the agent id
with '-' replaced by '_'), as the catalog schema requires of the catalog side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType

from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

Parser = Callable[[ParseContext], Iterable[Draft]]


class RegistryError(ValueError):
    """A parser id that does not carry its package's prefix, or is registered twice."""


def id_prefix(module: ModuleType) -> str:
    """The parser-id prefix of an agent package: its ``AGENT`` if set, else its own name.

    ``AGENT`` exists for agent ids that are not Python names (``continue`` is a
    keyword, so its package is ``continue_``).
    """
    return getattr(module, "AGENT", None) or module.__name__.rsplit(".", 1)[-1]


def agent_id(module: ModuleType) -> str:
    """The agent id (as the catalog spells it) that an agent package parses for."""
    return id_prefix(module).replace("_", "-")


def build(modules: Iterable[ModuleType]) -> dict[str, Parser]:
    """Every package's ``PARSERS`` in one mapping; a wrong prefix or a duplicate id is a RegistryError."""
    registry: dict[str, Parser] = {}
    for module in modules:
        prefix = id_prefix(module) + "."
        for parser_id, function in module.PARSERS:
            if not parser_id.startswith(prefix):
                raise RegistryError(f"{module.__name__}: parser id {parser_id!r} must start with {prefix!r}")
            if parser_id in registry:
                raise RegistryError(f"parser id {parser_id!r} registered twice")
            registry[parser_id] = function
    return registry


def parsers(prefixes: set[str] | frozenset[str] | None = None) -> dict[str, Parser]:
    """The registry of the agent packages listed in analyzer/parsers/__init__.py.

    ``prefixes``: only the packages whose parser ids start with one of these
    (``codex`` for ``codex.rollout.v1``); every package when None.
    """
    from aitrail.analyzer.parsers import modules, prefix_of

    loaded = modules(prefixes)
    for module in loaded:
        package = module.__name__.rsplit(".", 1)[-1]
        if id_prefix(module) != prefix_of(package):
            raise RegistryError(f"{module.__name__}: its parser-id prefix {id_prefix(module)!r} is not the one "
                                f"analyzer/parsers/__init__.py names for it ({prefix_of(package)!r})")
    return build(loaded)


def session_links(prefixes: set[str] | frozenset[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Naming parser id -> the parser ids whose rows hold the sessions it names (packages' ``SESSIONS_NAMED``).

    Read by the ``session missing`` integrity rule (analyzer/integrity/sessions.py).
    """
    from aitrail.analyzer.parsers import modules

    links: dict[str, tuple[str, ...]] = {}
    for module in modules(prefixes):
        for naming, holding in getattr(module, "SESSIONS_NAMED", ()):
            links[naming] = tuple(holding)
    return links


def wanted_prefixes(parser_ids) -> frozenset[str]:
    """The parser-id prefixes (the part before the first dot) of some parser ids."""
    return frozenset(parser_id.split(".", 1)[0] for parser_id in parser_ids if parser_id)
