"""What every command that writes checks first: its outputs must not exist, their directories must."""

from __future__ import annotations

import os

import click


def check_outputs(output: str, summary_path: str | None) -> None:
    """Before any work: outputs must not exist and their directories must (a usage error, exit 2)."""
    if output == "-" and summary_path == "-":
        raise click.UsageError("-o - and --summary - would both write to stdout; give one a file")
    for path in filter(None, (None if output == "-" else output, None if summary_path == "-" else summary_path)):
        if os.path.lexists(path):
            raise click.UsageError(f"{path} exists; aitrail never overwrites an output")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise click.UsageError(f"{path}: directory {directory} does not exist")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise click.UsageError(f"{path}: directory {directory} is not writable")
