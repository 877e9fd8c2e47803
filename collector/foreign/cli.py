"""``aitrail import TOOL CONTAINER -o BUNDLE``: a UAC, KAPE, Velociraptor or acquire collection as a sealed bundle."""

from __future__ import annotations

import os
import sys

import click

from aitrail.collector import collect as collect_module
from aitrail.collector.bundle.display import terminal_text
from aitrail.collector.collect_cli import (
    SizeType,
    _print_summary,
    _print_warnings,
    _refuse_unsupported_platform,
    reported_failures,
)
from aitrail.collector.foreign.run import TOOLS, import_container


@click.command("import")
@click.argument("tool", type=click.Choice(TOOLS))
@click.argument("container", type=click.Path(exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Bundle to write (BUNDLE.tar.zst).")
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable; see 'aitrail catalog list').")
@click.option("--case", "case_id", help="Case identifier recorded in the bundle.")
@click.option("--examiner", help="Examiner's name recorded in the bundle.")
@click.option("--notes", help="Free-text notes recorded in the bundle.")
@click.option("--hostname", help="The subject's host name, stated by the examiner; what the container says is kept.")
@click.option("--time-zone", "time_zone", help="The subject's time zone (e.g. Europe/Berlin), stated by the examiner.")
@click.option("--sign", "one_time_key", is_flag=True,
              help="Sign with a key made for this import alone (never written to disk); pin its fingerprint.")
@click.option("--sign-key", type=click.Path(dir_okay=False, exists=True),
              help="Sign with this Ed25519 private key (aitrail keygen).")
@click.option("--max-file-size", type=SizeType(), help="Record larger files as too_large.")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False, exists=True),
              help="Use this catalog directory.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def import_command(tool, container, output, agents, case_id, examiner, notes, hostname, time_zone, one_time_key,
                   sign_key, max_file_size, catalog_dir, quiet) -> None:
    """Seal another collector's container as an aitrail bundle (docs/importing.md).

    TOOL is acquire, kape, uac or velociraptor; CONTAINER the archive (tar,
    tar.gz, zip) or directory it wrote. Every file in it is matched against
    the catalog as a live collection would match it (same outcomes; a
    credential the tool took is never_collect and is not carried); times,
    owner and digests are the tool's own records; collection.json's
    foreign_custody says what the tool recorded and what it did not.
    Exit codes: 0 clean; 3 bundle written but some files the tool listed are
    not in its container, or could not be read; 1 no bundle; 2 usage error.
    """
    _refuse_unsupported_platform()
    if one_time_key and sign_key:
        raise click.UsageError("--sign and --sign-key are alternatives")
    for path in (output, output + ".sha256", output + ".partial"):
        if os.path.lexists(path):
            raise click.UsageError(f"{path} exists; aitrail never overwrites a bundle")
    if not os.path.isdir(os.path.dirname(os.path.abspath(output))):
        raise click.UsageError(f"the directory of {output} does not exist")
    options = collect_module.CollectOptions(
        output=output, agents=list(agents), case_id=case_id, examiner=examiner, notes=notes, sign_key=sign_key,
        sign=one_time_key, max_file_size=max_file_size, catalog_dir=catalog_dir, progress=not quiet,
        hostname=hostname, time_zone=time_zone,
    )
    with reported_failures():
        result = import_container(tool, container, options)
    _print_warnings(result)
    _print_summary(result)
    custody = options.foreign.custody() if options.foreign is not None else {}
    for problem in custody.get("problems", [])[:20]:
        click.echo(f"aitrail: container: {terminal_text(problem)}", err=True)
    checks = custody.get("digest_checks", {})
    click.echo(f"container {custody.get('tool')} {custody.get('tool_version') or ''}".rstrip()
               + f"; digests the tool recorded: {checks.get('matches', 0)} match, {checks.get('differs', 0)} differ, "
                 f"{checks.get('not_recorded', 0)} files without one")
    sys.exit(result.exit_code)
