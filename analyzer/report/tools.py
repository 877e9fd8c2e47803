"""Which rows the report lists as findings, and what it shows of each: data in one place.

The tool names come from the agents' pages (docs/agents/*.md) and the goldens
(fixtures/*/*/expected.csv): the tool name as it reaches the timeline's
``tool_name`` column. Each name says where it was read (``<agent>: <case>``
is ``fixtures/<agent>/<case>/expected.csv``; ``page`` is docs/agents/<agent>.md).
A name not listed here is still in the conversation; it is only not a finding.
"""

from __future__ import annotations

import json
import re

# Tools that run a command in a shell or a terminal.
SHELL_TOOLS = frozenset({
    "Bash", "BashOutput", "PowerShell",  # Claude Code (Bash: claude-code current-session); continue cn-session: Bash
    "shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec",  # Codex (page)
    "run_shell_command",  # Gemini CLI (gemini-cli jsonl-session)
    "execute_command",  # PearAI / Roo Code / Cline (pearai agent-task, roo-code denial-feedback, cline feedback)
    "run_in_terminal", "copilot_runInTerminal",  # VS Code Copilot Chat (vscode-copilot-chat confirmations)
    "bash", "bashExecution",  # pi (pi v3-branches); bash also OpenCode (opencode db-only), Grok (grok grok-dev-db)
    "Shell",  # Cursor CLI (cursor-cli chat-store-wal; page: cli-config `Shell(git status)`)
    "run_terminal_cmd",  # Cursor IDE (cursor-ide auto-run-settings), Grok (grok build-timed)
    "run_terminal_command", "builtin_run_terminal_command",  # Continue (continue dev-data, tool-call-state)
    "run_commands",  # Cline SDK (cline sdk: {"commands": [...]})
    # issue 32 agents (their pages, docs/agents/<agent>.md, and goldens):
    "powershell",  # Copilot CLI (bash too)
    "run", "test",  # Aider (`/run`, `!`, `/test`)
    "developer__shell",  # Goose
    "terminal",  # Hermes, OpenHands
    "exec",  # OpenClaw
    "launch-process",  # Auggie
    "Execute",  # Factory Droid
    # issue 33 agents (their pages and goldens): run_shell_command above serves Warp, terminal Zed and JetBrains AI,
    # execute_command Kilo Code, launch-process Augment, Bash Claude Desktop
    "execute_bash", "execute_cmd",  # Amazon Q, Kiro (amazon-q conversation-rewrites, kiro cli-session)
    "run_command",  # Void, Antigravity (void thread-wal, antigravity gen2-cli)
    "run_persistent_command",  # Void (page)
})

# Tools that create, write or edit a file.
WRITE_TOOLS = frozenset({
    "Write", "Edit", "MultiEdit", "NotebookEdit",  # Claude Code (Edit: claude-code current-session); cursor-cli Edit
    "apply_patch",  # Codex (codex tagged-rollout)
    "write_file", "replace",  # Gemini CLI (replace: gemini-cli jsonl-session)
    "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace",  # PearAI / Roo / Cline
    "copilot_createFile", "copilot_replaceString", "copilot_multiReplaceString", "copilot_insertEdit",
    "copilot_editFile", "copilot_applyPatch", "copilot_editNotebook",  # VS Code Copilot Chat (confirmations)
    "replace_string_in_file",  # VS Code Copilot Chat (vscode-copilot-chat rounds-without-ids)
    "edit", "write",  # pi (pi v3-branches), OpenCode (opencode db-only, legacy-only)
    "edit_file",  # Cursor IDE (cursor-ide split-conversation), Grok (grok build-timed)
    "editedExistingFile",  # Cline's file-edit ask (cline cut-stream)
    # issue 32 agents (pages and goldens): Copilot CLI, Amp, Hermes, Kimi CLI, Qwen Code, Auggie, Kilo CLI, Droid,
    # Codebuff (write_file, edit, write and apply_patch above serve Qwen Code, Mistral Vibe, OpenClaw and Kilo too)
    "create", "str_replace_editor", "create_file", "patch", "WriteFile", "StrReplaceFile", "notebook_edit",
    "str-replace-editor", "save-file", "multiedit", "Create", "ApplyPatch", "str_replace",
    "lsp_replace_symbol", "lsp_rename",  # Crush (page; edit, multiedit and write above too)
    # issue 33 agents (pages and goldens): edit_file serves Zed, Void and Antigravity, write_to_file and apply_diff
    # Kilo Code, str-replace-editor and save-file Augment
    "fs_write",  # Amazon Q, Kiro (amazon-q conversation-rewrites)
    "rewrite_file", "create_file_or_folder",  # Void (void thread-wal)
    "streaming_edit_file", "create_directory", "move_path", "copy_path", "save_file",  # Zed (page)
    "file_changes",  # JetBrains AI FileChangesBlock (jetbrains-ai agent-events)
    "search_replace", "fast_edit_file",  # Kilo Code (page)
})

