"""Amp files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

THREAD = "T-3c9e1f4a-7b2d-4e60-9a18-5f0c2d7e8b91"

TARGETS = [
    FuzzTarget("amp.thread.v1", "amp.threads", f".local/share/amp/threads/{THREAD}.json"),
    FuzzTarget("amp.history.v1", "amp.history", ".local/share/amp/history.jsonl", jsonl=True),
    FuzzTarget("amp.history_legacy.v1", "amp.history_legacy", ".local/share/amp/history.json"),
    FuzzTarget("amp.session_state.v1", "amp.session_state", ".local/share/amp/session.json"),
    FuzzTarget("amp.file_change.v1", "amp.file_changes",
               f".amp/file-changes/{THREAD}/toolu_am02.6b1f0e2d-3c4a-4d5e-8f90-a1b2c3d4e5f6"),
    FuzzTarget("amp.settings.v1", "amp.settings", ".config/amp/settings.json"),
]
