"""OpenAI Codex CLI: rollouts of every format generation, prompt history, thread index, permission state.

The row rules are those of docs/agents/codex.md:

* rollouts (``sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl[.zst]``,
  ``archived_sessions/``, the flat untagged files and the TypeScript CLI's
  ``rollout-<date>-<id>.json``): one row per item, calls joined to results by
  ``call_id``, the prompt/reply/reasoning recorded twice kept once
  (codex_rollout.py, codex_items.py);
* ``history.jsonl`` / ``history.json`` (secondary), ``session_index.jsonl`` and
  ``state_5.sqlite`` (secondary): prompts and threads, a ``session:`` row for a
  thread whose rollout is not in the bundle (codex_index.py);
* ``config.toml``, ``requirements.toml`` and ``rules/*.rules``: ``permission
  setting:`` and ``model:`` rows (codex_config.py).

Sample records::

    {"timestamp":"2026-07-02T09:14:05.243Z","type":"response_item","payload":{"type":"message","role":"user",...}}
    {"session":{"timestamp":"2025-05-02T10:41:07.512Z","id":"8f0c1a2b-...","instructions":""},"items":[...]}
    {"session_id":"01981c3a-...","ts":1782983645,"text":"The login endpoint times out under load."}

References: openai/codex@ed6e5cf919 codex-rs/protocol/src/protocol.rs:2825-2833,2975-2980,
codex-rs/rollout/src/recorder.rs:1360-1391; openai/codex@75febbdefa codex-cli/src/utils/storage/save-rollout.ts:9-42;
openai/codex@5c48600bb3 codex-rs/core/src/rollout/recorder.rs:36-60 (research/formats-cli-agents.md section 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.parsers.codex_config import (
    parse_config,
    parse_requirements,
    parse_rules,
)
from aitrail.analyzer.parsers.codex_index import (
    parse_history,
    parse_history_legacy_json,
    parse_session_index,
    parse_state_db,
)
from aitrail.analyzer.parsers.codex_items import ItemReader, as_dict, as_text
from aitrail.analyzer.parsers.codex_rollout import read_rollout, thread_id_from_name
from aitrail.analyzer.rows import Draft, ns_from_iso

def parse_rollout(ctx: ParseContext) -> Iterator[Draft]:
    """Tagged rollouts, and untagged ones in date folders or archives (each line says which it is)."""
    yield from read_rollout(ctx)


def parse_rollout_untagged(ctx: ParseContext) -> Iterator[Draft]:
    """The flat ``sessions/rollout-*.jsonl`` files of 2025-05 to 2025-07: untagged lines only.

    Same reader: a line of another generation found here is still read as what it is.
    """
    yield from read_rollout(ctx)


def parse_rollout_legacy_json(ctx: ParseContext) -> Iterator[Draft]:
    """The TypeScript CLI's ``{"session": {...}, "items": [...]}``; every row at the session's start."""
    document, problem = json_document(ctx.data, "rollout")
    if problem is not None:
        yield problem
        return
    session = as_dict(document.get("session"))
    # one time for the whole file: the session's start, a session-level time ("index")
    moment = {"timestamp_ns": ns_from_iso(session.get("timestamp")), "timestamp_source": "index",
              "session_id": as_text(session.get("id")) or thread_id_from_name(ctx.source.name)}
    if "session" in document:
        yield Draft("system", f"session start: id={as_text(session.get('id'))} (TypeScript CLI rollout)",
                    "json:/session", **moment)
        instructions = session.get("instructions")
        if isinstance(instructions, str) and instructions.strip():
            yield Draft("system", f"instructions: {instructions}", "json:/session/instructions", **moment)
    else:
        yield bad_record("json:/", "rollout without a session object")
    items = document.get("items")
    if not isinstance(items, list):
        yield bad_record("json:/items", "rollout without an items array")
        return
    reader = ItemReader()
    for position, item in enumerate(items):
        locator = f"json:/items/{position}"
        if not isinstance(item, dict):
            yield bad_record(locator, "item is not an object", json.dumps(item)[:2000])
            continue
        yield from reader.rows(item, locator, moment)
    yield from reader.calls.orphans()


PARSERS = tuple((parser_id, parse) for parser_id, parse in (
    ("codex.rollout.v1", parse_rollout),
    ("codex.rollout_untagged.v1", parse_rollout_untagged),
    ("codex.rollout_legacy_json.v1", parse_rollout_legacy_json),
    ("codex.history.v1", parse_history),
    ("codex.history_legacy_json.v1", parse_history_legacy_json),
    ("codex.session_index.v1", parse_session_index),
    ("codex.state_db.v1", parse_state_db),
    ("codex.config.v1", parse_config),
    ("codex.requirements.v1", parse_requirements),
    ("codex.rules.v1", parse_rules),
))
