"""ChatGPT desktop files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

STORE = "Library/Application Support/com.openai.chat/conversations-0f0e0d0c-0b0a-4908-8706-050403020100"

TARGETS = [
    FuzzTarget("chatgpt_desktop.conversation.v1", "chatgpt-desktop.conversations_v1",
               f"{STORE}/c0ffee00-1111-4222-8333-444455556666.json"),
]
