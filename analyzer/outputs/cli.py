"""``aitrail export bodyfile`` and ``aitrail extract``: the bundle's files for other tools, after verifying."""

from __future__ import annotations

import os
import sys

import click

from aitrail.analyzer.outputs.checks import check_outputs
from aitrail.collector.bundle.display import terminal_text
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader
from aitrail.collector.verify import verify
from aitrail.collector.verify.signer_pin import (
    PUBLIC_KEY_HELP,
    REQUIRE_SIGNATURE_HELP,
    SignerPin,
    check_signature_options,
)

BUNDLE = click.argument("bundle", type=click.Path(dir_okay=False, exists=True))
PUBLIC_KEY = click.option("--public-key", type=SignerPin(), help=PUBLIC_KEY_HELP)
REQUIRE_SIGNATURE = click.option("--require-signature", is_flag=True, help=REQUIRE_SIGNATURE_HELP)


def verified_reader(bundle: str, public_key: str | None, require_signature: bool) -> BundleReader:
    """An open reader of a bundle that verified; a failed bundle ends the command with exit 1."""
    check_signature_options(public_key, require_signature)
    report = verify(bundle, public_key, require_signature)
    if not report.ok:
        for problem in report.problems:
            click.echo(f"FAIL  {problem}", err=True)
        click.echo("aitrail: the bundle failed verification; nothing written", err=True)
        sys.exit(1)
    try:
        return BundleReader(bundle)
    except (BundleFormatError, OSError) as exc:  # it changed since verify read it
        click.echo(f"aitrail: cannot reopen the bundle: {exc}", err=True)
        sys.exit(1)


@click.group("export")
def export() -> None:
    """Write a verified bundle for other forensic tools (bodyfile, dissect)."""


@export.command("bodyfile")
@BUNDLE
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Bodyfile to write ('-': standard output).")
@click.option("--hash", "hash_field", type=click.Choice(["none", "sha256"]), default="none", show_default=True,
              help="What the first (MD5) field holds: 0, which plaso reads without a warning, or the collected "
                   "file's SHA-256 (plaso warns 'invalid MD5 value' on each such line; mactime does not check it).")
@PUBLIC_KEY
@REQUIRE_SIGNATURE
def bodyfile(bundle: str, output: str, hash_field: str, public_key: str | None, require_signature: bool) -> None:
    """Every matched file's MACB times, inode, mode, owner and size as a mactime 3.x bodyfile.

    Read from aitrail/files.jsonl after the bundle verifies (docs/outputs.md).
    Exit codes: 0 written; 1 the bundle failed verification; 2 usage error.
    """
    from aitrail.analyzer.outputs.bodyfile import bodyfile_lines

    check_outputs(output, None)
    reader = verified_reader(bundle, public_key, require_signature)
    with reader:
        handle = sys.stdout if output == "-" else open(output, "x", encoding="utf-8", newline="\n")
        try:
            count = 0
            for line in bodyfile_lines(reader, hash_field):
                handle.write(line)
                count += 1
        finally:
            if handle is not sys.stdout:
                handle.close()
    click.echo(f"{count} bodyfile lines written to {'stdout' if output == '-' else output}", err=True)


@export.command("dissect")
@BUNDLE
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Tar to write (a new file; plain, uncompressed: dissect reads it in place).")
@PUBLIC_KEY
@REQUIRE_SIGNATURE
def dissect(bundle: str, output: str, public_key: str | None, require_signature: bool) -> None:
    """A plain tar in UAC's layout that dissect.target opens: [root]/<subject paths> and system files made for it.

    The collected files keep their bytes, modes, owners and times; etc/hostname,
    etc/passwd, etc/os-release and etc/timezone (or macOS's equivalents) are
    made from collection.json, and [root]/aitrail-export/README.txt says so
    (docs/dissect.md). Unsafe paths are refused and named.
    Exit codes: 0 written; 1 verification failed, some paths were refused, or the tar could not be finished;
    2 usage error.
    """
    from aitrail.analyzer.outputs.dissect import ExportError, export_dissect

    check_outputs(output, None)
    reader = verified_reader(bundle, public_key, require_signature)
    with reader:
        try:
            report = export_dissect(reader, output)
        except (ExportError, BundleFormatError, OSError) as exc:
            click.echo(f"aitrail: {terminal_text(exc)}; no tar written", err=True)
            sys.exit(1)
    for refusal in report.refused:
        click.echo(f"REFUSED  {terminal_text(refusal)}", err=True)  # a subject's path: never a forged line
    made = ", ".join(entry.path for entry in report.made if entry.data is not None) or "nothing"
    click.echo(f"{report.files} files ({report.bytes} bytes) and {report.links} links written to {output}; "
               f"made for dissect ({report.subject.system}): {made}", err=True)
    if report.refused:
        sys.exit(1)


@click.command("extract")
@BUNDLE
@click.argument("directory", type=click.Path(file_okay=False))
@PUBLIC_KEY
@REQUIRE_SIGNATURE
def extract(bundle: str, directory: str, public_key: str | None, require_signature: bool) -> None:
    """Write a verified bundle's collected files under their subject paths, with modes and times.

    DIRECTORY must not exist. Links are made as links and never followed;
    unsafe paths are refused and named (docs/outputs.md).
    Exit codes: 0 all written; 1 verification failed or some paths were refused; 2 usage error.
    """
    from aitrail.analyzer.outputs.extract import extract as extract_payload

    if os.path.lexists(directory):
        raise click.UsageError(f"{directory} exists; aitrail extracts only into a new directory")
    parent = os.path.dirname(os.path.abspath(directory))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.UsageError(f"{directory}: directory {parent} does not exist or is not writable")
    reader = verified_reader(bundle, public_key, require_signature)
    with reader:
        report = extract_payload(reader, directory)
    for refusal in report.refused:
        click.echo(f"REFUSED  {terminal_text(refusal)}", err=True)  # a subject's path: never a forged line
    click.echo(f"{report.files} files ({report.bytes} bytes) and {report.links} links written below {directory}",
               err=True)
    if report.refused:
        sys.exit(1)
