"""Small helpers shared by the Grok modules: text of a value or of content blocks, times, JSON files."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.idioms import epoch_ns
from aitrail.analyzer.formats.json_values import as_text, compact  # noqa: F401 (this package's names)
from aitrail.analyzer.formats.text import image_placeholder, is_image_block, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

DocumentRows = Callable[[ParseContext, dict], Iterator[Draft]]


TEXT_BLOCKS = ("text", "input_text", "output_text", "summary_text")


def block_text(content) -> str:
    """A string as is; a list of content blocks as their texts joined by newlines.

    An image block (Grok Build's ``{"type":"image","url":"data:image/png;base64,..."}``)
    is its placeholder, never its bytes; any other block is compact JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):  # one block given bare: read as a list of one
        content = [content]
    if not isinstance(content, list):
        return as_text(content)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") in TEXT_BLOCKS and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif is_image_block(block):
            parts.append(image_placeholder(block))
        else:
            parts.append(compact(block))
    return "\n".join(parts)


def any_time(value) -> int | None:
    """An ISO string with a zone, or a Unix time in ms or seconds (by magnitude); None otherwise.

    Grok Build's summary.json and sub-agent times are observed only as field
    names, so each written form is accepted (formats/idioms.epoch_ns).
    """
    return epoch_ns(value, numeric_text=True)


def json_file(what: str) -> Callable[[DocumentRows], Callable[[ParseContext], Iterator[Draft]]]:
    """A parser of a whole-file JSON object from ``rows(ctx, document)``; a file that is not one is one row.

    ``what`` names the file in the ``parser: unparseable file`` row.
    """
    def wrap(rows: DocumentRows) -> Callable[[ParseContext], Iterator[Draft]]:
        @functools.wraps(rows)
        def parse(ctx: ParseContext) -> Iterator[Draft]:
            document, problem = json_document(ctx.data, what)
            if problem is not None:
                yield problem
                return
            yield from rows(ctx, document)
        return parse
    return wrap
