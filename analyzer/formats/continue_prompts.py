r"""Prompts logged as text (Continue's dev_data, PearAI's output channel): ``<role>`` blocks.

A prompt logged as text renders each message as ``<role>\n<content>\n\n``
(continuedev/continue@d0a3c0b6 core/llm/index.ts:544-567); the readers want its
last block (was the call made on text the user typed?) and its last ``<user>``
block (what the user typed). Both are found in one scan of the prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ROLE_TAG = re.compile(r"(?m)^<(system|user|assistant|tool|thinking)>[ \t]*\n?")
_NOT_SPACE = re.compile(r"\S")  # str.strip()'s whitespace is re's (both Py_UNICODE_ISSPACE)


@dataclass
class RoleBlocks:
    """What a prompt logged as ``<role>`` blocks gives: its last block (role, text) and its last user block."""

    last_role: str
    last_text: str
    last_user: str | None


def role_blocks(prompt: str) -> RoleBlocks | None:
    """The last block and the last ``<user>`` block of a prompt written as ``<role>`` blocks; None if not in that form.

    A scan: a prompt of millions of tags holds two blocks' places, never a list of every
    block (``re.split`` made two strings a tag: 1.8 MB of ``<user>`` tags held 37 MB).
    """
    first, last, last_user = None, None, None
    for match in _ROLE_TAG.finditer(prompt):
        if first is None:
            first = match
            if _NOT_SPACE.search(prompt, 0, match.start()):
                return None  # text before the first tag: not a prompt of role blocks
        elif last is not None and last.group(1) == "user":
            last_user = (last.end(), match.start())
        last = match
    if last is None:
        return None
    if last.group(1) == "user":
        last_user = (last.end(), len(prompt))
    user = prompt[last_user[0]:last_user[1]].strip("\n") if last_user else None
    return RoleBlocks(last.group(1), prompt[last.end():].strip("\n"), user)


def last_user_block(prompt: str) -> str | None:
    """The last ``<user>`` block of a prompt logged as text, or None if it has no role tags."""
    blocks = role_blocks(prompt)
    return blocks.last_user.strip() if blocks and blocks.last_user is not None else None
