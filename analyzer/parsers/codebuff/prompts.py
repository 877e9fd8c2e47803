"""The prompt lists at the root of the config dir: JSON arrays of what was typed, oldest first, no times.

* ``prompt_history.json`` (legacy client, CodebuffAI/codebuff@da0d57111a
  npm-app/src/cli.ts:221, 389-430): every prompt trimmed, an earlier copy of
  the same text removed when it is typed again, so each text once, at its
  last use;
* ``message-history.json`` (current CLI, cli/src/utils/message-history.ts,
  stored copy 690768d23c): the last 1,000 prompts (500 in later builds),
  consecutive repeats collapsed. Later builds keep one history per project
  under a path not read (stored test 69c4e193ad); only the root file is
  catalogued.

Rows: one ``user`` row per entry, untimed (the list keeps no time), no
session. The store is secondary: a prompt that a collected chat holds is
dropped by the run's deduplication, one whose chat was deleted stays.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .chat import short


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """prompt_history.json / message-history.json: a ``user`` row per prompt, in the file's order."""
    entries, problem = json_document(ctx.data, ctx.source.name, kind=list)
    if problem is not None:
        yield problem
        return
    for position, entry in enumerate(entries):
        if not isinstance(entry, str):
            yield bad_record(pointer(position), "a history entry that is not text", short(entry))
            continue
        yield Draft("user", entry, pointer(position), timestamp_source="none")
