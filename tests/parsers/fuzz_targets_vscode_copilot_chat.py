"""GitHub Copilot Chat (VS Code) files for the parser property tests.

The ``.jsonl`` session log is not a ``jsonl=True`` target: it is a mutation log
replayed into one object, and a line whose value a later line replaced (a
streamed state) gives no row by design; its unusable lines are rows.
"""

from tests.analyzer.fuzz import FuzzTarget

WS = ".config/Code/User/workspaceStorage/3f9d2c7b1a0e4d5f8c6b9a7e2d1f0c3b/"
GLOBAL = ".config/Code/User/globalStorage/"
MAP = {("vscode-copilot-chat.workspace_map", WS + "workspace.json"): b'{"folder":"file:///home/alice/src/app"}'}
SESSION = "c8e4f1a2-3d5b-4c79-a0e6-9b1d2f8c7e43"

TARGETS = [
    FuzzTarget("vscode_copilot_chat.chat_session_json.v1", "vscode-copilot-chat.chat_sessions_json",
               WS + f"chatSessions/{SESSION}.json", context=MAP),
    FuzzTarget("vscode_copilot_chat.chat_session_json.v1", "vscode-copilot-chat.chat_sessions_json",
               WS + f"chatSessions/{SESSION}.json",
               context={("vscode-copilot-chat.chat_sessions_jsonl", WS + f"chatSessions/{SESSION}.jsonl"):
                        b'{"kind":0,"v":{"sessionId":"x","requests":[{"requestId":"r1"}]}}\n'}),
    FuzzTarget("vscode_copilot_chat.chat_session_jsonl.v1", "vscode-copilot-chat.chat_sessions_jsonl",
               WS + f"chatSessions/{SESSION}.jsonl", context=MAP),
    FuzzTarget("vscode_copilot_chat.workspace_state.v1", "vscode-copilot-chat.workspace_state", WS + "state.vscdb"),
    FuzzTarget("vscode_copilot_chat.global_state.v1", "vscode-copilot-chat.global_state", GLOBAL + "state.vscdb"),
    FuzzTarget("vscode_copilot_chat.prompt_history.v1", "vscode-copilot-chat.prompt_history", GLOBAL + "state.vscdb"),
    FuzzTarget("vscode_copilot_chat.hook_transcript.v1", "vscode-copilot-chat.hook_transcripts",
               WS + f"GitHub.copilot-chat/transcripts/{SESSION}.jsonl", jsonl=True),
    FuzzTarget("vscode_copilot_chat.user_settings.v1", "vscode-copilot-chat.user_settings",
               ".config/Code/User/settings.json"),
]
