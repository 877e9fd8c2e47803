"""``aitrail analyze``: the timeline of a bundle, offline, every row traceable."""

from __future__ import annotations

import json
import os
import sys

import click

from aitrail.analyzer.export import FORMATS
from aitrail.analyzer.run import AnalyzeOptions, NotVerified, Unreadable, analyze as run_analysis


@click.command("analyze")
@click.argument("bundle", type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Timeline file to write.")
@click.option("--format", "format_name", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable).")
@click.option("--force", is_flag=True, help="Analyze a bundle that fails verification (every output says so).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False), help="Also write the summary as JSON.")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def analyze(bundle, output, format_name, agents, force, summary_path, jobs, quiet) -> None:
    """Turn a verified bundle into one timeline (17 columns; see docs/timeline.md).

    Exit codes: 0 done; 1 the bundle failed verification (without --force);
    2 usage error.
    """
    for path in filter(None, (output, summary_path)):
        if os.path.lexists(path):
            raise click.UsageError(f"{path} exists; aitrail never overwrites an output")
    options = AnalyzeOptions(bundle=bundle, output=output, format=format_name, agents=list(agents), force=force,
                             jobs=jobs, progress=not quiet)
    try:
        result = run_analysis(options)
    except NotVerified as exc:
        for problem in exc.problems:
            click.echo(f"FAIL  {problem}", err=True)
        click.echo("aitrail: the bundle failed verification; nothing analyzed (use --force to analyze anyway)", err=True)
        sys.exit(1)
    except Unreadable as exc:
        click.echo(f"aitrail: the bundle cannot be read at all, even with --force: {exc}", err=True)
        sys.exit(1)
    summary = result.summary(options)
    if summary_path:
        with open(summary_path, "x", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2, sort_keys=True)
            handle.write("\n")
    _print_summary(summary)


def _print_summary(summary: dict) -> None:
    echo = lambda text="": click.echo(text, err=True)  # noqa: E731
    if not summary["verified"]:
        echo("WARNING: the bundle FAILED verification; this timeline was forced and says so in its first row")
    echo(f"{'agent':<14}{'store':<40}{'files':>6}{'rows':>8}{'bad':>6}{'recovered':>10}{'dup':>6}")
    for store in summary["stores"]:
        echo(f"{store['agent']:<14}{store['store']:<40}{store['files']:>6}{store['rows']:>8}"
             f"{store['bad_records']:>6}{store['secondary_kept']:>10}{store['secondary_dropped']:>6}")
    for item in summary["not_parsed"]:
        echo(f"not parsed (no parser yet for {item['parser']}): {item['files']} file(s) of {item['store']}")
    echo(f"{summary['rows']} rows written to {summary['output']}")
