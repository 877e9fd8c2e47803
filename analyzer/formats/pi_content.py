"""Pi session message content (Pi, and OpenClaw, whose transcripts are Pi session entries): block texts.

Every function here is pure and total: a value of the wrong type gives text
that names it, never an exception (the bundle is not trusted).
"""

from __future__ import annotations

from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.text import excerpt, image_placeholder, is_image_block


def image_text(block: dict) -> str:
    """An image block (``{type: "image", data, mimeType}``) as the placeholder every agent writes.

    ``[image image/png, 48213 bytes]``: the MIME type and the decoded size,
    never the base64 bytes (formats.text.image_placeholder).
    """
    return image_placeholder(block)


def block_text(block) -> str:
    """One text or image block of a user or tool-result message; any other block as compact JSON."""
    if isinstance(block, dict):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            return block["text"]
        if is_image_block(block):
            return image_text(block)
    return setting_value(block)


def content_text(content) -> str:
    """A user / toolResult / custom content (a string, or an array of text and image blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(block) for block in content)
    return "" if content is None else setting_value(content)


def text_field(entry: dict, key: str) -> str:
    """``entry[key]`` when it is a string, else its compact JSON ('' when absent)."""
    value = entry.get(key)
    if value is None or isinstance(value, str):
        return value or ""
    return setting_value(value)


def arguments_text(arguments) -> str:
    """A toolCall's arguments: compact JSON in the order the model wrote them."""
    return arguments if isinstance(arguments, str) else setting_value(arguments)


def bash_execution_text(message: dict) -> tuple[str, str]:
    """The command and the output text of a bashExecution message (a shell command the user ran with ``!``)."""
    command = text_field(message, "command")
    output = text_field(message, "output")
    notes = []
    if "exitCode" in message:
        notes.append(f"exit code {setting_value(message['exitCode'])}")
    for flag in ("cancelled", "truncated", "excludeFromContext"):
        if message.get(flag) is True:
            notes.append(flag)
    if isinstance(message.get("fullOutputPath"), str):
        notes.append(f"full output in {message['fullOutputPath']}")
    return command, output + (f"\n[{', '.join(notes)}]" if notes else "")


def unknown_text(kind: str, value: dict) -> str:
    """A record of a kind the parser does not know: its kind and a bounded compact excerpt."""
    return f"{kind}: {excerpt(setting_value(value))}"