# Tools that read a file (search and directory listings are not file reads).
READ_TOOLS = frozenset({
    "Read",  # Claude Code (claude-code streaming-repeats), Cursor CLI (jsonl-transcripts), Continue (cn-session)
    "read_file",  # Cline (cline cut-stream), PearAI (pearai agent-task), Roo Code (roo-code condensed-context),
    # Gemini CLI (gemini-cli legacy-hash-folder), Grok (grok backend-tools-and-images), Continue (continue dev-data),
    # VS Code Copilot Chat (vscode-copilot-chat rounds-without-ids)
    "builtin_read_file",  # Continue (continue tool-call-state)
    "read",  # pi (pi trash)
    "copilot_readFile",  # VS Code Copilot Chat (vscode-copilot-chat confirmations)
    # issue 32 agents (pages and goldens): Copilot CLI and Auggie `view`, Kimi CLI, Codebuff (read and Read above
    # serve Mistral Vibe, OpenClaw, Kilo CLI, Amp and Factory Droid too)
    "view", "ReadFile", "ReadMediaFile", "read_files",
    # issue 33 agents (pages and goldens): read_file serves Kilo Code, Void and Zed, view Augment
    "fs_read",  # Amazon Q, Kiro (amazon-q conversation-rewrites)
    "view_file",  # Antigravity (antigravity gen2-cli)
    "view_files",  # JetBrains AI ViewFilesBlock (jetbrains-ai agent-events)
})

# Tools that delete a file; deletions also come from the rows below, patch headers and `rm` in shell commands.
DELETE_TOOLS = frozenset({
    "delete_file",  # Kilo Code (kilo-code task-history)
    "delete_path",  # Zed (zed threads-db)
    "delete_file_or_folder",  # Void (page)
    "remove-files",  # Augment (page)
})
# Rows that record a file the agent deleted: (prefix, where the path ends).
DELETE_ROW_PREFIXES = ("file deleted by the agent: ",)  # Cursor CLI ai_deleted_files (page; cursor-cli ai-tracking)

# Tools that fetch a URL, and tools that search the web; their target is one of TARGET_KEYS.
FETCH_TOOLS = frozenset({
    "WebFetch",  # Claude Code (claude-code settings: permission rule WebFetch(domain:docs.python.org))
    "web_fetch",  # Gemini CLI (gemini-cli permissions: tools.exclude=["web_fetch"])
    "webfetch",  # OpenCode (opencode config-permissions: permission.webfetch)
    # issue 32 agents (pages): Amp, Hermes, Kimi CLI, Auggie, Factory Droid, Aider `/web` (web_fetch above serves
    # Copilot CLI, Qwen Code, Mistral Vibe and OpenClaw; webfetch Kilo CLI)
    "read_web_page", "web_extract", "FetchURL", "web-fetch", "FetchUrl", "web",
    "fetch", "download", "agentic_fetch",  # Crush (page); Qoder CLI: WebFetch above
})
SEARCH_TOOLS = frozenset({
    "web_search",  # Codex (page: tool_name web_search; codex archived-sessions), Grok (page; backend-tools-and-images)
    "x_search",  # Grok (page: BackendToolKind x_search; grok backend-tools-and-images)
    # issue 32 agents (pages): Kimi CLI, Auggie, Kilo CLI, Factory Droid (web_search above serves Copilot CLI, Amp,
    # Hermes, Qwen Code, Mistral Vibe, OpenClaw and Codebuff)
    "SearchWeb", "web-search", "websearch", "WebSearch",  # WebSearch: Qoder CLI too
    "sourcegraph",  # Crush: code search on sourcegraph.com (page)
})
TARGET_KEYS = ("url", "query", "q")

