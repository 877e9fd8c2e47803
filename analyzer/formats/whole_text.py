"""A whole text file (a plan, a note) as one string, or the ``parser:`` row that says why it cannot be read.

Plans and notes are Markdown rewritten in place: one row each, the file read
whole within MAX_DOCUMENT_BYTES. ``file_body`` gives the text without its
surrounding ASCII white space (a control character is content and stays).
"""

from __future__ import annotations

from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

ASCII_SPACE = " \t\r\n"


def file_body(ctx: ParseContext) -> tuple[str, Draft | None]:
    """(the UTF-8 text without surrounding ASCII space, None), or ('', the ``parser: unparseable file`` row)."""
    try:
        return ctx.data.decode("utf-8").strip(ASCII_SPACE), None
    except UnicodeDecodeError as exc:
        return "", bad_file(f"{ctx.source.name} is not UTF-8 at byte {exc.start}")
