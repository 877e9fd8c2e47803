"""Claude Desktop tombstones: ``deleted_<uuid>`` left where a session's ``local_<uuid>.json`` was.

IRFlow documents the Code tab's: the file name carries the session's uuid and
the whole 13-byte content is the deletion time in epoch milliseconds (no
newline). The row is ``session deleted: <uuid> at <time> (...)``, timed by
that content (``record``); the engine turns it into an ``integrity: deletion
marker`` finding. What else the bundle still holds is said in the same row: a
copy of the session's record under another account/org directory (the app
copies records on an org switch and writes only the active one), the Claude
Code transcript the copy names, and for a Cowork session its directory's
audit log. Content that is not 13 ASCII digits (surrounding white space
allowed) is not a time: the row is then
timed by the file's mtime and a ``parser:`` row says what the content was (its
length and an excerpt; a tombstone holds nothing secret).

Sample: ``claude-code-sessions/<acct>/<org>/deleted_55aa66bb-0000-4000-8000-000000000001``
holding ``1788003600123``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms

from .values import (
    CODE_TRANSCRIPTS,
    COWORK_TRANSCRIPTS,
    read_record,
    records_named,
    title_of,
    transcript_ids,
    transcript_place,
)

MAX_TOMBSTONE = 64  # bytes read of a tombstone (real ones are 13)
_DIGITS = re.compile(rb"^[0-9]{13}$")


def parse_tombstone(ctx: ParseContext) -> Iterator[Draft]:
    """One ``session deleted:`` row at the deletion time the tombstone holds, with what survives of the session."""
    uuid = ctx.source.name.removeprefix("deleted_")
    cowork = "local-agent-mode-sessions/" in f"/{ctx.source.path}"
    content = b"" if ctx.source.size > MAX_TOMBSTONE else ctx.data
    digits = content.strip(b" \t\r\n")
    ns = ns_from_ms(int(digits)) if _DIGITS.match(digits) else None
    survivors, session = _survivors(ctx, uuid, cowork)
    where = f"Claude Desktop {'Cowork' if cowork else 'Code tab'} session local_{uuid}"
    if ns is not None:
        when = {"timestamp_ns": ns, "timestamp_source": "record"}
        text = f"session deleted: {uuid} at {format_timestamp(ns)} ({where}; tombstone {ctx.source.name} holds " \
               f"epoch ms {digits.decode()}"
    else:
        when = file_mtime(ctx)
        text = f"session deleted: {uuid} ({where}; tombstone {ctx.source.name} holds no epoch-ms time, timed by " \
               f"the file's mtime"
        yield bad_file(_bad_content(ctx, content))
    yield Draft("system", f"{text}; {survivors})", "file", session_id=session or f"local_{uuid}", **when)


def _bad_content(ctx: ParseContext, content: bytes) -> str:
    if ctx.source.size > MAX_TOMBSTONE:
        return f"a tombstone is 13 bytes of epoch milliseconds; this one is {ctx.source.size} bytes"
    shown = excerpt(content.strip(), 40).encode("unicode_escape").decode("ascii")
    return f"a tombstone is 13 bytes of epoch milliseconds; this one is {len(content)} bytes: {shown}"


def _survivors(ctx: ParseContext, uuid: str, cowork: bool) -> tuple[str, str]:
    """What the bundle still holds of the session (text), and its Claude Code session id if a copy names one."""
    store = "cowork_sessions" if cowork else "code_sessions"
    copies = records_named(ctx, store, f"local_{uuid}.json")
    parts, session = [], ""
    if not copies:
        parts.append("no copy of its record is in the bundle")
    for copy in copies[:5]:
        record = read_record(ctx, copy)
        if record is None:
            parts.append(f"a copy of its record survives at {copy.path} (not readable as JSON)")
            continue
        ids = transcript_ids(record)
        title = title_of(record)
        parts.append(f"a copy of its record survives at {copy.path} (title \"{title}\", "
                     f"cliSessionId {ids[0][1] if ids else 'not recorded'})")
        for _, cli, _ in ids[:20]:
            session = session or cli
            where = f"{copy.directory}/local_{uuid}/" if cowork else ""
            place, _ = transcript_place(ctx, COWORK_TRANSCRIPTS if cowork else CODE_TRANSCRIPTS, cli, where)
            parts.append(f"transcript {place}")
    if cowork:
        directory = f"{ctx.source.directory}/local_{uuid}" if ctx.source.directory else f"local_{uuid}"
        audit = ctx.at(f"{directory}/audit.jsonl", "cowork_audit")
        parts.append(f"audit log {'in the bundle at ' + audit.path if audit else 'not in the bundle'}")
    return "; ".join(dict.fromkeys(parts)), session
