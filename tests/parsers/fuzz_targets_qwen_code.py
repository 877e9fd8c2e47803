"""Qwen Code files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

PROJECT = ".qwen/projects/-home-mei-proj-etl"
SESSION = "3b8f6a4e-51c2-4d7e-9f00-2a1b3c4d5e6f"
TMP = ".qwen/tmp/b69be1967881fe20a4dc4a62989f0106a55ff8f68f43eda71e898779039e3fa7"

TARGETS = [
    FuzzTarget("qwen_code.chat.v1", "qwen-code.chats", f"{PROJECT}/chats/{SESSION}.jsonl", jsonl=True),
    FuzzTarget("qwen_code.chat.v1", "qwen-code.subagent_chats",
               f"{PROJECT}/subagents/{SESSION}/agent-explore-7f3c.jsonl", jsonl=True),
    FuzzTarget("qwen_code.subagent_meta.v1", "qwen-code.subagent_meta",
               f"{PROJECT}/subagents/{SESSION}/agent-explore-7f3c.meta.json"),
    FuzzTarget("qwen_code.todos.v1", "qwen-code.todos", f".qwen/todos/{SESSION}.json"),
    FuzzTarget("qwen_code.logs_json.v1", "qwen-code.prompt_log", f"{TMP}/logs.json"),
    FuzzTarget("qwen_code.shell_history.v1", "qwen-code.shell_history", f"{TMP}/shell_history"),
    FuzzTarget("qwen_code.settings.v1", "qwen-code.user_settings", ".qwen/settings.json"),
    FuzzTarget("qwen_code.trusted_folders.v1", "qwen-code.trusted_folders", ".qwen/trustedFolders.json"),
    FuzzTarget("qwen_code.usage.v1", "qwen-code.usage_history", ".qwen/usage_record.jsonl", jsonl=True),
]
