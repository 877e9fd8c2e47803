"""plans/<time>-<slug>.md: a plan-mode plan of a project without git, named after its session.

Kilo names the file ``[session.time.created, session.slug].join("-") + ".md"``
(kilo 7.7.9 anchor ``xnL.join(r$.Path.data,"plans")``): the session's creation time
in Unix ms and its slug, which the session's ``session metadata:`` row in kilo.db
carries too (``slug=...``). The plan is rewritten in place while it is drafted, so
the row is timed by the file's mtime; the name's time is the session's, and is said
in the row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms

_NAME = re.compile(r"^(\d{10,16})-(.+)\.md$")
ASCII_SPACE = " \t\r\n"


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """A plan file: one ``plan:`` row at the file's mtime, naming the session (slug, creation time) of its name."""
    try:
        text = ctx.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield bad_file(f"{ctx.source.name} is not UTF-8 at byte {exc.start}")
        return
    body = text.strip(ASCII_SPACE)  # only ASCII space: a control character is content
    if body:
        yield Draft("system", f"plan: {_session_of(ctx.source.name)}{body}", "file", **file_mtime(ctx))


def _session_of(name: str) -> str:
    """``(session <slug>, created <time>) `` from a file name of the documented form; '' otherwise."""
    match = _NAME.match(name)
    if match is None:
        return ""
    created = format_timestamp(ns_from_ms(int(match.group(1))))
    return f"(session slug {match.group(2)}, created {created or match.group(1)}) "
