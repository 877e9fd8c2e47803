"""Claude Code prompt history: history.jsonl (+ paste-cache/) and the 1.0.x history in ~/.claude.json.

Both are secondary sources (the second is read by state.parse_global_state):
every prompt in them is also a ``user`` row of a transcript while the
transcript exists, so the rows are written exactly as the transcript's user
row would be (pastes expanded in place of their placeholder, slash commands
as typed) and the run drops the ones a transcript still holds. What stays is
what cleanup or a delete removed.

Sample lines::

    {"display":"check this trace [Pasted text #1 +42 lines]","pastedContents":{"1":{"id":1,"type":"text",
     "contentHash":"9f2c4a1b7e3d5c60"}},"timestamp":1782983910004,"project":"/home/dev/src/acme-api",
     "sessionId":"4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"}
    ~/.claude.json: {"projects":{"/home/dev/old":{"history":[{"display":"fix the build","pastedContents":{}}]}}}

References: anthropics/claude-code@5cfc0a1905 CHANGELOG.md:195,566,1859,3092 (history.jsonl writer);
tony/agentgrep@51dbe54014 adapters/claude.py (paste-cache/<contentHash>.txt);
research/formats-cli-agents.md 1.2, 1.6 (fields, Unix ms timestamps, legacy history).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line, bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

_PASTE = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines)?\]")


def expand_pastes(display: str, pasted, read_cached) -> str:
    """The prompt as sent: each ``[Pasted text #N …]`` replaced by its text, when it can be found.

    A paste's text is inline (``content``) or in paste-cache/<contentHash>.txt
    (``read_cached(hash)``); a placeholder whose text is nowhere stays as it is.
    """
    if not isinstance(pasted, dict) or not pasted:
        return display

    def replace(match: re.Match) -> str:
        paste = pasted.get(match.group(1))
        if not isinstance(paste, dict) or paste.get("type", "text") != "text":
            return match.group(0)
        if isinstance(paste.get("content"), str):
            return paste["content"]
        if isinstance(paste.get("contentHash"), str):
            cached = read_cached(paste["contentHash"])
            if cached is not None:
                return cached
        return match.group(0)

    return _PASTE.sub(replace, display)


# Pasted text put back into the prompts of one history file, in all: a line naming the same
# 64 MiB paste a thousand times must not make a row of 64 GiB (the bytes are in the paste file,
# which is a row of its own). Past it the placeholders stay as written, and a parser: row says so.
PASTE_BUDGET_CHARS = 64 * 1024 * 1024


class _PasteReader:
    """Hash -> text of paste-cache/<hash>.txt beside this history.jsonl, within PASTE_BUDGET_CHARS per file."""

    def __init__(self, ctx: ParseContext):
        def index() -> dict:
            found = {}
            for source in ctx.related("paste_cache"):
                if source.name.endswith(".txt"):
                    found[(source.directory, source.name.removesuffix(".txt"))] = source
            return found

        self.ctx = ctx
        self.sources = ctx.cached(("claude-code-paste-cache",), index)
        self.directory = f"{ctx.source.directory}/paste-cache" if ctx.source.directory else "paste-cache"
        self.spent = 0
        self.over_at: int | None = None  # the first line whose paste did not fit
        self.line = 0
        self._last: tuple[str, str | None] = ("", None)  # one decoded paste kept: a hash read once a run of lines

    def __call__(self, content_hash: str) -> str | None:
        source = self.sources.get((self.directory, content_hash))
        if source is None:
            return None
        if self.spent + source.size > PASTE_BUDGET_CHARS:  # a UTF-8 byte is at most one character
            self.over_at = self.over_at or self.line
            return None
        if self._last[0] != content_hash:
            try:
                self._last = (content_hash, self.ctx.read(source).decode("utf-8", "replace"))
            except MemberUnreadable:  # an unreadable paste file leaves its placeholder in place
                self._last = (content_hash, None)
        text = self._last[1]
        self.spent += len(text) if text is not None else 0
        return text


def parse_history(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.history.v1: one ``user`` row per submitted prompt, at its Unix-ms ``timestamp``."""
    read_cached = _PasteReader(ctx)

    def row(line: Line) -> Iterator[Draft]:
        read_cached.line = line.number
        yield from _prompt_row(line, read_cached)

    yield from each_line(ctx, row)
    if read_cached.over_at is not None:
        yield over_limit("pasted text", f"{PASTE_BUDGET_CHARS} characters put back into this file's prompts",
                         f"from line {read_cached.over_at} on, placeholders whose paste did not fit are left as "
                         "written (each paste file is a row of its own)", f"line:{read_cached.over_at}")


def _prompt_row(line: Line, read_cached) -> Iterator[Draft]:
    record = line.value
    display = record.get("display")
    if not isinstance(display, str):
        yield bad_line(line.number, "a history line without display text", line.raw)
        return
    time = ns_from_ms(record.get("timestamp"))
    session = record.get("sessionId")
    project = record.get("project")
    yield Draft("user", expand_pastes(display, record.get("pastedContents"), read_cached), line.locator,
                timestamp_ns=time, timestamp_source="record" if time is not None else "none",
                session_id=session if isinstance(session, str) else "",
                project_path=project if isinstance(project, str) else "")


def load_state(ctx: ParseContext) -> tuple[dict | None, Draft | None]:
    """~/.claude.json as an object, or the parser: row that says why it is not one."""
    return json_document(ctx.data, ctx.source.name)


def projects(document: dict) -> tuple[dict, Draft | None]:
    """The ``projects`` map of ~/.claude.json, or an empty map and the parser: row that says why."""
    value = document.get("projects", {})
    if isinstance(value, dict):
        return value, None
    return {}, bad_record(pointer("projects"), f"projects is a JSON {type(value).__name__}, not an object")


def legacy_prompts(mapping: dict) -> Iterator[Draft]:
    """``user`` rows from projects[<path>].history[] of ~/.claude.json (1.0.x; no time, no session)."""
    for path, project in mapping.items():
        entries = project.get("history") if isinstance(project, dict) else None
        if entries is None:
            continue
        if not isinstance(entries, list):
            yield bad_record(pointer("projects", path, "history"), "history is not an array")
            continue
        for position, item in enumerate(entries):
            where = pointer("projects", path, "history", position)
            if not isinstance(item, dict) or not isinstance(item.get("display"), str):
                yield bad_record(where, "history entry without display text", json.dumps(item, ensure_ascii=False))
                continue
            text = expand_pastes(item["display"], item.get("pastedContents"), lambda _hash: None)
            yield Draft("user", text, where, timestamp_source="none", project_path=path)
