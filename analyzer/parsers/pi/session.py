"""Pi session files: the shared Pi session walk (analyzer/formats/pi_session.py) over one ``.jsonl`` file.

A session file is a header line (``type: session``: id, version, cwd,
parentSession) and then entries, one a line; the walk gives a row per entry
and per content block on every branch of the id/parentId tree, then the calls
never answered and one ``branch:`` row per abandoned run of lines. The
session id is the header's, else the one in the file name
(``<time>_<uuid>.jsonl``).

The tree budget is this module's TREE_ENTRIES, read at call time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats import pi_session
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

# <ISO time with : and . as ->_<uuid>.jsonl (session-manager.ts:421-423)
_FILE_NAME = re.compile(r"^\d{4}-\d\d-\d\dT[\d-]+Z?_(?P<id>[0-9A-Za-z-]+)\.jsonl$")
TREE_ENTRIES = pi_session.TREE_ENTRIES


class SessionReader(pi_session.PiSessionWalk):
    """The walk over one pi session file: lines are entries, named ``line N``."""

    def __init__(self, ctx: ParseContext) -> None:
        named = _FILE_NAME.match(ctx.source.name)
        super().__init__(named.group("id") if named else "")

    def tree_limit(self) -> int:
        """This module's TREE_ENTRIES, read at call time."""
        return TREE_ENTRIES


def parse_session(ctx: ParseContext) -> Iterator[Draft]:
    """A Pi session ``.jsonl`` (v1, v2 or v3): rows per entry and block, then orphans and abandoned branches."""
    reader = SessionReader(ctx)
    for item in read_jsonl(ctx):
        if isinstance(item, Line):
            yield from reader.rows(item)
        else:
            yield item
    yield from reader.finish()
