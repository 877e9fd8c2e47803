"""``aitrail collect``: the examiner's one command on a subject machine."""

from __future__ import annotations

import contextlib
import os
import re
import sys

import click

from aitrail.collector import collect as collect_module
from aitrail.collector.bundle.display import terminal_text
from aitrail.collector.bundle.seal import SigningKeyError
from aitrail.collector.catalog.schema import CatalogError

_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?i?B?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


class SizeType(click.ParamType):
    """1048576, 512K, 200M, 3G, 3GiB (binary units)."""

    name = "SIZE"

    def convert(self, value, param, ctx):
        """Parse a size with an optional binary unit."""
        if isinstance(value, int):
            return value
        match = _SIZE.match(str(value))
        if not match:
            self.fail(f"{value!r} is not a size like 200M or 3G", param, ctx)
        unit = (match.group(2) or "").upper().replace("I", "").replace("B", "")
        return int(match.group(1)) * _UNITS[unit]


@click.command("collect")
@click.option("--home", "homes", multiple=True, type=click.Path(file_okay=False),
              help="Collect from DIR as a user's home (repeatable). With --root: a home inside the image, by its "
                   "path there (/srv/dev), added to the homes the image's own records give.")
@click.option("--all-users", is_flag=True,
              help="The live passwd database's login users and root, and any account whose home holds agent data.")
@click.option("--root", type=click.Path(file_okay=False, exists=True),
              help="A mounted disk image, recorded as itself: host name and time zone from the image, paths as "
                   "the subject's; homes from its etc/passwd, home/*, Users/*, root and var/root.")
@click.option("--hostname", help="The subject's host name, stated by the examiner (with --root or --home); "
                                 "what the image says is kept beside it.")
@click.option("--time-zone", "time_zone", help="The subject's time zone (e.g. Europe/Berlin), stated by the examiner "
                                               "(with --root or --home).")
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable; see 'aitrail catalog list').")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Bundle to write (BUNDLE.tar.zst).")
@click.option("--case", "case_id", help="Case identifier recorded in the bundle.")
@click.option("--examiner", help="Examiner's name recorded in the bundle.")
@click.option("--notes", help="Free-text notes recorded in the bundle.")
@click.option("--sign", "one_time_key", is_flag=True,
              help="Sign with a key made for this collection alone (never written to disk); note the fingerprint "
                   "printed at the end and pin it at intake: verify --public-key sha256:<hex>.")
@click.option("--sign-key", type=click.Path(dir_okay=False, exists=True),
              help="Sign with this Ed25519 private key (aitrail keygen). The key file must then be on the subject "
                   "machine, where a compromised subject can copy it: prefer --sign.")
@click.option("--dry-run", is_flag=True, help="Show what would be collected; write nothing.")
@click.option("--list", "list_paths", is_flag=True,
              help="With --dry-run: every path that would be read or recorded, with its store and planned outcome.")
@click.option("--max-file-size", type=SizeType(), help="Record larger files as too_large instead of reading them.")
@click.option("--max-file-seconds", type=click.FloatRange(min=0), default=900.0, show_default=True,
              help="Stop reading a large file (over 16 MiB) after this long and record it as a read_error (0: no "
                   "bound); a huge or slow file cannot stall the run.")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False, exists=True),
              help="Use this catalog directory.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def collect(homes, all_users, root, hostname, time_zone, agents, output, case_id, examiner, notes, one_time_key,
            sign_key, dry_run, list_paths, max_file_size, max_file_seconds, catalog_dir, quiet) -> None:
    """Collect every store the catalog names into one sealed evidence bundle.

    Live collection runs on Linux (tested here) and on macOS and the BSDs
    through the POSIX backend (AITRAIL_PLATFORM=posix runs it on Linux; not
    run on a Mac here). Live Windows collection is not supported: collect a
    Windows disk mounted on Linux with --root, or use the KAPE/Velociraptor
    route. Under sudo, the home of SUDO_USER is taken.
    Exit codes: 0 clean; 3 bundle written but some files failed or changed
    while read; 1 no bundle could be produced; 2 usage error.
    """
    _refuse_unsupported_platform()
    if root and all_users:
        raise click.UsageError("--root cannot be combined with --all-users: the image's users are found in it")
    if (hostname or time_zone) and not (root or homes):
        raise click.UsageError("--hostname and --time-zone state a subject collected with --root or --home; "
                               "a live collection records the machine it runs on")
    if not root:
        for home in homes:
            if not os.path.isdir(home):
                raise click.BadParameter(f"directory {home!r} does not exist", param_hint="'--home'")
    if homes and all_users:
        raise click.UsageError("--home and --all-users are alternatives")
    if one_time_key and sign_key:
        raise click.UsageError("--sign and --sign-key are alternatives")
    if list_paths and not dry_run:
        raise click.UsageError("--list lists what a --dry-run would collect; give --dry-run too")
    if not dry_run:
        if not output:
            raise click.UsageError("-o/--output BUNDLE is required (or use --dry-run)")
        if os.path.lexists(output + ".partial"):
            raise click.UsageError(
                f"{output}.partial exists: it was left by a run that was killed before it finished, and it never "
                f"verifies; delete it (rm '{output}.partial') and run again")
        for path in (output, output + ".sha256"):
            if os.path.lexists(path):
                raise click.UsageError(f"{path} exists; aitrail never overwrites a bundle")
        if not os.path.isdir(os.path.dirname(os.path.abspath(output))):
            raise click.UsageError(f"the directory of {output} does not exist")
    options = collect_module.CollectOptions(
        output=output, homes=list(homes), all_users=all_users, root=root, agents=list(agents),
        case_id=case_id, examiner=examiner, notes=notes, sign_key=sign_key, sign=one_time_key, dry_run=dry_run,
        max_file_size=max_file_size, max_file_seconds=max_file_seconds, catalog_dir=catalog_dir, progress=not quiet,
        hostname=hostname, time_zone=time_zone,
    )
    with reported_failures():
        result = collect_module.run(options)
    _print_warnings(result)
    if dry_run:
        _print_dry_run(result)
        if list_paths:
            _print_paths(result)
        return
    _print_summary(result)
    sys.exit(result.exit_code)


