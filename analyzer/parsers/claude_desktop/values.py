"""Claude Desktop: the small readings every parser of this package shares.

* times: the index's epoch-millisecond integers (``createdAt``), read only
  when they are numbers (the app itself rejects a string, per the community
  record reader), written back as UTC text for the row;
* ids: a record's Claude Code session ids (``cliSessionId`` first, then
  ``unarchivedCliSessionId``, ``preClearCliSessionId``, ``priorCliSessionIds``),
  only values that look like UUIDs;
* where things are in the bundle: the Claude Code transcript that holds a
  session (``claude-code.transcripts`` or ``claude-code.cowork_transcripts``,
  found by file name in the same home), an index record by its file name, and
  the audit log beside a Cowork record. Lookups never cross homes (``ctx.related``)
  and are built once per worker (``ctx.cached``).

Nothing here reads a credential: ``facts`` drops every key ``credential_key``
names (``authToken`` among them) before a value is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from aitrail.analyzer.formats.idioms import credential_key, settings_value
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import excerpt, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import format_timestamp, ns_from_ms

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# Claude Code's stores, by their bundle-wide ids (catalog/claude-code.yaml): the Code tab writes into
# ~/.claude/projects, a Cowork engine into its own local_<uuid>/.claude/projects.
CODE_TRANSCRIPTS = "claude-code.transcripts"
COWORK_TRANSCRIPTS = "claude-code.cowork_transcripts"
MAX_JOINED_RECORD = 4 * 1024 * 1024  # an index record read for a join (real ones are a few KB)
MAX_PRIOR_IDS = 200  # prior transcript ids of one record that are named (each gives a row)


def ms_time(value) -> int | None:
    """Epoch milliseconds as ns, only from a JSON number (a string is not the index's time)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return ns_from_ms(value)


def ms_text(value) -> str:
    """``2026-08-30T09:14:02.118Z (epoch ms 1788...)`` for an epoch-ms number, else the value as written."""
    ns = ms_time(value)
    if isinstance(value, str):
        return f"{json.dumps(excerpt(value, 80), ensure_ascii=False)} (a string, not an epoch-ms number)"
    if ns is None:
        return excerpt(as_text(value), 80)
    return f"{format_timestamp(ns)} (epoch ms {as_text(value)})"


def uuid_text(value) -> str:
    """``value`` when it is a UUID string, else ''."""
    return value if isinstance(value, str) and UUID.match(value) else ""


def transcript_ids(record: dict) -> list[tuple[str, str, str]]:
    """(field, Claude Code session id, JSON pointer) of every transcript a record names: current first, no repeats."""
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def add(field: str, value, where: str) -> None:
        session = uuid_text(value)
        if session and session not in seen:
            seen.add(session)
            found.append((field, session, where))

    for field in ("cliSessionId", "unarchivedCliSessionId", "preClearCliSessionId"):
        add(field, record.get(field), f"json:/{field}")
    prior = record.get("priorCliSessionIds")
    if isinstance(prior, list):
        for number, value in enumerate(prior[:MAX_PRIOR_IDS]):
            add("priorCliSessionIds", value, f"json:/priorCliSessionIds/{number}")
    return found


def desktop_id(ctx: ParseContext, record: dict | None = None) -> str:
    """The desktop session id ``local_<uuid>``: the record's ``sessionId``, else the file name."""
    value = (record or {}).get("sessionId")
    if isinstance(value, str) and value.startswith("local_") and len(value) <= 80:
        return value
    name = ctx.source.name
    return name[:-len(".json")] if name.endswith(".json") else name


def facts(record: dict, keys: Iterable[str]) -> str:
    """``key=value, ...`` for the keys present, credentials left out, each value bounded."""
    parts = []
    for key in keys:
        value = record.get(key)
        if value in (None, "", [], {}) or credential_key(key):
            continue
        text = value if isinstance(value, str) else settings_value(value, key)
        parts.append(f"{key}={excerpt(text, 300)}")
    return ", ".join(parts)


def short(value, limit: int = 300) -> str:
    """A value as row text, bounded."""
    return excerpt(as_text(value), limit)


def title_of(record: dict) -> str:
    """The session's title (a bounded string), or ''."""
    return excerpt(record["title"], 300) if isinstance(record.get("title"), str) else ""


def read_record(ctx: ParseContext, source: Source) -> dict | None:
    """Another member's JSON object (an index record read for a join); None when it cannot be read."""
    if source.size > MAX_JOINED_RECORD:
        return None
    try:
        data = ctx.read(source)
    except MemberUnreadable:  # FileTooLarge too: the join is left out, the member has its own rows
        return None
    document, problem = json_document(data, source.name)
    return document if problem is None and isinstance(document, dict) else None


def cowork_record(ctx: ParseContext, session_directory: str) -> tuple[Source | None, dict | None]:
    """The Cowork record ``<org>/local_<uuid>.json`` of a session directory ``<org>/local_<uuid>``, if in the bundle."""
    parent, _, name = session_directory.rpartition("/")
    source = ctx.at(f"{parent}/{name}.json" if parent else f"{name}.json", "cowork_sessions")
    return source, (read_record(ctx, source) if source is not None else None)


def cowork_project(record: dict, source_name: str) -> tuple[str, str]:
    """(project path, the field that gave it) of a Cowork record: the user's first folder, else its sandbox cwd."""
    folder = first_string(record.get("userSelectedFolders"))
    if folder:
        return folder, f"userSelectedFolders[0] of {source_name}"
    if isinstance(record.get("cwd"), str) and record["cwd"]:
        return excerpt(record["cwd"], 1000), f"cwd of {source_name} (the session's sandbox, not a folder of the user's)"
    return "", ""


def transcripts_named(ctx: ParseContext, store: str, session: str) -> list[Source]:
    """The files of a Claude Code store in this home named ``<session>.jsonl`` (by file name, any project)."""
    table = ctx.cached(("transcripts by name", store), lambda: _by_name(ctx.related(store)))
    return list(table.get(f"{session}.jsonl", ()))  # type: ignore[union-attr]


def records_named(ctx: ParseContext, store: str, name: str) -> list[Source]:
    """The files of one of this agent's stores in this home whose file name is ``name`` (every account/org)."""
    table = ctx.cached(("records by name", store), lambda: _by_name(ctx.related(store)))
    return list(table.get(name, ()))  # type: ignore[union-attr]


def _by_name(sources: list[Source]) -> dict[str, list[Source]]:
    table: dict[str, list[Source]] = {}
    for source in sorted(sources, key=lambda item: item.path):
        table.setdefault(source.name, []).append(source)
    return table


def transcript_place(ctx: ParseContext, store: str, session: str, where: str = "") -> tuple[str, bool]:
    """``"<session>.jsonl: in the bundle at <path>"`` or ``"... not in the bundle"``, and whether it is held.

    ``where`` restricts the match to paths starting with it (a Cowork session's own directory).
    """
    found = [source.path for source in transcripts_named(ctx, store, session) if source.path.startswith(where)]
    if found:
        return f"{session}.jsonl in the bundle at {', '.join(found[:5])}", True
    return f"{session}.jsonl not in the bundle", False


def first_string(values, limit: int = 1000) -> str:
    """The first string of a JSON array (a bounded path), or ''."""
    if isinstance(values, list):
        for value in values:
            if isinstance(value, str) and value:
                return excerpt(value, limit)
    return ""


def model_of(record: dict) -> str:
    """The record's model id (a short string), or ''."""
    return label(record.get("model"))
