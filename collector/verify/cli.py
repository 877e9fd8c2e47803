"""``aitrail verify`` and ``aitrail keygen``."""

from __future__ import annotations

import os
import sys

import click

from aitrail.collector.bundle import seal
from aitrail.collector.verify import verify as verify_bundle
from aitrail.collector.verify.signer_pin import (
    PUBLIC_KEY_HELP,
    REQUIRE_SIGNATURE_HELP,
    SignerPin,
    check_signature_options,
)


@click.command("verify")
@click.argument("bundle", type=click.Path(dir_okay=False, exists=True))
@click.option("--public-key", type=SignerPin(), help=PUBLIC_KEY_HELP)
@click.option("--require-signature", is_flag=True, help=REQUIRE_SIGNATURE_HELP)
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def verify(bundle: str, public_key: str | None, require_signature: bool, quiet: bool) -> None:
    """Re-hash every member and check manifests, index and signature.

    Exit 0 when the bundle is valid, 1 when anything is wrong (each problem named).
    """
    check_signature_options(public_key, require_signature)
    progress = None if quiet else (lambda text: click.echo(f"aitrail: {text}", err=True))
    report = verify_bundle(bundle, public_key, require_signature=require_signature, progress=progress)
    click.echo(f"bundle     {bundle}")
    if report.bundle_sha256:
        click.echo(f"sha256     {report.bundle_sha256}")
    click.echo(f"members    {report.members} ({report.payload_files} payload files, {report.links} links)")
    if report.counts:
        counts = report.counts
        click.echo(f"matches    {counts['matched']} = collected {counts['collected']} + skipped "
                   f"{counts['skipped']} + failed {counts['failed']}")
    click.echo(f"signature  {report.signature}")
    for warning in report.warnings:
        click.echo(f"WARNING  {warning}", err=True)
    if report.ok:
        click.echo("VALID" if report.signed else "VALID (UNSIGNED)")
        return
    for problem in report.problems:
        click.echo(f"FAIL  {problem}", err=True)
    click.echo(f"INVALID: {len(report.problems)} problem(s)")
    sys.exit(1)


@click.command("keygen")
@click.option("-o", "--output", "private_path", required=True, type=click.Path(dir_okay=False),
              help="Private key file to create (PEM, mode 0600); the public key goes to OUTPUT.pub.")
def keygen(private_path: str) -> None:
    """Create an Ed25519 key pair for signing bundles."""
    public_path = private_path + ".pub"
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise click.UsageError(f"{path} exists; keygen never overwrites a key")
    fingerprint = seal.generate(private_path, public_path)
    click.echo(f"private key  {private_path}")
    click.echo(f"public key   {public_path}")
    click.echo(f"fingerprint  {fingerprint}")