@contextlib.contextmanager
def reported_failures():
    """A run's failures as the command line says them: an unknown agent or a bad key exit 2, the rest 1."""
    try:
        yield
    except KeyError as exc:
        raise click.UsageError(f"unknown agent: {exc.args[0]}") from exc
    except CatalogError as exc:
        click.echo("catalog invalid:\n" + str(exc), err=True)
        sys.exit(1)
    except SigningKeyError as exc:
        raise click.UsageError(str(exc)) from exc
    except (collect_module.CollectionError, OSError) as exc:
        click.echo(f"aitrail: no bundle produced: {terminal_text(str(exc))}", err=True)
        sys.exit(1)


def _refuse_unsupported_platform() -> None:
    """On Windows (or with a wrong AITRAIL_PLATFORM), say why and what to do before anything is walked."""
    from aitrail.collector.fs import platform

    try:
        platform.current()
    except platform.PlatformError as exc:
        click.echo(f"aitrail: {exc}", err=True)
        sys.exit(1)


def _print_warnings(result) -> None:
    """Refused relocations and an empty collection are said on stderr, even with --quiet."""
    for override in result.overrides:
        if override.outcome in ("refused", "unreadable"):
            value = "" if override.value is None else f"={override.value!r}"
            click.echo(f"aitrail: {override.outcome}: {override.agent}.{override.root} {override.kind} "
                       f"{override.name}{value}: {override.note}", err=True)
    for warning in result.warnings:
        click.echo(f"aitrail: WARNING: {warning}", err=True)


def _per_agent(result) -> dict[str, dict]:
    table: dict[str, dict] = {}
    for entry in result.entries:
        row = table.setdefault(entry.target.agent, {"files": 0, "bytes": 0, "skipped": 0, "failed": 0})
        if entry.outcome in ("would_collect",):
            row["files"] += 1
            row["bytes"] += entry.meta.size if entry.meta and entry.kind == "file" else 0
        elif entry.outcome in ("excluded", "never_collect", "too_large", "special_file"):
            row["skipped"] += 1
        else:
            row["failed"] += 1
    return table


def _print_dry_run(result) -> None:
    click.echo(f"dry run ({result.mode}); nothing was written")
    host, zone = result.subject
    if host:
        click.echo(f"  subject host {terminal_text(str(host.get('hostname')))} ({host.get('hostname_source')}); "
                   f"time zone {terminal_text(str(zone.get('name') or zone.get('posix_rule')))} ({zone.get('source')})")
    for home in result.homes:
        where = f"{home.subject_path} in the image ({home.found_by})" if home.subject_path else home.path
        click.echo(f"  home {home.label}: {terminal_text(where)}")
    for override in result.overrides:
        state = override.outcome.replace("_", " ")
        click.echo(f"  {override.kind} {override.name}={override.value} ({override.agent}.{override.root}): "
                   f"{state}; {override.note}")
    click.echo(f"{'agent':<22}{'files':>8}{'bytes':>14}{'skipped':>9}{'failed':>8}")
    totals = [0, 0, 0, 0]
    for agent, row in sorted(_per_agent(result).items()):
        click.echo(f"{agent:<22}{row['files']:>8}{row['bytes']:>14}{row['skipped']:>9}{row['failed']:>8}")
        for index, key in enumerate(("files", "bytes", "skipped", "failed")):
            totals[index] += row[key]
    click.echo(f"{'total':<22}{totals[0]:>8}{totals[1]:>14}{totals[2]:>9}{totals[3]:>8}")


def _print_paths(result) -> None:
    """One line per match: planned outcome, agent.store, and the path on the subject (escaped: it is the subject's)."""
    click.echo(f"{'outcome':<15}{'store':<44}path")
    for entry in result.entries:
        shown = terminal_text(entry.raw_abspath.decode("utf-8", "backslashreplace"))
        note = f"  ({entry.reason})" if entry.reason else ""
        click.echo(f"{entry.outcome:<15}{entry.target.store:<44}{shown}{note}")


def _print_summary(result) -> None:
    counts = result.counts
    click.echo(f"bundle   {result.bundle_path}")
    click.echo(f"sha256   {result.bundle_sha256}")
    click.echo(f"matched  {counts['matched']} = collected {counts['collected']} + skipped {counts['skipped']}"
               f" + failed {counts['failed']}")
    click.echo("outcomes " + ", ".join(f"{name} {number}" for name, number in counts["by_outcome"].items()))
    if result.signer_fingerprint:
        click.echo(f"signer   {result.signer_fingerprint}")
        if result.signer_kind == "per-collection":
            click.echo("         a key made for this collection and discarded: write this fingerprint down apart "
                       "from the bundle, and pin it at intake (aitrail verify BUNDLE --public-key "
                       f"{result.signer_fingerprint})")
    if result.exit_code:
        click.echo("PARTIAL: some files failed or changed while read; see aitrail/files.jsonl", err=True)
