"""Claude Code transcript entries: the pieces of one JSONL entry the walk reads (pure functions).

Content blocks, tool call and result ids, the response id of an assistant
entry, and the session a file belongs to by its place; transcript.py keeps
the state that joins them across lines.
"""

from __future__ import annotations

from aitrail.analyzer.formats.text import image_placeholder, is_image_block

from . import content

CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def unknown_block(block: dict, kind) -> str:
    """The text of a content block of a type the walk does not know: its type and JSON (a picture's placeholder)."""
    if is_image_block(block):
        return f"content block {content.safe_label(kind)}: {image_placeholder(block)}"
    return f"content block {content.safe_label(kind)}: {content.compact_json(block)}"


def blocks(message) -> list | None:
    """A message's content blocks (a plain string content is one text block); None if it has none."""
    if not isinstance(message, dict):
        return None
    body = message.get("content")
    if isinstance(body, str):
        return [{"type": "text", "text": body}]
    return body if isinstance(body, list) else None


def block_key(block) -> tuple:
    """What identifies a block within one response: a tool call by its id, any other block by its value."""
    if isinstance(block, dict) and block.get("type") in CALL_BLOCKS and isinstance(block.get("id"), str):
        return ("call", block["id"])
    return ("block", block)


def message_id(message) -> str | None:
    """An assistant message's ``id`` (the API response it is part of): a non-empty string, else None."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) and value else None


def block_call_ids(found: list | None) -> set:
    """The tool_use ids among an assistant message's blocks (``blocks``)."""
    return {block["id"] for block in found or () if isinstance(block, dict)
            and block.get("type") in CALL_BLOCKS and isinstance(block.get("id"), str)}


def result_ids(entry: dict) -> set:
    """The tool_use ids a user entry's tool_result blocks answer."""
    found = blocks(entry.get("message")) if entry.get("type") == "user" else None
    return {block["tool_use_id"] for block in found or () if isinstance(block, dict)
            and block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str)}


def suffixed(session: str, suffix: str) -> str:
    """``<session>/<suffix>``, or the suffix alone for a row without a session."""
    return f"{session}/{suffix}" if session else suffix


def file_session(path: str, agent_file: bool) -> str:
    """The session a file belongs to by its place: ``<id>.jsonl``, or ``<id>/subagents/…/agent-x.jsonl``."""
    parts = path.split("/")
    if not agent_file:
        return parts[-1].removesuffix(".jsonl")
    if "subagents" in parts:
        index = parts.index("subagents")
        return parts[index - 1] if index > 0 else ""
    return ""  # legacy agent-<id>.jsonl: the parent session is the sessionId on its lines