# Tools that start a sub-agent, the argument keys that describe the run, and rows that record one.
SUBAGENT_TOOLS = frozenset({
    "Agent", "Task",  # Claude Code (current-session, legacy-2.0-subagent); Task: Cursor CLI (jsonl-transcripts)
    "task",  # Grok (grok subagents-summary)
    "spawn_agent",  # Cline SDK (cline sdk)
    "new_task",  # Roo Code (roo-code history-item)
    # issue 32 agents (pages): Amp's sub-agents, Hermes, OpenHands (older), Qwen Code, OpenClaw, Codebuff (task and
    # Task above serve Copilot CLI, Amp, OpenHands, Mistral Vibe, Kilo CLI and Factory Droid; Agent Kimi CLI)
    "oracle", "librarian", "finder", "delegate_task", "delegate", "agent", "sessions_spawn",
    "spawn_agents", "spawn_agents_async", "spawn_agent_inline",  # (agent: Crush too; Agent: Qoder CLI)
    "subagent",  # Zed (page; spawn_agent above too), new_task above serves Kilo Code, delegate Amazon Q and Kiro
})
DESCRIPTION_KEYS = ("description", "task", "message", "prompt")
PROMPT_KEYS = ("prompt", "message", "task")  # what the sub-agent was told: the same text as its prompt row
SUBAGENT_PROMPT_PREFIXES = (
    "subagent prompt: ",  # Claude Code, Gemini CLI, Cursor CLI, Grok (their pages; goldens)
    "subtask: ",  # OpenCode (page: `subtask: agent=<a> description=<d>: <prompt>`)
)
SUBAGENT_RUN_PREFIXES = (
    "delegation: ",  # Grok dev delegations (page; grok grok-dev-files)
    "session: sub-agent thread ",  # Codex state_5.sqlite thread_spawn_edges, rollout not in the bundle (page)
)
SUBAGENT_START_MARKERS = (("session start: ", " thread_source=subagent"),)  # Codex rollout of a sub-agent thread

# MCP tool calls: `mcp__<server>__<tool>` (Claude Code: claude-code settings, permissions.allow
# mcp__github__get_file_contents), `mcp__<server>.<tool>` (Codex page: `namespace.name`; codex newer-additions
# mcp__github.create_issue), and a call tool whose arguments name both (Cline use_mcp_tool: cline xml-era).
MCP_PREFIX = "mcp__"
# Other agents' spellings of `<server>` and `<tool>` in one name (their pages): Kilo Code `mcp--<server>--<tool>`
# (kilo-code task-history), Amazon Q and Kiro `@<server>/<tool>` (amazon-q conversation-rewrites), Zed
# `mcp:<server>:<tool>` (page: tool permissions).
MCP_NAMES = (("mcp--", "--"), ("@", "/"), ("mcp:", ":"))
MCP_CALL_TOOLS = frozenset({"use_mcp_tool"})
MCP_SERVER_KEYS, MCP_TOOL_KEYS = ("server_name",), ("tool_name",)
# MCP servers configured, from settings rows: `mcpServers[<name>]...` (Cline, Roo Code pages) and
# `mcpServers.<name>.<key>=...` (Gemini CLI page).
MCP_SERVER_ROW = re.compile(r"permission setting: mcpServers(?:\[([^\]\n]{1,200})\]|\.([^.=\s]{1,200})(?=\.))")

