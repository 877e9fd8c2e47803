"""Antigravity files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

ROOT = ".gemini/antigravity/"
ID = "0b1c2d3e-0000-4000-8000-00000000b002"
LOGS = f"{ROOT}brain/{ID}/.system_generated/logs/"
GLOBAL = ".config/Antigravity/User/globalStorage/"
CONTEXT = {
    ("antigravity.conversations_pb", f"{ROOT}conversations/{ID}.pb"): b"\x8f\x11\xa0",
    ("antigravity.transcripts", LOGS + "transcript.jsonl"): b'{"type":"USER_INPUT","content":"hi"}\n',
}

TARGETS = [
    FuzzTarget("antigravity.transcript.v1", "antigravity.transcripts", LOGS + "transcript.jsonl", jsonl=True),
    FuzzTarget("antigravity.transcript.v1", "antigravity.transcripts_full", LOGS + "transcript_full.jsonl",
               jsonl=True),
    FuzzTarget("antigravity.artifact.v1", "antigravity.artifacts", f"{ROOT}brain/{ID}/task.md"),
    FuzzTarget("antigravity.history.v1", "antigravity.history", ".gemini/antigravity-cli/history.jsonl", jsonl=True),
    FuzzTarget("antigravity.code_tracker.v1", "antigravity.code_tracker_chat",
               f"{ROOT}code_tracker/active/notes-app_5f2a/chat.jsonl"),
    FuzzTarget("antigravity.summaries_db.v1", "antigravity.conversation_summaries",
               ".gemini/antigravity-cli/conversation_summaries.db", context=CONTEXT),
    FuzzTarget("antigravity.state_vscdb.v1", "antigravity.global_state", GLOBAL + "state.vscdb", context=CONTEXT),
]
