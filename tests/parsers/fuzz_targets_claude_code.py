"""Claude Code files for the parser property tests (names match fixture files, for the truncation test)."""

from tests.analyzer.fuzz import FuzzTarget

SESSION = "4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"
PROJECT = ".claude/projects/-home-dev-src-acme-api/"
PASTE = {("claude-code.paste_cache", ".claude/paste-cache/9f2c4a1b7e3d5c60.txt"): b"pasted text\n"}
LIVE_STATE = {("claude-code.global_state", ".claude.json"):
              b'{"projects":{"/home/dev/src/acme-api":{"allowedTools":["Edit"],"history":[{"display":"x"}]}}}'}

TARGETS = [
    FuzzTarget("claude_code.transcript.v1", "claude-code.transcripts", f"{PROJECT}{SESSION}.jsonl", jsonl=True),
    FuzzTarget("claude_code.transcript.v1", "claude-code.subagent_transcripts",
               f"{PROJECT}{SESSION}/subagents/agent-a3f9c2e1.jsonl", jsonl=True),
    FuzzTarget("claude_code.transcript.v1", "claude-code.subagent_transcripts_legacy",
               ".claude/projects/-home-dev-src-billing/agent-5b7d9e2f.jsonl", jsonl=True),
    FuzzTarget("claude_code.subagent_meta.v1", "claude-code.subagent_meta",
               f"{PROJECT}{SESSION}/subagents/agent-a3f9c2e1.meta.json"),
    FuzzTarget("claude_code.history.v1", "claude-code.history", ".claude/history.jsonl", jsonl=True, context=PASTE),
    FuzzTarget("claude_code.paste_cache.v1", "claude-code.paste_cache", ".claude/paste-cache/9f2c4a1b7e3d5c60.txt",
               context={("claude-code.history", ".claude/history.jsonl"):
                        b'{"display":"[Pasted text #1]","timestamp":1,"pastedContents":{"1":'
                        b'{"id":1,"type":"text","contentHash":"9f2c4a1b7e3d5c60"}}}\n'}),
    FuzzTarget("claude_code.global_state.v1", "claude-code.global_state", ".claude.json"),
    FuzzTarget("claude_code.global_state.v1", "claude-code.global_state_backups",
               ".claude/backups/.claude.json.backup.1782900000000", context=LIVE_STATE),
    FuzzTarget("claude_code.settings.v1", "claude-code.user_settings", ".claude/settings.json"),
    FuzzTarget("claude_code.todos.v1", "claude-code.todos", f".claude/todos/{SESSION}-agent-{SESSION}.json"),
    FuzzTarget("claude_code.tasks.v1", "claude-code.tasks", f".claude/tasks/{SESSION}/2.json"),
    FuzzTarget("claude_code.plan.v1", "claude-code.plans", ".claude/plans/raise-the-pool-timeout.md"),
]
