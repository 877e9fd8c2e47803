"""A ParseContext over fake files of a made-up agent, for testing family walks directly."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import FakeBundle


def context(files: dict[tuple[str, str], bytes], path: str) -> ParseContext:
    """The context for ``path`` among ``files`` ({(store, path): bytes}), with a fresh join cache."""
    bundle = FakeBundle(files)
    return ParseContext(bundle, bundle.source(path), {})


def state_db(rows: dict[str, str]) -> bytes:
    """A minimal state.vscdb holding these ItemTable rows."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "state.vscdb"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        connection.executemany("INSERT INTO ItemTable VALUES (?, ?)", list(rows.items()))
        connection.commit()
        connection.close()
        return path.read_bytes()
