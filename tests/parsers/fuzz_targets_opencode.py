"""OpenCode files for the parser property tests: one target per parser id, and per file kind it branches on."""

from tests.analyzer.fuzz import FuzzTarget

DATA = ".local/share/opencode"
SESSION, MESSAGE = "ses_3f8a61c2dffeRt5Yh7Kq2Wn9Xb", "msg_c9e4a8f1c005Pp1Qq2Rr3Ss4Tt"
# a part file joins its message file (role, model, time); the tree is checked against opencode.db ids
MESSAGE_FILE = {("opencode.legacy_sessions", f"{DATA}/storage/message/{SESSION}/{MESSAGE}.json"):
                b'{"id":"msg_c9e4a8f1c005Pp1Qq2Rr3Ss4Tt","role":"assistant","modelID":"claude-sonnet-4-5",'
                b'"time":{"created":1773050400300}}'}
OLDEST = f"{DATA}/project/home-alice-src-app/storage/session"

TARGETS = [
    FuzzTarget("opencode.db.v1", "opencode.opencode_db", f"{DATA}/opencode.db"),
    FuzzTarget("opencode.legacy_storage.v1", "opencode.legacy_sessions", f"{DATA}/storage/session/p1/{SESSION}.json"),
    FuzzTarget("opencode.legacy_storage.v1", "opencode.legacy_sessions",
               f"{DATA}/storage/message/{SESSION}/{MESSAGE}.json"),
    FuzzTarget("opencode.legacy_storage.v1", "opencode.legacy_sessions", f"{DATA}/storage/part/{MESSAGE}/prt_1.json",
               context=MESSAGE_FILE),
    FuzzTarget("opencode.legacy_storage.v1", "opencode.legacy_sessions", f"{DATA}/storage/project/p1.json"),
    FuzzTarget("opencode.project_storage.v1", "opencode.project_storage_sessions", f"{OLDEST}/info/{SESSION}.json"),
    FuzzTarget("opencode.project_storage.v1", "opencode.project_storage_sessions",
               f"{OLDEST}/part/{SESSION}/{MESSAGE}/prt_1.json", context=MESSAGE_FILE),
    FuzzTarget("opencode.legacy_todo.v1", "opencode.legacy_todos", f"{DATA}/storage/todo/{SESSION}.json"),
    FuzzTarget("opencode.legacy_permission.v1", "opencode.legacy_permissions", f"{DATA}/storage/permission/p1.json"),
    FuzzTarget("opencode.prompt_history.v1", "opencode.prompt_history", ".local/state/opencode/prompt-history.jsonl",
               jsonl=True),
    FuzzTarget("opencode.prompt_stash.v1", "opencode.prompt_stash", ".local/state/opencode/prompt-stash.jsonl",
               jsonl=True),
    FuzzTarget("opencode.model_state.v1", "opencode.model_state", ".local/state/opencode/model.json"),
    FuzzTarget("opencode.config.v1", "opencode.global_config", ".config/opencode/opencode.json"),
]
