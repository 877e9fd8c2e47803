"""``aitrail report``: verified bundles as one self-contained HTML page for examiners."""

from __future__ import annotations

import sys

import click

from aitrail.analyzer.outputs.checks import check_outputs
from aitrail.analyzer.outputs.cli import PUBLIC_KEY, REQUIRE_SIGNATURE
from aitrail.collector.verify.signer_pin import check_signature_options


@click.command("report")
@click.argument("bundles", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option("--force", is_flag=True, help="Report on bundles that fail verification (the page says FAILED).")
@click.option("--jobs", type=click.IntRange(min=1), help="Analysis worker processes (default: one per core).")
@PUBLIC_KEY
@REQUIRE_SIGNATURE
def report(bundles: tuple[str, ...], output: str, force: bool, jobs: int | None, public_key: str | None,
           require_signature: bool) -> None:
    """Write one self-contained HTML report of verified bundles (see docs/report.md).

    Each bundle is verified, then analyzed; the page holds the case, hosts,
    collection accounting, verification, activity charts, findings and every
    session as a conversation. It loads nothing from the network.
    Exit codes: 0 written; 1 a bundle failed verification (unless --force); 2 usage error.
    """
    check_signature_options(public_key, require_signature)
    from aitrail.analyzer.engine.coordinator import NotVerified, Unreadable
    from aitrail.analyzer.report.build import ReportOptions, check_bundles, write_report

    check_outputs(output, None)
    options = ReportOptions(sorted(set(bundles)), output, force, public_key, require_signature, jobs)
    checked, failures = check_bundles(options)
    for failure in failures:
        click.echo(f"FAIL  {failure}", err=True)
    if failures and not force:
        click.echo("aitrail: a bundle failed verification; nothing written (use --force to report anyway)", err=True)
        sys.exit(1)
    try:
        prepared = write_report(options, checked)
    except (NotVerified, Unreadable) as exc:
        click.echo(f"aitrail: a bundle cannot be analyzed: {exc}", err=True)
        sys.exit(1)
    click.echo(f"report of {len(prepared)} bundle(s) written to {output}", err=True)
