"""Claude Code paste cache: paste-cache/<contentHash>.txt, the text behind a ``[Pasted text #N]`` placeholder.

A prompt such as ``apply this [Pasted text #1 +42 lines]`` keeps only the
placeholder in history.jsonl; the pasted text itself is written once to
paste-cache/<contentHash>.txt and named from the prompt's
``pastedContents["1"].contentHash``. The history parser already puts the text
back into the prompt it expands; this parser gives each paste file a row of
its own, so a paste stays in the timeline when the prompt that named it is
gone (history.jsonl rotated or deleted, the transcript cleaned up), and an
examiner sees which file every pasted text came from.

Each file is one ``user`` row ``pasted text: <the file's text>``. Where a line
of the history.jsonl beside the paste-cache/ directory names the file's hash,
the row takes that prompt's time, session and project (``timestamp_source``
``index``: the prompt log's time for the paste, not a time of the file's own)
and says which line named it; a file no prompt names is dated by its mtime.

Sample (paste-cache/9f2c4a1b7e3d5c60.txt, named by history.jsonl)::

    Traceback (most recent call last):
      File "app/auth.py", line 88, in login

References: tony/agentgrep@51dbe54014 adapters/claude.py (paste-cache/<contentHash>.txt);
research/formats-cli-agents.md 1.6 (pastedContents {id, type, content | contentHash}).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import json_loads
from aitrail.analyzer.view.rows import Draft, ns_from_ms

PASTE_DIRECTORY = "paste-cache"


@dataclass(frozen=True)
class PasteUse:
    """The first prompt of a history.jsonl that names a paste: its line, time, session, project and paste number."""

    line: int
    timestamp_ns: int | None
    session_id: str
    project_path: str
    number: str
    prompts: int = 1  # how many lines of that history name the same paste


def parse_paste_cache(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.paste_cache.v1: one ``user`` row per paste file, dated by the prompt that named it."""
    text = ctx.data.decode("utf-8", "replace")
    use = _paste_uses(ctx).get(_content_hash(ctx.source.name))
    if use is None:
        yield Draft("user", f"pasted text (no prompt in history.jsonl names it): {text}", "file",
                    timestamp_ns=ctx.source.mtime_ns,
                    timestamp_source="file-mtime" if ctx.source.mtime_ns is not None else "none")
        return
    more = f", and {use.prompts - 1} later prompt(s)" if use.prompts > 1 else ""
    yield Draft("user", f"pasted text (#{use.number} of history.jsonl line {use.line}{more}): {text}", "file",
                timestamp_ns=use.timestamp_ns, timestamp_source="index" if use.timestamp_ns is not None else "none",
                session_id=use.session_id, project_path=use.project_path)


def _content_hash(name: str) -> str:
    return name[:-len(".txt")] if name.endswith(".txt") else name


def _paste_uses(ctx: ParseContext) -> dict[str, PasteUse]:
    """Each content hash's first use, from the history.jsonl of this paste-cache/'s Claude directory (read once)."""
    claude_dir, _, name = ctx.source.directory.rpartition("/")
    if name != PASTE_DIRECTORY:
        return {}
    history = ctx.at(f"{claude_dir}/history.jsonl" if claude_dir else "history.jsonl", "history")
    if history is None:
        return {}
    return ctx.cached(("claude-code-paste-uses", history.member), lambda: _read_uses(ctx, history))


def _read_uses(ctx: ParseContext, history) -> dict[str, PasteUse]:
    """The first use of each paste file beside this one, by its hash.

    Only hashes that name a paste file in the bundle are kept, so the table
    holds one entry per paste file whatever the history names; and the
    history's lines are cut one at a time (a list of the lines of 64 MiB of
    short lines was gigabytes).
    """
    try:
        data = ctx.read(history)
    except MemberUnreadable:  # a history too large or unreadable: the pastes are dated by their files
        return {}
    directory = ctx.source.directory
    present = {_content_hash(source.name) for source in ctx.related("paste_cache") if source.directory == directory}
    uses: dict[str, PasteUse] = {}
    for number, raw in _numbered_lines(data):
        for content_hash, use in _line_uses(number, raw):
            if content_hash not in present:
                continue
            first = uses.get(content_hash)
            uses[content_hash] = use if first is None else PasteUse(
                first.line, first.timestamp_ns, first.session_id, first.project_path, first.number, first.prompts + 1)
    return uses


def _numbered_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of ``data``, one line made at a time; only lines that name a cached paste are cut."""
    number, start = 1, 0
    while True:
        found = data.find(b"contentHash", start)
        if found < 0:
            return
        newline = data.rfind(b"\n", start, found)
        begin = newline + 1 if newline >= 0 else start
        number += data.count(b"\n", start, begin)
        end = data.find(b"\n", found)
        end = len(data) if end < 0 else end
        yield number, data[begin:end]
        number, start = number + 1, end + 1


def _line_uses(number: int, raw: bytes) -> Iterator[tuple[str, PasteUse]]:
    """(contentHash, use) for each cached paste one history line names; nothing for a line that is not one."""
    if b"contentHash" not in raw:
        return
    try:
        record = json_loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return  # the history parser gives this line its own parser: row
    pasted = record.get("pastedContents") if isinstance(record, dict) else None
    if not isinstance(pasted, dict):
        return
    session, project = record.get("sessionId"), record.get("project")
    use = PasteUse(number, ns_from_ms(record.get("timestamp")), session if isinstance(session, str) else "",
                   project if isinstance(project, str) else "", "")
    for key, paste in pasted.items():
        if isinstance(paste, dict) and isinstance(paste.get("contentHash"), str):
            yield paste["contentHash"], PasteUse(use.line, use.timestamp_ns, use.session_id, use.project_path,
                                                 str(key))
