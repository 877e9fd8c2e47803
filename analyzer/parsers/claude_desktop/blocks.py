"""How the content blocks of an audit.jsonl message read as row text.

The blocks are the Anthropic Messages API's, as the Agent SDK passes them on
([src] anthropics/claude-agent-sdk-python@e8bde60164
src/claude_agent_sdk/_internal/message_parser.py:96-225): ``text``,
``thinking``, ``tool_use``, ``tool_result`` (``content`` a string or a list of
text/image blocks, ``is_error``), images as base64 sources. A picture is the
placeholder every agent writes (``formats.text.image_placeholder``), never its
bytes.

Texts the engine writes in the user's place (research/formats-cli-agents.md 1.4,
the same engine as Claude Code): ``<system-reminder>`` and the other tagged
blocks below are injected context, not typed prompts. A refused call's result
begins with one of the engine's rejection sentences and is marked
``is_error: true``; only then is it a ``permission decision: denied`` (``denied with
feedback`` when the user added words).
"""

from __future__ import annotations

import re

from aitrail.analyzer.formats.json_values import compact
from aitrail.analyzer.formats.text import image_placeholder, is_image_block

_INJECTED = ("<system-reminder>", "<user-prompt-submit-hook>", "<session-start-hook>", "<task-notification>",
             "<local-command-caveat>", "<command-message>", "<scheduled-task>")
_REJECTIONS = ("The user doesn't want to proceed with this tool use.",
               "The user doesn't want to take this action right now.",
               "Permission for this tool use was denied.")
_FEEDBACK = "To tell you how to proceed, the user said:"
_RULE_DENIAL = re.compile(r"^Permission to use \S.* has been denied\.", re.DOTALL)


def block_text(block) -> str:
    """A user-message block (or a whole string content) as text."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return compact(block)
    if block.get("type") == "text":
        text = block.get("text")
        return text if isinstance(text, str) else compact(text)
    if is_image_block(block):
        return image_placeholder(block)
    return compact(block)


def result_text(content) -> str:
    """A tool_result's content (a string, or text and image blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(block) for block in content)
    return "" if content is None else compact(content)


def injected(text: str) -> bool:
    """True for a text the engine put in the user's place."""
    return text.lstrip().startswith(_INJECTED)


def permission_decision(text: str, is_error) -> str:
    """``denied`` or ``denied with feedback`` for a refused call's result (``is_error`` and a rejection), else ''."""
    if is_error is not True:
        return ""
    stripped = text.lstrip()
    if stripped.startswith(_REJECTIONS[0]) and _FEEDBACK in stripped:
        return "denied with feedback"
    return "denied" if stripped.startswith(_REJECTIONS) or _RULE_DENIAL.match(stripped) else ""
