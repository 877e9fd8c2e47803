"""Small helpers of the OpenHands modules: text of SDK content lists, compact JSON, short labels."""

from __future__ import annotations

from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import image_placeholder, json_document
from aitrail.analyzer.view.rows import Draft

# Observation.ERROR_MESSAGE_HEADER: what the model read before the content of a failed call
# (software-agent-sdk openhands-sdk/openhands/sdk/tool/schema.py:366,418-420)
ERROR_HEADER = "[An error occurred during execution.]"


def content_text(content) -> str:
    """The texts of an SDK content list (``TextContent``, ``ImageContent``) joined by newlines.

    ``{"type": "text", "text"}`` gives its text; ``{"type": "image", "image_urls": [...]}``
    one placeholder per picture (a data URI is measured, never copied); a
    string is itself; anything else is compact JSON.
    """
    if isinstance(content, list):
        return "\n".join(_block_text(block) for block in content)
    return "" if content is None else _block_text(content)


def _block_text(block) -> str:
    if isinstance(block, str):
        return block
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and isinstance(block.get("text"), str):
        return block["text"]
    if kind == "image":
        urls = block.get("image_urls")
        urls = urls if isinstance(urls, list) and urls else [None]
        return "\n".join(image_placeholder({"url": url}) if isinstance(url, str) else "[image]" for url in urls)
    return as_text(block)


def kind_of(record: dict) -> str:
    """The pydantic discriminator ``kind`` (the class name), '' when absent or not a short string."""
    return label(record.get("kind"), 100)


def json_file(data: bytes, what: str, session_id: str, kind: type = dict) -> tuple[object, list[Draft]]:
    """A whole-file JSON document of ``kind``, or None and its ``parser: unparseable file`` row (in ``session_id``)."""
    document, problem = json_document(data, what, kind=kind)
    if problem is not None:
        problem.session_id = session_id
        return None, [problem]
    return document, []