# Rows that carry the agent's own title of a session, per agent: (prefix, tail), the tail saying what follows the
# title: "paren" a last parenthesised group, "pipe" ` | <facts>` (required), "summary" a `summary="..."` field,
# "none" nothing.
TITLE_ROWS = {
    "claude-code": (("title: ", "paren"),),  # page: `title: <title> (custom-title|ai-title)`
    "codex": (("thread name: ", "none"), ("session: ", "paren")),  # page: session_index, state_5.sqlite
    "cline": (("session: ", "paren"),),  # page: SDK manifest and sessions.db
    "continue": (("session: ", "paren"),),  # continue session-index
    "cursor-cli": (("session: ", "paren"),),  # cursor-cli ai-tracking, chat-store-wal
    "cursor-ide": (("composer: ", "pipe"), ("chat tab: ", "none"), ("session: ", "paren")),  # page
    "gemini-cli": (("session update: ", "summary"), ("session metadata: ", "summary")),  # gemini-cli jsonl-session
    "grok": (("session: ", "paren"),),  # grok grok-dev-db, session-search
    "opencode": (("session metadata: ", "paren"),),  # page: `session metadata: <title> (slug=..`
    "pearai": (("session: ", "paren"),),  # pearai chat-session
    "pi": (("session name: ", "none"),),  # docs/timeline.md Pi prefixes; pi v3-branches
    "vscode-copilot-chat": (("session: ", "paren"),),  # vscode-copilot-chat wal-index
    # issue 32 agents (their pages)
    "copilot-cli": (("session: ", "paren"),), "amp": (("session: ", "paren"),), "goose": (("session: ", "paren"),),
    "hermes": (("session: ", "paren"),), "openhands": (("session: ", "paren"),), "kimi-cli": (("session: ", "paren"),),
    "qwen-code": (("title: ", "paren"),), "mistral-vibe": (("session: ", "paren"),),
    "openclaw": (("session: ", "paren"), ("session name: ", "none")), "auggie": (("session: ", "paren"),),
    "kilo-cli": (("session metadata: ", "paren"),), "factory-droid": (("session metadata: ", "paren"),),
    "codebuff": (("session: ", "paren"),), "crush": (("session metadata: ", "paren"),),
    "qoder-cli": (("title: ", "paren"),),
    # issue 33 agents (their pages)
    "claude-desktop": (("session: ", "paren"),), "kiro": (("session: ", "paren"),), "trae": (("session: ", "paren"),),
    "zed": (("session: ", "paren"),), "jetbrains-ai": (("session: ", "paren"), ("title: ", "none")),
    "windsurf": (("session: ", "paren"),), "antigravity": (("session: ", "paren"),), "warp": (("session: ", "paren"),),
    "chatgpt-desktop": (("title: ", "none"),),
}
# cursor-ide legacy-chat-panel and antigravity damaged: a session without a title; warp first-ai-schema: none recorded
UNTITLED = frozenset({"(untitled)", "(no title recorded)"})
TITLE_MAX = 120

# Token counts: `tokens generated: model=<m> <key>=<n> ...` (docs/timeline.md; Codex, OpenCode, Grok, Continue and
# PearAI pages name their keys) and task-list rows `... | tokensIn=<n> tokensOut=<n>` (Cline, Roo Code pages).
TOKEN_PREFIX = "tokens generated: "
INPUT_KEYS = ("input_tokens", "input", "promptTokens", "input_token_count", "inputTokens")  # Kiro, JetBrains AI
OUTPUT_KEYS = ("output_tokens", "output", "generatedTokens", "output_token_count", "outputTokens")
TASK_TOKENS = re.compile(r" \| tokensIn=(\d{1,15}) tokensOut=(\d{1,15})")
TASK_MODEL = re.compile(r" modelId=(\S{1,200})")

# Catalog roles (collector/catalog/schema.py ROLES) whose rows make a session a conversation, and those whose rows
# (all system rows) make it a configuration file; a store of no known role counts as a conversation.
CONVERSATION_ROLES = frozenset({"transcript", "subagent_transcript", "prompt_history", "session_index", "state_db",
                                "checkpoint", "task_list", "plan", "tool_output"})
CONFIGURATION_ROLES = frozenset({"settings", "permission_state", "memory", "project_map", "log", "usage"})
CONVERSATION_TURNS = frozenset({"user", "assistant", "tool_use", "tool_result", "thinking"})

