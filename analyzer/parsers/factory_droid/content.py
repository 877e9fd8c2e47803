"""Factory Droid message content: Anthropic-named blocks as rows, and what a tool result says about permission.

Droid writes a message's ``content`` as a string or as blocks with Anthropic names
(``CQ``/``Ft`` in the @factory/cli 0.225.2 bundle): ``text {text}``, ``thinking
{thinking, signature}``, ``redacted_thinking {data}``, ``tool_use {id, name, input}``,
``tool_result {tool_use_id, content (string or text and image blocks), is_error}``,
``image``, ``document {source{media_type, name, path}}``. A signature, redacted
thinking's ``data`` and an image's base64 bytes never reach a row.

A tool result's text is classified as Droid classifies it itself (bundle function
``o8``): "Exec ended early: insufficient permission" is a permission rejection; "Tool
execution cancelled by user" (or "... was interrupted") a cancellation; "Tool
cancelled:" an error (spec mode blocks edits with "Tool cancelled: Spec mode is
active ..."). The sandbox refuses with "Sandbox: tool policy denied for ..." and
"Sandbox: network access was denied to: ...".
"""

from __future__ import annotations

import json

from aitrail.analyzer.formats.idioms import plain
from aitrail.analyzer.formats.text import image_placeholder, is_image_block

# tool result text -> the permission decision it records (None: it records none)
CANCELLED_BY_USER = "Tool execution cancelled by user"
INTERRUPTED = "Tool execution was interrupted"
NOT_PERMITTED = "exec ended early: insufficient permission"
HIGHER_AUTONOMY = "requires higher autonomy to proceed"
SPEC_MODE = "Spec mode is active"
SANDBOX_PREFIXES = ("Sandbox: tool policy denied", "Sandbox: network access was denied")


def compact(value) -> str:
    """A value as row text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)


def label(value) -> str:
    """A name or id only when it is a short string: a container never lands in a column."""
    return value if isinstance(value, str) and len(value) <= 200 else ""


def blocks_of(content) -> list:
    """The content's blocks: a string is one text block; anything but a list is none."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def result_text(content) -> str:
    """A tool result's ``content``: its string, or its text blocks and image placeholders, one per line."""
    if isinstance(content, str):
        return content
    pieces = []
    for block in content if isinstance(content, list) else []:
        if is_image_block(block):
            pieces.append(image_placeholder(block))
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif block is not None:
            pieces.append(compact(block))
    return "\n".join(pieces) if pieces or content is None else compact(content)


def document_text(block: dict) -> str:
    """``attachment: <name> (<media type>[, stored at <path>])``; a PDF's bytes and parsed text are not repeated."""
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    name = label(source.get("name")) or label(block.get("title")) or "(unnamed)"
    facts = [label(source.get("media_type")) or label(source.get("mediaType")) or "unknown type"]
    if label(source.get("path")):
        facts.append(f"stored at {source['path']}")
    return f"attachment: {name} ({', '.join(facts)})"


def decision(text: str) -> str:
    """The ``permission decision:`` a tool result's text records, or ''."""
    head = text.lstrip()
    if head.lower().startswith(NOT_PERMITTED) or HIGHER_AUTONOMY in head:
        return "denied by the autonomy level (not asked)"
    if CANCELLED_BY_USER in head:
        return "cancelled by the user (refused at the prompt, or interrupted)"
    if f"Tool cancelled: {SPEC_MODE}" in head[:100]:  # written as "Error: Tool cancelled: Spec mode is active - ..."
        return "denied by spec mode (not asked)"
    if head.startswith(SANDBOX_PREFIXES):
        return "denied by the sandbox policy (not asked)"
    return ""
