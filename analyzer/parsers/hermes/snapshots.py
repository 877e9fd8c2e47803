"""sessions/session_<id>.json: the optional JSON snapshot of a session (secondary).

[src] pypi hermes-agent 0.19.0 run_agent.py ``_save_session_log``: written
only when ``sessions.write_json_snapshots`` is on (default off), rewritten
after every persistence point: ``{session_id, model, base_url, platform,
session_start, last_updated, system_prompt, tools, message_count, messages}``.
``session_start`` and ``last_updated`` are ``datetime.now().isoformat()``:
local time without a zone, so they are quoted in the ``session:`` row and
never used as times. A message carries a time only where Hermes kept one in
memory (``timestamp``, Unix seconds, as state.db stores it); the others' rows
are untimed. Message content is passed through Hermes' secret redaction when
``HERMES_REDACT_SECRETS`` is on.

The store is secondary: a message state.db also holds gives the same rows and
is dropped by the run; a snapshot of a session deleted from state.db (when
``delete_session`` was not given the sessions directory) keeps its rows.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_list, file_mtime, pointer
from aitrail.analyzer.formats.sqlite_chat import as_text
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .database import at_seconds
from .messages import message_rows

SNAPSHOT_FACTS = ("model", "platform", "base_url", "message_count")


def parse_session_snapshot(ctx: ParseContext) -> Iterator[Draft]:
    """A session snapshot: a ``session:`` row (its local times quoted), then its messages' rows, untimed."""
    document, problem = json_document(ctx.data, "session snapshot")
    if problem is not None:
        yield problem
        return
    session = as_text(document.get("session_id")) or ctx.source.name.removeprefix("session_").removesuffix(".json")
    model = as_text(document.get("model"))
    columns = {"session_id": session, "model": model}
    facts = ", ".join(f"{key}={as_text(document[key])}" for key in SNAPSHOT_FACTS if document.get(key) not in
                      (None, ""))
    local = ", ".join(f"{key}={as_text(document[key])}" for key in ("session_start", "last_updated")
                      if document.get(key) not in (None, ""))
    yield Draft("system", f"session: snapshot ({facts}; {local} local time without a zone; file mtime)",
                pointer("session_id"), **columns, **file_mtime(ctx))
    ledger = BoundedLedger()
    for position, message in enumerate(as_list(document.get("messages"))):
        locator = pointer("messages", position)
        if not isinstance(message, dict):
            yield bad_record(locator, "message is not an object")
            continue
        yield from message_rows(message, locator, {**at_seconds(message.get("timestamp")), **columns}, ledger)
    yield from ledger.orphans()
    yield from ledger.over_limit_rows()
