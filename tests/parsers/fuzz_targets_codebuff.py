"""Codebuff's files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

CHAT = ".config/manicode/projects/shop/chats/2026-04-02T08-11-09.511Z"

TARGETS = [
    FuzzTarget("codebuff.chat_messages.v1", "codebuff.chat_messages", f"{CHAT}/chat-messages.json"),
    FuzzTarget("codebuff.legacy_messages.v1", "codebuff.legacy_messages", f"{CHAT}/messages.json"),
    FuzzTarget("codebuff.prompt_history.v1", "codebuff.prompt_history", ".config/manicode/message-history.json"),
]