# Argument keys that hold the command, then the file path, in the order they are tried.
COMMAND_KEYS = ("command", "cmd", "commandLine", "script")
COMMAND_LIST_KEYS = ("commands",)  # several commands, one a line (cline sdk run_commands)
PATH_KEYS = ("file_path", "filePath", "absolute_path", "path", "notebook_path", "target_file", "filename",
             "filepath",  # filepath: Continue (continue cn-session, dev-data)
             "uri")  # Void: a file URI given as its path (page; void threads-wal)
OPERATION_LIST_KEYS = ("operations",)  # Amazon Q and Kiro fs_read: {"operations": [{"mode", "path"}, ...]} (kiro)
# Call texts a parser writes as a list of files (JetBrains AI: `view files: a, b`, `change files: a, b (deleted)`,
# jetbrains-ai ai-assistant), each file ", "-separated, a deletion marked after its path.
FILE_LIST_PREFIXES = ("view files: ", "change files: ")
FILE_LIST_DELETED = " (deleted)"
# A note a parser puts after a coalesced call's command (JetBrains AI, page: `(N updates of step S; the last is
# shown)`): not part of the command.
COMMAND_NOTE = re.compile(r" \(\d{1,10} updates of step [^()\n]{0,200}; the last is shown\)\Z")

# Markers some agents put first on a row's text (docs/timeline.md, agent prefixes): a stream cut before it completed
# (PearAI, Cline, Roo Code `partial:`), a message hidden from the model (Roo Code `condensed:`, `truncated:`). The
# call's arguments, or the prompt, follow them.
ROW_MARKERS = ("partial: ", "condensed: ", "truncated: ")

PERMISSION_PREFIXES = ("permission decision: ", "permission setting: ")
DECISION_PREFIX = "permission decision: "
PARSER_PREFIX = "parser: "
INTEGRITY_PREFIX = "integrity: "

_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_PATCH_ACTIONS = {"Add": "written", "Update": "written", "Delete": "deleted"}
ARGUMENT_SCAN_MAX = 1 << 20  # a call's text beyond this is not decoded for its arguments (bounded work)
TARGET_MAX = 500  # characters of a network target or description kept in the page data
LIST_PATHS_MAX = 1000  # files read from one call's list of files


def unmarked(text: str) -> str:
    """``text`` without the ROW_MARKERS an agent put first on it."""
    while text.startswith(ROW_MARKERS):
        text = text[text.index(": ") + 2:]
    return text


def arguments(text: str) -> dict | None:
    """The call's JSON object of arguments, or None when its text is not one."""
    if not text.startswith("{") or len(text) > ARGUMENT_SCAN_MAX:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _first_text(values: dict, keys: tuple[str, ...], joiner: str = " ") -> str | None:
    for key in keys:
        value = values.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            return joiner.join(value)  # argv form (Codex's older shell calls)
    return None


def tag_text(text: str, key: str) -> str | None:
    """The text between the first ``<key>`` and the ``</key>`` after it (stripped), or None; linear.

    What ``re.search(r"<key>(.*?)</key>", text, re.DOTALL)`` finds, without its
    quadratic cost on a text of many openings and no closing (a 144 KB argument
    took that regular expression 23 s, 1 MB about 20 minutes): if the first
    opening has no closing after it, no later one has.
    """
    opening, closing = f"<{key}>", f"</{key}>"
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening):end].strip()


def command_of(text: str) -> str:
    """The command a shell call ran: its ``command`` argument, a ``<command>`` tag, else the call's text."""
    values = arguments(text)
    if values is not None:
        found = _first_text(values, COMMAND_KEYS) or _first_text(values, COMMAND_LIST_KEYS, "\n")
        if found:
            return found
    found = tag_text(text[:ARGUMENT_SCAN_MAX], "command")
    if found is not None:
        return found
    note = COMMAND_NOTE.search(text, max(0, len(text) - 300))
    return text if note is None else text[:note.start()]


def paths_of(text: str) -> list[str]:
    """The file paths a write or edit call names (every file of a patch); empty when none is recognisable."""
    return [path for path, _ in file_actions(text)]


