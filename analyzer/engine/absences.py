"""Known absences: what some versions of an agent keep nowhere on disk, named for each agent in the bundle.

An agent whose threads live on a vendor's server (the catalog's ``absences``,
docs/catalog.md) leaves a settings file and no transcript: its empty timeline
is a known absence, not "no activity". The summary and the report name the
absence for every agent with at least one collected file in the bundle. The
installed catalog says it: it is knowledge about the agent, not about the subject.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable


@functools.lru_cache(maxsize=1)
def _catalog_absences() -> dict[str, tuple]:
    from aitrail.collector import catalog

    try:
        agents = catalog.load().agents
    except catalog.CatalogError:  # an invalid installed catalog: nothing is claimed
        return {}
    return {agent.agent: agent.absences for agent in agents if agent.absences}


def known_absences(agents: Iterable[str]) -> list[dict]:
    """``{agent, what, versions, reason}`` for each absence of each agent present, sorted by agent."""
    known = _catalog_absences()
    return [{"agent": agent, "what": absence.what, "versions": absence.versions, "reason": absence.reason}
            for agent in sorted(set(agents)) for absence in known.get(agent, ())]
