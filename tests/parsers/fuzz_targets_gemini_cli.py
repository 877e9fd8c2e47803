"""Gemini CLI files for the parser property tests (one target per parser id and file shape)."""

from tests.analyzer.fuzz import FuzzTarget

PROJECT = ".gemini/tmp/acme-api/"
LEGACY = ".gemini/tmp/19c741b4dc669e30ddafcfc62b41e376a459d82cfff9a0a500cd28438e801d07/"
# the project map every per-project parser joins to
MAP = {
    ("gemini-cli.projects_registry", ".gemini/projects.json"): b'{"projects": {"/home/dev/src/acme-api": "acme-api"}}',
    ("gemini-cli.project_roots", PROJECT + ".project_root"): b"/home/dev/src/acme-api",
    ("gemini-cli.trusted_folders", ".gemini/trustedFolders.json"): b'{"/home/dev/src/acme-api": "TRUST_FOLDER"}',
}
MIGRATED = {("gemini-cli.chats", PROJECT + "chats/session-2026-03-11T16-40-0a1b2c3d.jsonl"):
            b'{"sessionId":"0a1b2c3d","projectHash":"x"}\n{"id":"d1","type":"user","content":"hi"}\n'}
SESSION = "7c2e9a41-3b5d-4f60-8a71-92b3c4d5e6f7"

TARGETS = [
    FuzzTarget("gemini_cli.chat_jsonl.v1", "gemini-cli.chats",
               PROJECT + "chats/session-2026-07-02T09-14-7c2e9a41.jsonl", jsonl=True, context=MAP),
    FuzzTarget("gemini_cli.chat_jsonl.v1", "gemini-cli.subagent_chats", PROJECT + f"chats/{SESSION}/8d0e6b1c.jsonl",
               jsonl=True, context=MAP),
    FuzzTarget("gemini_cli.chat_jsonl.v1", "gemini-cli.unreadable_chats",
               PROJECT + "chats/session-2026-07-07T11-40-9f8e7d6c.jsonl.unreadable-1783424400000",
               jsonl=True, context=MAP),
    FuzzTarget("gemini_cli.chat_legacy_json.v1", "gemini-cli.chats_legacy",
               LEGACY + "chats/session-2026-03-11T16-40-0a1b2c3d.json", context=MAP),
    FuzzTarget("gemini_cli.chat_legacy_json.v1", "gemini-cli.chats_legacy",
               PROJECT + "chats/session-2026-03-11T16-40-0a1b2c3d.json", context={**MAP, **MIGRATED}),
    FuzzTarget("gemini_cli.logs_json.v1", "gemini-cli.prompt_log", PROJECT + "logs.json", context=MAP),
    FuzzTarget("gemini_cli.logs_json.v1", "gemini-cli.prompt_log",
               PROJECT + "logs.json.invalid_json.1783424400000.bak"),
    FuzzTarget("gemini_cli.shell_history.v1", "gemini-cli.shell_history", PROJECT + "shell_history", jsonl=True,
               context=MAP),
    FuzzTarget("gemini_cli.saved_chat.v1", "gemini-cli.saved_chats", PROJECT + "checkpoint-march%20close.json",
               context=MAP),
    FuzzTarget("gemini_cli.edit_checkpoint.v1", "gemini-cli.edit_checkpoints",
               PROJECT + "checkpoints/2026-07-05T10-22-41_118Z-pool.py-replace.json", context=MAP),
    FuzzTarget("gemini_cli.tracker.v1", "gemini-cli.tracker", PROJECT + f"{SESSION}/tracker/3fa9c1.json", context=MAP),
    FuzzTarget("gemini_cli.projects_registry.v1", "gemini-cli.projects_registry", ".gemini/projects.json"),
    FuzzTarget("gemini_cli.project_root.v1", "gemini-cli.project_roots", PROJECT + ".project_root"),
    FuzzTarget("gemini_cli.settings.v1", "gemini-cli.user_settings", ".gemini/settings.json"),
    FuzzTarget("gemini_cli.policy.v1", "gemini-cli.policies", ".gemini/policies/auto-saved.toml"),
    FuzzTarget("gemini_cli.policy.v1", "gemini-cli.policies", ".gemini/policies/auto-saved.toml.bak"),
    FuzzTarget("gemini_cli.trusted_folders.v1", "gemini-cli.trusted_folders", ".gemini/trustedFolders.json"),
]
