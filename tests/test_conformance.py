"""One agent id, found in the same place in every room; catalog and registry agree."""

from __future__ import annotations

import pytest

from aitrail.analyzer.parsers import MODULES
from aitrail.analyzer.registry import parsers
from aitrail.collector import catalog as catalog_module
from tests.conftest import FIXTURES, REPO


def module_agents() -> list[tuple[str, object]]:
    return [(module.__name__.rsplit(".", 1)[-1].replace("_", "-"), module) for module in MODULES]


@pytest.mark.parametrize("agent, module", module_agents(), ids=lambda value: value if isinstance(value, str) else "")
def test_agent_is_found_by_name_in_every_room(agent, module):
    assert (REPO / "catalog" / f"{agent}.yaml").is_file()
    assert (REPO / "analyzer" / "parsers" / f"{agent.replace('-', '_')}.py").is_file()
    assert (REPO / "docs" / "agents" / f"{agent}.md").is_file()
    assert sorted((FIXTURES / agent).glob("*/expected.csv")), f"fixtures/{agent}/<case>/expected.csv"
    assert module.__doc__ and "References:" in module.__doc__, "the module docstring cites upstream"


@pytest.mark.parametrize("agent, module", module_agents(), ids=lambda value: value if isinstance(value, str) else "")
def test_catalog_and_registry_agree_for_agents_with_a_parser_module(agent, module):
    catalog_ids = {store.parser for store in catalog_module.load().agent(agent).stores if store.parser}
    module_ids = {parser_id for parser_id, _ in module.PARSERS}
    assert catalog_ids == module_ids, f"catalog only: {catalog_ids - module_ids}; module only: {module_ids - catalog_ids}"


def test_every_registered_parser_is_named_by_the_catalog():
    used = {store.parser for agent in catalog_module.load().agents for store in agent.stores}
    assert set(parsers()) <= used
