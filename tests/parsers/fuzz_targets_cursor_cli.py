"""Cursor CLI files for the parser property tests."""

import hashlib

from tests.analyzer.fuzz import FuzzTarget

SESSION = "7e1b9c40-2f6d-4a8e-b3c5-91d0e4a6f213"
PROJECT = ".cursor/projects/home-alice-src-acme-api/"
BUCKET = hashlib.md5(b"/home/alice/src/acme-api").hexdigest()
STORE = f".config/cursor/chats/{BUCKET}/{SESSION}/store.db"
CHAT = {("cursor-cli.chat_stores", STORE): b""}

TARGETS = [
    FuzzTarget("cursor_cli.transcript.v1", "cursor-cli.transcripts",
               f"{PROJECT}agent-transcripts/{SESSION}/{SESSION}.jsonl", jsonl=True, context=CHAT),
    FuzzTarget("cursor_cli.transcript.v1", "cursor-cli.subagent_transcripts",
               f"{PROJECT}agent-transcripts/{SESSION}/subagents/explore.jsonl", jsonl=True),
    FuzzTarget("cursor_cli.transcript_text.v1", "cursor-cli.text_transcripts",
               f"{PROJECT}agent-transcripts/{SESSION}.txt"),
    FuzzTarget("cursor_cli.agent_tool.v1", "cursor-cli.agent_tools", f"{PROJECT}agent-tools/3c9f1e2a.txt"),
    FuzzTarget("cursor_cli.chat_store.v1", "cursor-cli.chat_stores", STORE),
    FuzzTarget("cursor_cli.cli_config.v1", "cursor-cli.cli_config", ".cursor/cli-config.json"),
    FuzzTarget("cursor_cli.permissions.v1", "cursor-cli.editor_allowlists", ".cursor/permissions.json"),
    FuzzTarget("cursor_cli.prompt_history.v1", "cursor-cli.prompt_history", ".config/cursor/prompt_history.json"),
    FuzzTarget("cursor_cli.ai_tracking.v1", "cursor-cli.ai_tracking", ".cursor/ai-tracking/ai-code-tracking.db"),
    FuzzTarget("cursor_cli.plan.v1", "cursor-cli.plans", ".cursor/plans/login-timeout-fix_8c1d2e3f.plan.md"),
]
