"""Which of a container's files the catalog walk of an import can reach: only those get a placeholder.

The plan of the run to come (the same ``collect._plan`` a ``collect --root``
makes, over the directories already laid out and the settings files already
filled) gives every target: a location and the glob segments below it. A
file is reachable when, below a target's location, its path starts with the
glob's literal segments and then either matches the one segment left (a glob
whose only pattern is its last segment, such as ``.agent.json*`` of a home,
or a SQLite companion ``-wal``, ``-shm``, ``-journal`` of such a match) or
goes on below them (any glob with a pattern before its last segment: every
file below its literal part is laid out, so the walk sees what a live walk
would). Credential globs count as targets: a credential the tool took must be
placed to be recorded ``never_collect``. Names are compared without case (an
extra placeholder costs nothing; a missing one would lose a match).

Links may lead the walk anywhere in the tree, so a container with a link
above, at or below any target's literal part (an agent folder a link, or a
link inside it) has every file placed. The files left out are counted in
``foreign_custody.files_not_laid_out``: no glob of the catalog could reach
them, so a live walk of the same tree would not have opened them either.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable

from aitrail.collector import collect
from aitrail.collector.catalog.globs import is_literal
from aitrail.collector.foreign.container import ForeignFile
from aitrail.collector.foreign.staging import Staging

COMPANIONS = ("-journal", "-shm", "-wal")  # collect.SQLITE_COMPANIONS

# literal parts, the segment after them (all the segments, for a wildcard right below the location), whether it is
# the last
Rule = tuple[tuple[str, ...], str | tuple[str, ...] | None, bool]


def settings_suffixes(catalog) -> set[str]:
    """``/<root path>/<settings file>`` of every settings override: the files the planner reads."""
    suffixes = set()
    for agent in catalog.agents:
        for root in agent.roots:
            for setting in root.settings:
                source = agent.root(setting.root)
                suffixes.update("/" + "/".join(filter(None, (path.strip("/"), setting.file))) for path in source.paths)
    return suffixes


def reachable(staging: Staging, options: collect.CollectOptions,
              full_catalog) -> Callable[[str, ForeignFile], bool] | None:
    """A test of a path below the staging root: can the import's walk reach it? None: place everything."""
    probe = collect.CollectOptions(output=None, root=staging.path, agents=list(options.agents),
                                   catalog_dir=options.catalog_dir, progress=False)
    catalog = full_catalog.select(options.agents)
    mode, homes = collect._mode_and_homes(probe, full_catalog)
    _, batches, vetoes = collect._plan(probe, catalog, full_catalog, mode, homes)
    targets = [target for batch in batches for target in batch()]
    rules = []
    for target in [*targets, *(never for nevers in vetoes.values() for never in nevers)]:
        base = os.path.relpath(target.location.base, staging.path)
        if base == ".." or base.startswith("../"):
            return None  # a place outside the tree (cannot be, in an image): take no chance
        rules.append(_rule(() if base == "." else tuple(base.lower().split("/")), target.segments))
    links = [staged.relpath for staged in staging.files.values() if staged.foreign.kind == "symlink"]
    if any(_on_the_way(relpath, rules) for relpath in links):
        return None
    index = _Index(rules)
    return lambda relpath, foreign: index.reaches(relpath)


def _rule(base: tuple[str, ...], segments: tuple[str, ...]) -> Rule:
    literal = []
    for segment in segments:
        if not is_literal(segment):
            break
        literal.append(segment.lower())
    rest = segments[len(literal)].lower() if len(literal) < len(segments) else None
    if not literal and rest is not None and len(segments) > 1:
        # a wildcard right below the location (a root path such as `.tool-*`): "everything below its literal
        # part" would be the whole home; the segments are matched one by one instead
        return base, tuple(segment.lower() for segment in segments), False
    return base + tuple(literal), rest, len(literal) == len(segments) - 1


class _Index:
    """The rules by their literal parts, so a path is tested with one look-up per component, not one per rule."""

    def __init__(self, rules: list[Rule]):
        self.exact: set[tuple[str, ...]] = set()  # literal globs: the file itself (or a companion of it)
        self.below: set[tuple[str, ...]] = set()  # a pattern before the last segment: anything below
        self.last: dict[tuple[str, ...], set[str]] = {}  # a pattern as the last segment: children matching it
        self.stepwise: dict[tuple[str, ...], list[tuple[str, ...]]] = {}  # a wildcard first: segment by segment
        for prefix, rest, rest_is_last in rules:
            if isinstance(rest, tuple):
                self.stepwise.setdefault(prefix, []).append(rest)
            elif rest is None:
                self.exact.add(prefix)
            elif rest_is_last:
                self.last.setdefault(prefix, set()).add(rest)
            else:
                self.below.add(prefix)

    def reaches(self, relpath: str) -> bool:
        """Can the walk reach the file at ``relpath`` (below the staging root)?"""
        parts = tuple(relpath.lower().split("/"))
        if parts in self.exact or any(parts[-1].endswith(suffix) and parts[:-1] + (parts[-1][:-len(suffix)],)
                                      in self.exact for suffix in COMPANIONS):
            return True
        if any(parts[:size] in self.below for size in range(len(parts))):
            return True
        patterns = self.last.get(parts[:-1])
        if patterns and any(_matches(parts[-1], pattern) for pattern in patterns):
            return True
        return any(_stepwise(parts[size:], segments) for size in range(len(parts))
                   for segments in self.stepwise.get(parts[:size], ()))


def _stepwise(rest: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    """Do the path's components below the location match the glob's segments (a ``**`` takes the rest)?"""
    if len(rest) > len(segments) and "**" not in segments:
        return False
    for name, segment in zip(rest, segments, strict=False):
        if segment == "**":
            return True
        if not _matches(name, segment):
            return False
    return True


def _on_the_way(relpath: str, rules: list[Rule]) -> bool:
    """A link the walk may meet: above, at or below a target's literal part (an agent folder itself, or inside it)."""
    parts = tuple(relpath.lower().split("/"))
    for prefix, rest, _ in rules:
        if isinstance(rest, tuple):  # a wildcard first: on the way when its components match the segments so far
            if prefix[:len(parts)] == parts or (parts[:len(prefix)] == prefix
                                                and _stepwise(parts[len(prefix):], rest)):
                return True
        elif prefix[:len(parts)] == parts or parts[:len(prefix)] == prefix:
            return True
    return False


def _matches(name: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(name, pattern):
        return True
    return any(name.endswith(suffix) and fnmatch.fnmatchcase(name[:-len(suffix)], pattern) for suffix in COMPANIONS)
