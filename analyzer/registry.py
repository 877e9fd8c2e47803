"""Parser ids to parser functions, from the explicit module list in analyzer/parsers/__init__.py.

Each parser module ends with a ``PARSERS`` tuple of (parser id, function). A
parser id is registered exactly once; a duplicate is an error at import time,
and a parser id must start with its module's name (the agent id with '-'
replaced by '_'), as the catalog schema requires of the catalog side.
"""

from __future__ import annotations

from typing import Callable, Iterable

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.rows import Draft

Parser = Callable[[ParseContext], Iterable[Draft]]


class RegistryError(ValueError):
    pass


def build(modules) -> dict[str, Parser]:
    registry: dict[str, Parser] = {}
    for module in modules:
        prefix = module.__name__.rsplit(".", 1)[-1] + "."
        for parser_id, function in module.PARSERS:
            if not parser_id.startswith(prefix):
                raise RegistryError(f"{module.__name__}: parser id {parser_id!r} must start with {prefix!r}")
            if parser_id in registry:
                raise RegistryError(f"parser id {parser_id!r} registered twice")
            registry[parser_id] = function
    return registry


def parsers() -> dict[str, Parser]:
    from aitrail.analyzer.parsers import MODULES

    return build(MODULES)
