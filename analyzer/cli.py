"""``aitrail analyze``: the timeline of a bundle, offline, every row traceable."""

from __future__ import annotations

import json
import os
import sys

import click

from aitrail.analyzer.engine.bundle_digest import FileDigest
from aitrail.analyzer.engine.forkpool import WorkerLost
from aitrail.analyzer.outputs.checks import check_outputs
from aitrail.analyzer.outputs.export import FORMATS
from aitrail.collector.bundle.display import terminal_text
from aitrail.collector.verify.signer_pin import (
    PUBLIC_KEY_HELP,
    REQUIRE_SIGNATURE_HELP,
    SignerPin,
    check_signature_options,
)

SUMMARY_COLUMNS = (("agent", "agent", "<"), ("store", "store", "<"), ("files", "files", ">"), ("rows", "rows", ">"),
                   ("bad", "bad_records", ">"), ("unpaired", "unpaired", ">"), ("recovered", "secondary_kept", ">"),
                   ("dup", "secondary_dropped", ">"), ("integrity", "integrity", ">"))


@click.command("analyze")
@click.argument("bundles", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Timeline file to write ('-': standard output).")
@click.option("--format", "format_name", type=click.Choice((*FORMATS, "xlsx")), default="csv", show_default=True,
              help="csv, jsonl, timesketch (JSONL), timesketch-csv, ecs (OpenSearch/Elasticsearch bulk NDJSON) or xlsx "
                   "(every cell text; see docs/outputs.md).")
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable; see 'aitrail catalog list').")
@click.option("--force", is_flag=True, help="Analyze a bundle that fails verification (every output says so).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False),
              help="Also write the summary as JSON (- for stdout, when the timeline goes to a file).")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@click.option("--public-key", type=SignerPin(), help=PUBLIC_KEY_HELP)
@click.option("--require-signature", is_flag=True, help=REQUIRE_SIGNATURE_HELP)
@click.option("--quiet", is_flag=True, help="Nothing on stderr but errors (no progress, no summary table).")
def analyze(bundles, output, format_name, agents, force, summary_path, jobs, public_key, require_signature,
            quiet) -> None:
    """Turn a verified bundle into one timeline (17 columns; see docs/timeline.md).

    Several bundles (one per host, say) are merged into one timeline; each row
    ends with its bundle's host, case_id and bundle_sha256, and the output is
    the same whatever the order of the bundles on the command line.
    Exit codes: 0 done; 1 a bundle failed verification (without --force);
    2 usage error.
    """
    check_outputs(output, summary_path)
    _check_agents(agents)
    check_signature_options(public_key, require_signature)
    if format_name == "xlsx" and output == "-":
        raise click.UsageError("--format xlsx writes a file; give -o a file name")
    # one bundle: its digest is computed on the other core while the analyzer's modules load (bundle_digest.py)
    digesting = FileDigest(bundles[0]) if len(bundles) == 1 else None
    from aitrail.analyzer.engine.coordinator import AnalyzeOptions, NotVerified, SameBundleTwice, Unreadable

    options = AnalyzeOptions(bundle=bundles[0], output=output, format=format_name, agents=list(agents), force=force,
                             jobs=jobs, progress=not quiet, public_key=public_key,
                             require_signature=require_signature, more_bundles=list(bundles[1:]),
                             digesting=digesting)
    try:
        result = _run_xlsx(options) if format_name == "xlsx" else run_analysis(options)
    except NotVerified as exc:
        for problem in exc.problems:
            click.echo(f"FAIL  {problem}", err=True)
        click.echo("aitrail: the bundle failed verification; nothing analyzed (use --force to analyze anyway)",
                   err=True)
        sys.exit(1)
    except SameBundleTwice as exc:
        raise click.UsageError(str(exc)) from exc
    except Unreadable as exc:
        click.echo(f"aitrail: the bundle cannot be read at all, even with --force: {exc}", err=True)
        sys.exit(1)
    except WorkerLost as exc:  # killed, or out of memory: nothing was written
        click.echo(f"aitrail: analysis stopped: {exc}", err=True)
        sys.exit(1)
    summary = result.summary(options)
    if summary_path == "-":
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
    elif summary_path:
        with open(summary_path, "x", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2, sort_keys=True)
            handle.write("\n")
    if not summary["verified"]:  # an error-level fact: said even with --quiet
        click.echo("WARNING: the bundle FAILED verification; this timeline was forced and says so in its first row",
                   err=True)
    if not quiet:
        _print_summary(summary)


