"""Mistral Vibe files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

FOLDER = ".vibe/logs/session/session_20260621_091500_7c1d2e3f"
META = {("mistral-vibe.session_meta", f"{FOLDER}/meta.json"):
        b'{"session_id":"7c1d2e3f-8a9b-4c0d-b1e2-a3b4c5d6e7f8","start_time":"2026-06-21T09:15:00.412+00:00"}'}

TARGETS = [
    FuzzTarget("mistral_vibe.messages.v1", "mistral-vibe.sessions", f"{FOLDER}/messages.jsonl", jsonl=True,
               context=META),
    FuzzTarget("mistral_vibe.messages.v1", "mistral-vibe.subagent_sessions",
               f"{FOLDER}/agents/explore_20260621_091510_e1f2a3b4/messages.jsonl", jsonl=True),
    FuzzTarget("mistral_vibe.meta.v1", "mistral-vibe.session_meta", f"{FOLDER}/meta.json"),
    FuzzTarget("mistral_vibe.legacy_session.v1", "mistral-vibe.legacy_sessions",
               ".vibe/logs/session/session_20250510_171500_f0e1d2c3.json"),
    FuzzTarget("mistral_vibe.history.v1", "mistral-vibe.prompt_history", ".vibe/vibehistory", jsonl=True),
    FuzzTarget("mistral_vibe.config.v1", "mistral-vibe.config", ".vibe/config.toml"),
    FuzzTarget("mistral_vibe.trusted_folders.v1", "mistral-vibe.trusted_folders", ".vibe/trusted_folders.toml"),
]
