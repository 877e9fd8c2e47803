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


def _name_values(option: str, values: tuple[str, ...]) -> dict[str, str]:
    """``NAME=VALUE`` options as a mapping; a usage error names a malformed or repeated one."""
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep or not name or not text:
            raise click.UsageError(f"{option} takes NAME=VALUE, got {value!r}")
        if name in pairs:
            raise click.UsageError(f"{option} gives {name} twice")
        pairs[name] = text
    return pairs


@catalog_group.command("export")
@click.option("--format", "fmt", required=True, help="The collector to export to.",
              type=click.Choice(["velociraptor", "kape", "uac", "forensic-artifacts"]))  # = export.FORMATS
@click.option("-o", "--output", "directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write the files into (created if missing; files of the same names are replaced).")
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable; see 'aitrail catalog list').")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--tool-sha256", "tool_sha256", multiple=True, metavar="NAME=HEX",
              help="velociraptor: pin a tool (AITrail_<os>_<arch>) to the SHA-256 of its zip (repeatable).")
@click.option("--tool-url", "tool_url", multiple=True, metavar="NAME=URL",
              help="velociraptor: where the server downloads a tool from (repeatable).")
def export_catalog(fmt: str, directory: Path, agents: tuple[str, ...], catalog_dir: Path | None,
                   tool_sha256: tuple[str, ...], tool_url: tuple[str, ...]) -> None:
    """Write the catalog as FORMAT files into a directory (docs/catalog-export.md).

    Generated from the catalog each time, the same bytes for the same catalog
    and options; the never-collected stores are excluded (or, where a format
    has no exclusion, no path written can match one). Prints each file
    written. Exit 1 when the catalog cannot be exported as asked.
    """
    from aitrail.collector.catalog.export import ExportError, generate, write  # only this command needs them

    catalog = _load_or_exit(catalog_dir)
    try:
        result = generate(catalog, fmt, agents, _name_values("--tool-sha256", tool_sha256),
                          _name_values("--tool-url", tool_url))
    except ExportError as exc:
        click.echo(f"aitrail catalog export: {exc}", err=True)
        raise SystemExit(1) from exc
    try:
        written = write(result, directory)
    except OSError as exc:
        click.echo(f"aitrail catalog export: cannot write into {directory}: {exc}", err=True)
        raise SystemExit(1) from exc
    for path in written:
        click.echo(f"wrote {path}")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