def run_analysis(options):
    """``run.analyze(options)``: the analyzer's modules are imported here, once the arguments are checked."""
    from aitrail.analyzer.engine.coordinator import analyze

    return analyze(options)


def _run_xlsx(options):
    """The analysis to a JSONL file beside nothing, then the workbook from it (the output claimed first)."""
    import dataclasses
    import tempfile

    from aitrail.analyzer.outputs.xlsx import write_xlsx

    os.close(os.open(options.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))  # never replace an output
    try:
        with tempfile.TemporaryDirectory(prefix="aitrail-xlsx-") as scratch:
            jsonl = os.path.join(scratch, "timeline.jsonl")
            result = run_analysis(dataclasses.replace(options, output=jsonl, format="jsonl"))
            write_xlsx(jsonl, options.output)
    except BaseException:
        os.unlink(options.output)
        raise
    return result


def _check_agents(agents: tuple[str, ...]) -> None:
    """--agent must name an agent of the installed catalog, as in collect."""
    if not agents:
        return
    from aitrail.collector import catalog

    try:
        known = {agent.agent for agent in catalog.load().agents}
    except catalog.CatalogError as exc:
        raise click.UsageError(f"cannot check --agent: the installed catalog is invalid ({exc})") from exc
    for agent in agents:
        if agent not in known:
            raise click.UsageError(f"unknown agent {agent!r}; known: {', '.join(sorted(known))}")


def summary_table(summary: dict) -> list[str]:
    """The per-store table: column widths from the data, columns two spaces apart."""
    rows = [[str(store[key]) for _, key, _ in SUMMARY_COLUMNS] for store in summary["stores"]]
    header = [title for title, _, _ in SUMMARY_COLUMNS]
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = []
    for cells in (header, *rows):
        parts = [f"{cell:{align}{width}}"
                 for cell, width, (_, _, align) in zip(cells, widths, SUMMARY_COLUMNS, strict=True)]
        lines.append("  ".join(parts).rstrip())
    return lines


NOT_PARSED_SHOWN = 40  # files listed on stderr; --summary and the report list every one


def not_parsed_lines(items: list[dict]) -> list[str]:
    """Collected files no parser read: one line per store (files, bytes, why), then the files themselves."""
    if not items:
        return []
    stores: dict[tuple[str, str, str], list[int]] = {}
    for item in items:
        count = stores.setdefault((item["agent"], item["store"], item["reason"]), [0, 0])
        count[0], count[1] = count[0] + 1, count[1] + item["size"]
    opaque = [item for item in items if item.get("opaque")]
    lines = [f"cannot be read: {terminal_text(item['member'])} ({item['size']} bytes, modified "
             f"{item.get('modified_utc') or 'unknown'}; {terminal_text(item['reason'])})"
             for item in opaque[:NOT_PARSED_SHOWN]]
    if len(opaque) > NOT_PARSED_SHOWN:
        lines.append(f"  ... and {len(opaque) - NOT_PARSED_SHOWN} more that cannot be read (every one in --summary "
                     "and the report)")
    lines.append(f"collected, not parsed: {len(items)} file(s), {sum(item['size'] for item in items)} bytes")
    lines += [f"  {terminal_text(store)}: {files} file(s), {size} bytes ({terminal_text(reason)})"
              for (_, store, reason), (files, size) in sorted(stores.items())]
    lines += [f"  {item['sha256']}  {item['size']:>10}  {terminal_text(item['member'])}"
              for item in items[:NOT_PARSED_SHOWN]]
    if len(items) > NOT_PARSED_SHOWN:
        lines.append(f"  ... and {len(items) - NOT_PARSED_SHOWN} more (every one in --summary and the report)")
    return lines


def _print_summary(summary: dict) -> None:
    echo = lambda text="": click.echo(text, err=True)  # noqa: E731
    for line in summary_table(summary):
        echo(line)
    for line in not_parsed_lines(summary["not_parsed"]):
        echo(line)
    for absence in summary.get("known_absences", []):
        echo(terminal_text(f"known absence: {absence['agent']} {absence['versions']}: {absence['what']} "
                           f"({absence['reason']}); an empty timeline of it is not 'no activity'"))
    if summary.get("signature"):
        echo(f"signature: {summary['signature']}")
    target = "stdout" if summary["output"] == "-" else summary["output"]
    echo(f"{summary['rows']} rows written to {target}")