def file_actions(text: str, action: str = "written") -> list[tuple[str, str]]:
    """``(path, action)`` of each file a call names: a patch header says its own action, else ``action``."""
    values = arguments(text)
    if values is not None:
        found = _first_text(values, PATH_KEYS)
        return [(found, action)] if found else _operation_paths(values, action)
    for prefix in FILE_LIST_PREFIXES:
        if text.startswith(prefix):
            return _listed_files(first_line(text[len(prefix):], ARGUMENT_SCAN_MAX), action)
    head = text[:ARGUMENT_SCAN_MAX]
    patched = _PATCH_FILE.findall(head)
    if patched:
        return [(path.strip(), _PATCH_ACTIONS[verb]) for verb, path in patched]
    found = tag_text(head, "path")
    return [] if found is None else [(found, action)]


def _operation_paths(values: dict, action: str) -> list[tuple[str, str]]:
    found = []
    for key in OPERATION_LIST_KEYS:
        operations = values.get(key)
        if isinstance(operations, list):
            for operation in operations[:LIST_PATHS_MAX]:
                path = _first_text(operation, PATH_KEYS) if isinstance(operation, dict) else None
                if path:
                    found.append((path, action))
    return found


def _listed_files(line: str, action: str) -> list[tuple[str, str]]:
    found = []
    for item in line.split(", ")[:LIST_PATHS_MAX]:
        if item.endswith(FILE_LIST_DELETED):
            found.append((item[:-len(FILE_LIST_DELETED)], "deleted"))
        elif item:
            found.append((item, action))
    return found


def patch_actions(text: str) -> list[tuple[str, str]]:
    """``(path, action)`` of each file header of a patch inside ``text`` (a patch given to a shell tool)."""
    head = text[:ARGUMENT_SCAN_MAX]
    if "*** " not in head:
        return []
    return [(path.strip(), _PATCH_ACTIONS[verb]) for verb, path in _PATCH_FILE.findall(head)]


def deleted_path(text: str) -> str | None:
    """The path a deletion row names (DELETE_ROW_PREFIXES), its source note left off; None for other rows."""
    for prefix in DELETE_ROW_PREFIXES:
        if text.startswith(prefix):
            return strip_tail(first_line(text[len(prefix):]), "paren")
    return None


def target_of(text: str) -> str:
    """What a fetch or search call reached: its url or query (also inside ``action`` or an ``input`` JSON text)."""
    values = arguments(text)
    if values is None:
        return _cut(first_line(text))
    for candidate in (values, values.get("action"), arguments(values["input"]) if isinstance(values.get("input"), str)
                      else values.get("input")):
        if isinstance(candidate, dict):
            found = _first_text(candidate, TARGET_KEYS)
            if found:
                return _cut(found)
    return ""


def description_of(text: str) -> str:
    """What a sub-agent call asked for: its description (or task, message, prompt), else the call's first line."""
    values = arguments(text)
    found = _first_text(values, DESCRIPTION_KEYS) if values is not None else None
    return _cut(found if found else first_line(text))


def subagent_prompt(text: str) -> str:
    """The prompt a sub-agent call gave (its prompt, message or task argument); empty when it names none."""
    values = arguments(text)
    found = _first_text(values, PROMPT_KEYS) if values is not None else None
    return found or ""


def mcp_call(tool: str, text: str) -> tuple[str, str] | None:
    """``(server, tool)`` of an MCP tool call, or None when the call is not one."""
    if tool.startswith(MCP_PREFIX):
        rest = tool[len(MCP_PREFIX):]
        server, dot, name = rest.partition(".")  # Codex: mcp__<server>.<tool>
        if not dot:
            server, _, name = rest.partition("__")  # Claude Code: mcp__<server>__<tool>
        return server, name
    for prefix, separator in MCP_NAMES:
        server, found, name = tool[len(prefix):].partition(separator) if tool.startswith(prefix) else ("", "", "")
        if found and server and name:
            return server, name
    if tool in MCP_CALL_TOOLS:
        values = arguments(text)
        if values is not None:
            return _first_text(values, MCP_SERVER_KEYS) or "", _first_text(values, MCP_TOOL_KEYS) or ""
        head = text[:ARGUMENT_SCAN_MAX]
        return tag_text(head, MCP_SERVER_KEYS[0]) or "", tag_text(head, MCP_TOOL_KEYS[0]) or ""
    return None


