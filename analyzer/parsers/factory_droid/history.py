"""state/history.json (moved there from ~/.factory/history.json): the prompts typed in the TUI.

A JSON array of ``{command, timestamp, type, mode}`` (bundle ``addCommand(L,e="message",I="chat")``;
``timestamp`` is a ``Date`` written by JSON.stringify: ISO 8601 UTC with ``Z``), the last
1000 kept. Typing the same prompt again moves the last entry's time forward instead of
adding one, so a time is the prompt's last use. It survives the sessions it came from.

Rows (secondary: the transcript holds the same prompts): a ``type`` "message" entry is a
``user`` row at its time; any other type ``history entry (<type>, mode <mode>): <command>``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .content import compact


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """history.json: a ``user`` row per prompt entry, a ``history entry`` row per other entry, at its time."""
    entries, problem = json_document(ctx.data, "history.json", kind=list)
    yield from (problem,) if problem is not None else (_entry_row(pointer(n), entry) for n, entry in enumerate(entries))


def _entry_row(where: str, entry) -> Draft:
    """One history entry as its row; an entry without its command text is a ``parser:`` row."""
    command = entry.get("command") if isinstance(entry, dict) else None
    if not isinstance(command, str):
        return bad_record(where, "no command text", compact(entry))
    moment = ns_from_iso(entry.get("timestamp"))
    source = "record" if moment is not None else "none"
    kind = entry.get("type", "message")
    if kind == "message":
        return Draft("user", command, where, timestamp_ns=moment, timestamp_source=source)
    label = f"history entry ({compact(kind)}, mode {compact(entry.get('mode', ''))})"
    return Draft("system", f"{label}: {command}", where, timestamp_ns=moment, timestamp_source=source)
