"""One agent id, found in the same place in every room; catalog and registry agree.

The layout is docs/adr/0004-agent-packages.md: one package per agent under
analyzer/parsers/, its ``__init__`` holding the docstring and ``PARSERS``,
every registered ``parse_*`` documented, and beside it a catalog, a docs page,
fixtures with golden timelines and a test module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from aitrail.analyzer.engine import registry
from aitrail.analyzer.engine.registry import parsers
from aitrail.analyzer.parsers import MODULES
from aitrail.collector import catalog as catalog_module
from tests.conftest import FIXTURES, REPO

PARSERS_DIR = REPO / "analyzer" / "parsers"


def module_agents() -> list[tuple[str, object]]:
    return [(registry.agent_id(module), module) for module in MODULES]


def agent_ids(value) -> str:
    return value if isinstance(value, str) else ""


def source_docstring(function) -> str | None:
    """The docstring of a function's definition in the checkout (a module mypyc compiled keeps none at run time)."""
    parts = function.__module__.split(".")
    assert parts[:2] == ["aitrail", "analyzer"], function.__module__
    tree = ast.parse(REPO.joinpath(*parts[1:-1], f"{parts[-1]}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function.__name__:
            return ast.get_docstring(node)
    raise AssertionError(f"{function.__module__}.{function.__name__} is not defined in its module's source")


@pytest.mark.parametrize("agent, module", module_agents(), ids=agent_ids)
def test_agent_is_found_by_name_in_every_room(agent, module):
    package = module.__name__.rsplit(".", 1)[-1]
    # the installed module (a wheel in CI, the checkout in an editable install) is a package's
    # __init__, and the checkout holds the same package
    assert Path(module.__file__).parts[-3:] == ("parsers", package, "__init__.py"), "one package per agent"
    assert (PARSERS_DIR / package / "__init__.py").is_file(), "one package per agent"
    assert (REPO / "catalog" / f"{agent}.yaml").is_file()
    assert (REPO / "docs" / "agents" / f"{agent}.md").is_file()
    assert sorted((FIXTURES / agent).glob("*/expected.csv")), f"fixtures/{agent}/<case>/expected.csv"
    assert (REPO / "tests" / "parsers" / f"test_{package}.py").is_file(), f"tests/parsers/test_{package}.py"
    assert module.__doc__ and "References:" in module.__doc__, "the package docstring cites upstream"


@pytest.mark.parametrize("agent, module", module_agents(), ids=agent_ids)
def test_package_name_is_the_agent_id_unless_it_declares_one(agent, module):
    package = module.__name__.rsplit(".", 1)[-1]
    declared = getattr(module, "AGENT", None)
    assert package == (declared or agent).replace("-", "_") or package == f"{declared}_", package


@pytest.mark.parametrize("agent, module", module_agents(), ids=agent_ids)
def test_every_registered_parser_has_a_docstring_and_lives_in_its_package(agent, module):
    for parser_id, function in module.PARSERS:
        assert source_docstring(function), f"{parser_id}: {function.__qualname__} has no docstring"
        assert function.__module__.startswith(module.__name__ + "."), f"{parser_id}: defined outside its package"


def test_no_flat_parser_module_is_left_beside_the_packages():
    assert sorted(path.name for path in PARSERS_DIR.glob("*.py")) == ["__init__.py"]
    packages = {path.parent.name for path in PARSERS_DIR.glob("*/__init__.py")}
    assert packages == {module.__name__.rsplit(".", 1)[-1] for module in MODULES}, "list every package in MODULES"


@pytest.mark.parametrize("agent, module", module_agents(), ids=agent_ids)
def test_an_agent_package_imports_no_other_agents_package(agent, module):
    package = module.__name__.rsplit(".", 1)[-1]
    for path in sorted((PARSERS_DIR / package).glob("*.py")):
        for line in path.read_text().splitlines():
            if line.lstrip().startswith(("import ", "from ")) and "aitrail.analyzer.parsers" in line:
                assert f"aitrail.analyzer.parsers.{package}" in line, f"{path.name}: {line.strip()} (use formats/)"


@pytest.mark.parametrize("agent, module", module_agents(), ids=agent_ids)
def test_catalog_and_registry_agree_for_agents_with_a_parser_module(agent, module):
    catalog_ids = {store.parser for store in catalog_module.load().agent(agent).stores if store.parser}
    module_ids = {parser_id for parser_id, _ in module.PARSERS}
    assert catalog_ids == module_ids, \
        f"catalog only: {catalog_ids - module_ids}; module only: {module_ids - catalog_ids}"


def test_every_registered_parser_is_named_by_the_catalog():
    used = {store.parser for agent in catalog_module.load().agents for store in agent.stores}
    assert set(parsers()) <= used


def test_a_package_may_declare_its_id_prefix():
    import types

    package = types.ModuleType("aitrail.analyzer.parsers.continue_")
    package.AGENT = "continue"
    package.PARSERS = (("continue.session.v1", lambda ctx: ()),)
    assert registry.agent_id(package) == "continue"
    assert set(registry.build([package])) == {"continue.session.v1"}
    package.PARSERS = (("continue_.session.v1", lambda ctx: ()),)
    with pytest.raises(registry.RegistryError):
        registry.build([package])
