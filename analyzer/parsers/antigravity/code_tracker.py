"""``code_tracker/**/*.json(l)``: the early IDE's chat lines (generation 0), each behind a binary prefix.

Record [obs: cli-continues ``parseLegacyLine``, cli-continues#38]: bytes up to
the first ``{``, then ``{"type": "user" | "assistant", "content", "timestamp"}``.
On current installs code_tracker/ holds snapshots of edited files instead,
so a line that does not decode to such an object is content of a snapshot,
not damage: such lines are counted, and one ``code tracker snapshot:`` row
per file says how many were not read. ``timestamp`` is text; it times the row only
when it carries a zone, and is otherwise kept in the row, as written.
The session is the file's path below code_tracker/ (no id is recorded).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso

ROLES = ("user", "assistant")


def _chat_line(raw: bytes) -> dict | None:
    start = raw.find(b"{")
    if start < 0:
        return None
    try:
        value = decode_json(raw[start:].decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, dict) and value.get("type") in ROLES and isinstance(value.get("content"), str):
        return value
    return None


def _session(ctx: ParseContext) -> str:
    path = ctx.source.path
    marker = "code_tracker/"
    return path[path.index(marker) + len(marker):].rsplit(".", 1)[0] if marker in path else ctx.source.name


def parse_code_tracker(ctx: ParseContext) -> Iterator[Draft]:
    """A user or assistant row per chat line; one ``code tracker snapshot:`` row counts the other lines."""
    session = f"code_tracker:{_session(ctx)}"
    other = total = 0
    for line in ctx.lines():
        if isinstance(line, Draft):
            yield line
            continue
        total += 1
        record = _chat_line(line.raw)
        if record is None:
            other += line.raw.strip() != b""
            continue
        stamp = record.get("timestamp")
        when = ns_from_iso(stamp)
        text = record["content"]
        if when is None and isinstance(stamp, str) and stamp:
            text = f"{text}\n[recorded time without a zone: {stamp}]"
        yield Draft(record["type"], text, f"line:{line.number}", timestamp_ns=when,
                    timestamp_source="record" if when is not None else "none", session_id=session)
    if other:
        yield Draft("system", f"code tracker snapshot: {other} of {total} lines are not chat records (file snapshot "
                              "content), not read", "file", timestamp_source="none", session_id=session)
