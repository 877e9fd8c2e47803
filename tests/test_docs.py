"""Docs stay in step with the code: generated tables, required sections, every schema field."""

from __future__ import annotations

import re

import pytest

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.cli import markdown_table
from tests.conftest import REPO

SEED_SECTIONS = ("## Collection", "## Record schema", "## Joins and timestamps", "## Parser plan",
                 "## Permission rows", "## Model rows", "## What survives a delete", "## Bad-line rows",
                 "## Fixtures", "## Confidence")


def parsed_agents() -> list[str]:
    from aitrail.analyzer.engine.registry import agent_id
    from aitrail.analyzer.parsers import MODULES

    return [agent_id(module) for module in MODULES]


@pytest.mark.parametrize("agent", parsed_agents())
def test_agent_page_has_the_seed_sections_and_a_current_collection_table(agent):
    page = (REPO / "docs" / "agents" / f"{agent}.md").read_text()
    for heading in SEED_SECTIONS:
        assert heading in page, f"docs/agents/{agent}.md lacks {heading!r}"
    block = re.search(r"<!-- catalog:begin -->\n(.*?)<!-- catalog:end -->", page, re.DOTALL)
    assert block, "the Collection table must sit between catalog markers"
    expected = markdown_table(catalog_module.load().agent(agent))
    assert block.group(1) == expected, f"regenerate with: aitrail catalog show {agent} --markdown"


def test_every_parser_id_of_the_page_exists():
    from aitrail.analyzer.engine.registry import parsers

    registry = parsers()
    for agent in parsed_agents():
        page = (REPO / "docs" / "agents" / f"{agent}.md").read_text()
        module = agent.replace("-", "_")
        for parser_id in set(re.findall(rf"`({module}\.[a-z_]+\.v\d+)`", page)):
            assert parser_id in registry, f"{agent}.md names {parser_id}, which is not registered"


def test_catalog_doc_names_every_schema_key():
    from aitrail.collector.catalog import schema as catalog_schema

    text = (REPO / "docs" / "catalog.md").read_text()
    keys = set(catalog_schema._AGENT_KEYS) | set(catalog_schema._ROOT_KEYS) | set(catalog_schema._STORE_KEYS)
    keys |= set(catalog_schema._ENV_KEYS) | set(catalog_schema._SETTING_KEYS)
    for key in keys:
        documented = f"`{key}`" in text or f"{{{key}" in text or f", {key}" in text
        assert documented, f"docs/catalog.md does not document {key!r}"
    for role in catalog_schema.ROLES:
        assert f"`{role}`" in text
    for fmt in catalog_schema.FORMATS:
        assert f"`{fmt}`" in text
