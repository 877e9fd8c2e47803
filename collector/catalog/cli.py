"""``aitrail catalog list | show AGENT | validate [DIR]``."""

from __future__ import annotations

from pathlib import Path

import click

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.globs import expand_braces
from aitrail.collector.catalog.schema import CatalogError


def _load_or_exit(directory: Path | None) -> catalog_module.Catalog:
    try:
        return catalog_module.load(directory)
    except CatalogError as exc:
        for problem in exc.problems:
            click.echo(problem, err=True)
        raise SystemExit(1) from exc


@click.group("catalog")
def catalog_group() -> None:
    """Inspect and validate the agent catalog."""


@catalog_group.command("list")
@click.option("--catalog", "directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
def list_agents(directory: Path | None) -> None:
    """One line per agent: id, stores, parsers, never-collected stores."""
    catalog = _load_or_exit(directory)
    click.echo(f"{'agent':<22}{'stores':>7}{'parsed':>8}{'never':>7}  name")
    for agent in catalog.agents:
        parsed = sum(1 for store in agent.stores if store.parser)
        never = sum(1 for store in agent.stores if store.collect == "never")
        click.echo(f"{agent.agent:<22}{len(agent.stores):>7}{parsed:>8}{never:>7}  {agent.name}")
    click.echo(f"catalog digest sha256:{catalog.digest}")


def markdown_table(agent) -> str:
    """The Collection table of docs/agents/<agent>.md (kept in step by tests/test_docs.py)."""
    lines = ["| store | role | format | origin | parser | home-relative globs |", "|---|---|---|---|---|---|"]
    for store in agent.stores:
        root = agent.root(store.root)
        bases = list(root.paths) or []
        bases += [f"${env.var}" + (f"/{env.join}" if env.join else "") for env in root.env]
        bases += [f"<{setting.key}>" for setting in root.settings]
        globs = [f"{base}/{plain}" if base != "." else plain
                 for pattern in store.include for plain in expand_braces(pattern) for base in bases]
        origin = "**never collected**" if store.collect == "never" else store.origin
        cell = "<br>".join(f"`{glob}`" for glob in globs)
        lines.append(f"| `{store.id}` | {store.role} | {store.format} | {origin} | "
                     f"{'`' + store.parser + '`' if store.parser else '-'} | {cell} |")
    excludes = [f"`{path}/{pattern}`" for root in agent.roots for pattern in root.exclude
                for path in (root.paths or [f"<{root.id}>"])]
    if excludes:
        lines.append("")
        lines.append("Pruned before they are walked: " + ", ".join(excludes) + ".")
    return "\n".join(lines) + "\n"


@catalog_group.command("show")
@click.argument("agent_id")
@click.option("--catalog", "directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--markdown", is_flag=True, help="Print the Collection table of the agent's docs page.")
def show_agent(agent_id: str, directory: Path | None, markdown: bool) -> None:
    """Every root and store of AGENT_ID with its home-relative globs."""
    catalog = _load_or_exit(directory)
    try:
        agent = catalog.agent(agent_id)
    except KeyError:
        known = ", ".join(a.agent for a in catalog.agents)
        raise click.UsageError(f"unknown agent {agent_id!r}; known: {known}") from None
    if markdown:
        click.echo(markdown_table(agent), nl=False)
        return
    click.echo(f"{agent.agent}: {agent.name}")
    click.echo(agent.summary.strip())
    for root in agent.roots:
        click.echo(f"\nroot {root.id} ({root.scope}): {root.description.strip()}")
        for path in root.paths:
            click.echo(f"  path     {path}")
        for env in root.env:
            click.echo(f"  env      ${env.var}" + (f"/{env.join}" if env.join else ""))
        for setting in root.settings:
            click.echo(f"  setting  <{setting.root}>/{setting.file} : {setting.key}")
        for pattern in root.exclude:
            click.echo(f"  exclude  {pattern}")
    for store in agent.stores:
        root = agent.root(store.root)
        policy = "NEVER COLLECTED" if store.collect == "never" else store.origin
        click.echo(f"\nstore {agent.qualified(store)}  [{store.role}, {store.format}, {policy}]")
        click.echo(f"  parser   {store.parser or '-'}")
        for pattern in store.include:
            for plain in expand_braces(pattern):
                for base in root.paths or (f"<{root.id}>",):
                    click.echo(f"  include  {base}/{plain}")
        for pattern in store.exclude:
            click.echo(f"  exclude  {pattern}")


@catalog_group.command("validate")
@click.argument("directory", required=False, type=click.Path(file_okay=False, exists=True, path_type=Path))
def validate(directory: Path | None) -> None:
    """Validate every catalog file; exit 1 naming each problem."""
    catalog = _load_or_exit(directory)
    stores = sum(len(agent.stores) for agent in catalog.agents)
    click.echo(f"catalog valid: {len(catalog.agents)} agents, {stores} stores, sha256:{catalog.digest}")
