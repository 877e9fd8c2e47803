"""Qoder CLI files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

PROJECT = ".qoder/projects/-Users-jo-app"
SESSION = "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f"

TARGETS = [
    FuzzTarget("qoder_cli.transcript.v1", "qoder-cli.transcripts", f"{PROJECT}/{SESSION}.jsonl", jsonl=True),
    FuzzTarget("qoder_cli.transcript.v1", "qoder-cli.subagent_transcripts",
               f"{PROJECT}/{SESSION}/subagents/agent-a7f3c2d1.jsonl", jsonl=True),
]
