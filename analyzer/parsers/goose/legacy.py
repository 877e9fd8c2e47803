"""Legacy sessions/<name>.jsonl (Goose before 1.10): a metadata line, then one message per line.

[src] block/goose@01a262b229 crates/goose/src/session/storage.rs (the writer:
``SessionMetadata`` {working_dir, description, schedule_id, message_count,
token counts} as the first line, ``generate_session_id`` a local
``YYYYMMDD_HHMMSS`` file name) and block/goose@0fc5e54062
crates/goose/src/session/legacy.rs (the reader: a first line that is not
metadata is a message). A message line is ``{"role", "created" (Unix s),
"content": [MessageContent]}``, rendered by content.py as the database's
messages are.

The first run of a SQLite version imports every file into sessions.db (the
session id is the file name) and leaves the files in place (storage.rs
``import_legacy``); the store is secondary: rows the database repeats are
dropped by the run, the rest (sessions deleted since, messages replaced by a
compaction) stay, marked secondary.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.sqlite_chat import as_text
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_seconds

from .content import message_rows

METADATA_FACTS = ("description", "working_dir", "schedule_id", "message_count")
TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens", "accumulated_input_tokens",
              "accumulated_output_tokens", "accumulated_total_tokens")


def parse_legacy_session(ctx: ParseContext) -> Iterator[Draft]:
    """A legacy session file: a ``session:`` row from its metadata line, then its messages' rows."""
    session = ctx.source.name.removesuffix(".jsonl")
    ledger = BoundedLedger()
    project = ""
    for item in read_jsonl(ctx):
        if not isinstance(item, Line):
            yield item
            continue
        record = item.value
        if item.number == 1 and "role" not in record and "content" not in record:
            project = as_text(record.get("working_dir"))
            yield from _metadata_rows(ctx, record, item.locator, session)
            continue
        moment = ns_from_seconds(record.get("created"))
        base = {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none",
                "session_id": session, "project_path": project}
        yield from message_rows(record, f"{item.locator}/content", base, ledger)
    yield from ledger.orphans()
    yield from ledger.over_limit_rows()


def _metadata_rows(ctx: ParseContext, record: dict, locator: str, session: str) -> Iterator[Draft]:
    """The metadata line: the session (its description is the title) and its token totals, at the file's mtime."""
    columns = {**file_mtime(ctx), "session_id": session, "project_path": as_text(record.get("working_dir"))}
    facts = ", ".join(f"{key}={as_text(record[key])}" for key in METADATA_FACTS if record.get(key) not in (None, ""))
    yield Draft("system", f"session: {as_text(record.get('description'))} ({facts}; legacy session file, "
                          "file mtime)", locator, **columns)
    counts = [f"{key}={as_text(record[key])}" for key in TOKEN_KEYS if record.get(key) not in (None, "")]
    if counts:
        yield Draft("system", f"tokens generated: model= {' '.join(counts)} (session totals, legacy session file "
                              "metadata, file mtime)", f"{locator}/tokens", **columns)
