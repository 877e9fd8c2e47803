"""Which tool calls the report lists as findings, and what it shows of each: data in one place.

The names come from the agents' pages (docs/agents/*.md) and the goldens
(fixtures/*/*/expected.csv): the tool name as it reaches the timeline's
``tool_name`` column. A name not listed here is still in the conversation;
it is only not a finding.
"""

from __future__ import annotations

import json
import re

# Tools that run a command in a shell or a terminal.
SHELL_TOOLS = frozenset({
    "Bash", "BashOutput", "PowerShell",  # Claude Code
    "shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec",  # Codex
    "run_shell_command",  # Gemini CLI
    "execute_command",  # PearAI / Roo Code / Cline
    "run_in_terminal", "copilot_runInTerminal",  # VS Code Copilot Chat
    "bash", "bashExecution",  # pi
})

# Tools that create, write or edit a file.
WRITE_TOOLS = frozenset({
    "Write", "Edit", "MultiEdit", "NotebookEdit",  # Claude Code
    "apply_patch",  # Codex
    "write_file", "replace",  # Gemini CLI
    "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace",  # PearAI / Roo
    "copilot_createFile", "copilot_replaceString", "copilot_multiReplaceString", "copilot_insertEdit",
    "copilot_editFile", "copilot_applyPatch", "copilot_editNotebook",  # VS Code Copilot Chat
    "edit", "write",  # pi
})

# Argument keys that hold the command, then the file path, in the order they are tried.
COMMAND_KEYS = ("command", "cmd", "commandLine", "script")
PATH_KEYS = ("file_path", "filePath", "absolute_path", "path", "notebook_path", "target_file", "filename")

PERMISSION_PREFIXES = ("permission decision: ", "permission setting: ")
PARSER_PREFIX = "parser: "

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
ARGUMENT_SCAN_MAX = 1 << 20  # a call's text beyond this is not decoded for its arguments (bounded work)


def _arguments(text: str) -> dict | None:
    """The call's JSON object of arguments, or None when its text is not one."""
    if not text.startswith("{") or len(text) > ARGUMENT_SCAN_MAX:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _first_text(arguments: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            return " ".join(value)  # argv form (Codex's older shell calls)
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
    arguments = _arguments(text)
    if arguments is not None:
        found = _first_text(arguments, COMMAND_KEYS)
        if found:
            return found
    found = tag_text(text[:ARGUMENT_SCAN_MAX], "command")
    return text if found is None else found


def paths_of(text: str) -> list[str]:
    """The file paths a write or edit call names (every file of a patch); empty when none is recognisable."""
    arguments = _arguments(text)
    if arguments is not None:
        found = _first_text(arguments, PATH_KEYS)
        return [found] if found else []
    head = text[:ARGUMENT_SCAN_MAX]
    patched = _PATCH_FILE.findall(head)
    if patched:
        return [path.strip() for path in patched]
    found = tag_text(head, "path")
    return [] if found is None else [found]


def is_permission(text: str) -> bool:
    """A permission decision or a standing permission setting (docs/timeline.md fixed prefixes)."""
    return text.startswith(PERMISSION_PREFIXES)