def mcp_server(text: str) -> tuple[str, str] | None:
    """``(server, detail)`` of a settings row that configures an MCP server, or None."""
    match = MCP_SERVER_ROW.match(text)
    if match is None:
        return None
    server = match.group(1) if match.group(1) is not None else match.group(2)
    return server, _cut(first_line(text[match.end():]).lstrip(".="))


def title_of(agent: str, text: str) -> str | None:
    """The session title a row of ``agent`` carries (TITLE_ROWS), one line of at most TITLE_MAX characters."""
    for prefix, tail in TITLE_ROWS.get(agent, ()):
        if text.startswith(prefix):
            title = _summary(text) if tail == "summary" else strip_tail(first_line(text[len(prefix):]), tail)
            return None if not title or title in UNTITLED else one_line(title)
    return None


def _summary(text: str) -> str | None:
    start = text.find('summary="', 0, 4096)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start + 8:start + 8 + 4096])
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def strip_tail(line: str, tail: str) -> str | None:
    """``line`` without its tail: a last balanced ``(...)`` group ("paren"), ``" | ..."`` ("pipe"), or as it is."""
    if tail == "pipe":
        cut = line.find(" | ")
        return line[:cut].strip() if cut >= 0 else None
    if tail == "paren" and line.endswith(")"):
        depth = 0
        for position in range(len(line) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(line[position], 0)
            if depth == 0:
                return line[:position].rstrip()
    return line.strip()


def one_line(text: str, limit: int = TITLE_MAX) -> str:
    """The first line of ``text``, stripped, cut to ``limit`` characters (the cut marked with …)."""
    line = first_line(text).strip()
    return line if len(line) <= limit else line[:limit - 1] + "…"


def first_line(text: str, limit: int = 4096) -> str:
    """Text up to its first newline, at most ``limit`` characters of it looked at."""
    head = text[:limit]
    end = head.find("\n")
    return head if end < 0 else head[:end]


def tokens_of(text: str) -> tuple[str, int, int] | None:
    """``(model, input, output)`` of a token-count row (TOKEN_PREFIX or a task row's totals), or None."""
    if text.startswith(TOKEN_PREFIX):
        fields = dict(part.partition("=")[::2] for part in first_line(text[len(TOKEN_PREFIX):], 2048).split(" "))
        given = [_number(fields, INPUT_KEYS), _number(fields, OUTPUT_KEYS)]
        if given == [None, None]:
            return None
        return fields.get("model", ""), given[0] or 0, given[1] or 0
    if text.startswith("task: "):
        head = text[:1 << 16]
        cut = head.rfind(" | tokensIn=")
        match = TASK_TOKENS.match(head, cut) if cut >= 0 else None
        if match is None:
            return None
        model = TASK_MODEL.search(first_line(head[match.end():], 2048))
        return (model.group(1) if model else ""), int(match.group(1)), int(match.group(2))
    return None


def _number(fields: dict[str, str], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = fields.get(key, "")
        if value.isdigit() and len(value) <= 15:
            return int(value)
    return None


def integrity_rule(text: str) -> str | None:
    """The rule of an ``integrity: <rule>: <detail>`` row, or None for any other row."""
    if not text.startswith(INTEGRITY_PREFIX):
        return None
    head = text[len(INTEGRITY_PREFIX):len(INTEGRITY_PREFIX) + 200]
    rule = head.partition(":")[0].strip()
    return rule or None


def is_permission(text: str) -> bool:
    """A permission decision or a standing permission setting (docs/timeline.md fixed prefixes)."""
    return text.startswith(PERMISSION_PREFIXES)


def _cut(text: str) -> str:
    return text if len(text) <= TARGET_MAX else text[:TARGET_MAX] + " …"
