"""Continue's SQLite files: dev_data/devdata.sqlite and the editor's state.vscdb (Continue.continue row)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import number
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.formats.vscode_state import StateUnreadable, extension_state, read_row
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

EXTENSION_ROW = "Continue.continue"  # the globalState key: the manifest's publisher.name casing
QUICK_EDIT_KEY = "quickEditHistory"
# SQLite's CURRENT_TIMESTAMP: "YYYY-MM-DD HH:MM:SS", UTC by SQLite's definition (the column's DEFAULT)
_CURRENT_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


def parse_devdata_sqlite(ctx: ParseContext) -> Iterator[Draft]:
    """devdata.sqlite (secondary): one ``tokens generated:`` row per tokens_generated row, at its timestamp.

    The text is that of dev_data/0.2.0/tokensGenerated.jsonl, which Continue writes
    for the same request, so the rows it repeats are dropped.
    """
    def rows(connection: sqlite3.Connection) -> Iterator[Draft]:
        if not sqlite_safe.is_real_table(connection, "tokens_generated"):
            yield bad_file(f"{ctx.source.name}: no tokens_generated table")
            return
        for row in sqlite_safe.table_rows(connection, "tokens_generated", "tokens_generated rows"):
            yield _tokens_row(row)

    yield from each_database_row(ctx, rows)


def _tokens_row(row: dict) -> Draft:
    locator = f"sqlite:tokens_generated:{row.get('_rowid')}"
    if any(isinstance(value, sqlite_safe.Oversize) for value in row.values()):
        return bad_record(locator, "value too long to read")
    model = "" if row.get("model") is None else str(row["model"])
    text = (f"tokens generated: model={model} provider={'' if row.get('provider') is None else row['provider']} "
            f"promptTokens={number(row.get('tokens_prompt'))} generatedTokens={number(row.get('tokens_generated'))}")
    moment = _utc_text(row.get("timestamp"))
    return Draft("system", text, locator, model=model, timestamp_ns=moment,
                 timestamp_source="record" if moment is not None else "none")


def _utc_text(value) -> int | None:
    """The column's CURRENT_TIMESTAMP text (UTC by SQLite's definition), or ISO text with a zone."""
    if isinstance(value, str) and _CURRENT_TIMESTAMP.match(value):
        return ns_from_iso(value.replace(" ", "T") + "Z")
    return ns_from_iso(value)


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.vscdb (and its .backup): one ``user`` row per Quick Edit prompt in the Continue.continue row.

    quickEditHistory is the 50 newest prompts typed into Quick Edit, oldest first, with
    no time; a database or row that cannot be read is one ``parser:`` row.
    """
    try:
        locator, history = _quick_edit_history(ctx)
    except StateUnreadable as exc:
        yield bad_file(f"{ctx.source.name}: {exc}")
        return
    if history is None:
        return
    if not isinstance(history, list):
        yield bad_record(locator, f"{QUICK_EDIT_KEY} is a JSON {type(history).__name__}, not an array")
        return
    for position, prompt in enumerate(history):
        if isinstance(prompt, str):
            yield Draft("user", prompt, f"{locator}/{position}", timestamp_source="none")
        else:
            yield bad_record(f"{locator}/{position}", "Quick Edit prompt is not text")


def _quick_edit_history(ctx: ParseContext) -> tuple[str, object]:
    """(locator, value) of quickEditHistory; None for the value when the row or key is absent."""
    row = read_row(ctx, EXTENSION_ROW)
    if row is None:
        return "", None
    return f"{row.locator()}/{QUICK_EDIT_KEY}", extension_state(row).get(QUICK_EDIT_KEY)
