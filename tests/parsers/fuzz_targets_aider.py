"""Aider's files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

HISTORY = b"\n# 2026-07-02 11:14:40.512093\n+fix the bug\n"

TARGETS = [
    FuzzTarget("aider.chat_history.v1", "aider.chat_history", ".aider.chat.history.md",
               context={("aider.input_history", ".aider.input.history"): HISTORY}),
    FuzzTarget("aider.input_history.v1", "aider.input_history", ".aider.input.history"),
    FuzzTarget("aider.llm_history.v1", "aider.llm_history", ".aider.llm.history"),
    FuzzTarget("aider.config.v1", "aider.config", ".aider.conf.yml"),
]
