"""``--public-key`` and ``--require-signature``, as verify, analyze, report, export and extract take them.

A signer is pinned by its public key (PEM) or by its fingerprint
``sha256:<hex>``: the fingerprint ``aitrail collect --sign`` prints on the
examiner's console for a key made for that one collection (docs/bundle-format.md,
"Signing"). Kept apart from verify so that analyze's command line imports it
before the bundle's digest starts, at no cost.
"""

from __future__ import annotations

import os

import click

from aitrail.collector.bundle import seal


class SignerPin(click.ParamType):
    """``--public-key``: the trusted signer, as a PEM public key file or as its fingerprint ``sha256:<hex>``."""

    name = "KEY|FINGERPRINT"

    def convert(self, value, param, ctx):  # noqa: D102 (click's interface)
        text = str(value)
        if seal.is_fingerprint(text):
            return text.lower()
        if not os.path.exists(text):
            self.fail(f"{text!r} is neither an existing key file nor a fingerprint sha256:<64 hex digits>",
                      param, ctx)
        return text


PUBLIC_KEY_HELP = ("The trusted signer: the fingerprint sha256:<hex> that collect printed (a per-collection key) "
                   "or the examiner's Ed25519 public key (PEM). The signature must verify under it.")
REQUIRE_SIGNATURE_HELP = ("Refuse a bundle unless it is signed by the signer --public-key names "
                          "(it needs --public-key: a signature by a key the bundle names itself proves nothing).")


def check_signature_options(public_key: str | None, require_signature: bool) -> None:
    """--require-signature means a pinned signer: without --public-key it is a usage error."""
    if require_signature and not public_key:
        raise click.UsageError("--require-signature needs --public-key (the signer's fingerprint printed at "
                               "collection, or the examiner's public key): anyone can sign a re-sealed bundle "
                               "with a key of their own and name it in the bundle")
