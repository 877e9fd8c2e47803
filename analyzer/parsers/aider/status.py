"""What Aider's ``> `` status writes say: the model banner, token counts, confirmations, edits, commands, commits.

Each pattern is a string Aider formats before it writes the line (Aider-AI/aider
@5dc9490bb3, 0.86.3.dev); a status write that matches none is plain output.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# ``{prefix}: {name} with {edit_format} edit format[, ...]``, prefix "Main model" when a weak model differs,
# else "Model" (aider/coders/base_coder.py:214-234, get_announcements).
MODEL_BANNER = re.compile(r"(?:Main model|Model): (?P<model>\S{1,400}) with (?P<format>\S{1,80}) edit format"
                          r"(?P<rest>.*)")
# ``Tokens: {sent} sent[, {n} cache write][, {n} cache hit], {received} received.`` then, when the model has prices,
# `` Cost: ${message} message, ${session} session.`` on the same line or the next (base_coder.py:2023-2068); counts
# are format_tokens' roundings (aider/utils.py:279-285: 999, 1.2k, 12k).
TOKENS = re.compile(r"Tokens: (?P<sent>[\d.]+[kM]?) sent(?:, (?P<write>[\d.]+[kM]?) cache write)?"
                    r"(?:, (?P<hit>[\d.]+[kM]?) cache hit)?, (?P<received>[\d.]+[kM]?) received\."
                    r"(?:\s+Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session\.)?")
# confirm_ask writes ``{question}{options} [{default}]: `` stripped, a space and the first letter of the answer
# (aider/io.py:807-926); options are (Y)es/(N)o, then /(A)ll, /(S)kip all, /(D)on't ask again.
CONFIRMATION = re.compile(r"(?P<question>.{1,2000}?) \(Y\)es/\(N\)o(?:/\(A\)ll)?(?:/\(S\)kip all)?"
                          r"(?:/\(D\)on't ask again)? \[(?P<default>[^\]]{0,40})\]:(?: (?P<answer>\S{1,20}))?")
# base_coder.py:2331-2334 (apply_updates), 2472 (handle_shell_commands), aider/repo.py:313 (commit).
APPLIED_EDIT = "Applied edit to "
RUNNING = "Running "
COMMIT = re.compile(r"Commit (?P<hash>[0-9a-f]{7,40}) (?P<message>.*)", re.DOTALL)
INTERRUPT = "^C KeyboardInterrupt"  # base_coder.py:994, keyboard_interrupt

# The answer letters (io.py:900-925): y and a run the action, n, s and d refuse it; d also stops the question
# for the rest of the run (never_prompts), a and s answer the rest of the group the same way.
VERDICTS = {
    "y": "approved",
    "a": "approved (all of this group)",
    "n": "denied",
    "s": "denied (skip all of this group)",
    "d": "denied (don't ask again this run)",
}
# Questions asked about a subject written as the status write just before them, and the tool the answer is for
# (base_coder.py:976-977, 1772-1773, 2207, 2226-2228, 2456-2458; io.py:801; utils.py:317).
SUBJECT_QUESTIONS = {
    "Run shell command?": "run",
    "Run shell commands?": "run",
    "Create new file?": "edit",
    "Allow edits to file that has not been added to the chat?": "edit",
    "Add URL to the chat?": "web",
    "Add file to the chat?": "",
    "Open URL for more info?": "",
    "Run pip install?": "",
}
# Slash commands typed at Aider's prompt that run something, and the tool name their rows take
# (aider/commands.py: cmd_run 1013 with the ``!`` alias, cmd_test 993, cmd_git 967, cmd_web 219).
COMMAND_TOOLS = {"/run": "run", "/test": "test", "/git": "git", "/web": "web"}


@dataclass(frozen=True)
class ToolCall:
    """A tool row made from a status write or a typed command: its name and its arguments as JSON."""

    name: str
    arguments: str


def arguments(**values: str) -> str:
    """Compact JSON of a call's arguments (``{"command": ...}``, ``{"path": ...}``, ``{"url": ...}``)."""
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def status_call(first_line: str) -> ToolCall | None:
    """The call a status line records: an edit Aider applied, a command it ran; None for any other line."""
    if first_line.startswith(APPLIED_EDIT) and len(first_line) > len(APPLIED_EDIT):
        return ToolCall("edit", arguments(path=first_line[len(APPLIED_EDIT):]))
    if first_line.startswith(RUNNING) and len(first_line) > len(RUNNING):
        return ToolCall("run", arguments(command=first_line[len(RUNNING):]))
    return None


def typed_call(prompt: str) -> ToolCall | None:
    """The call a typed slash command makes (``/run pytest``, ``!ls``, ``/web https://...``); None otherwise."""
    first = prompt.split("\n", 1)[0]
    if first.startswith("!") and len(first) > 1:
        return ToolCall("run", arguments(command=prompt[1:].strip()))
    word, _, rest = prompt.partition(" ")
    tool = COMMAND_TOOLS.get(word)
    rest = rest.strip()
    if not tool or not rest:
        return None
    if tool == "web":
        return ToolCall(tool, arguments(url=rest))
    return ToolCall(tool, arguments(command=f"git {rest}" if tool == "git" else rest))


def tokens_text(text: str, model: str) -> str | None:
    """``tokens generated: model=<m> sent=<n> received=<n> ...`` for a token report; None for any other text."""
    match = TOKENS.fullmatch(" ".join(text.split()))
    if match is None:
        return None
    parts = [f"model={model or '(unknown)'}", f"sent={match['sent']}", f"received={match['received']}"]
    parts += [f"{key}={match[group]}" for key, group in (("cache_write", "write"), ("cache_hit", "hit"))
              if match[group]]
    if match["message"]:
        parts += [f"cost_message=${match['message']}", f"cost_session=${match['session']}"]
    return "tokens generated: " + " ".join(parts) + " (Aider's rounded counts)"


def decision(text: str, subject: str) -> tuple[str, str] | None:
    """(``permission decision: ...`` text, tool name) of a confirmation line; None for any other line.

    ``subject`` is the status text written just before it, used only for the
    questions Aider asks about one (SUBJECT_QUESTIONS).
    """
    match = CONFIRMATION.fullmatch(text)
    if match is None:
        return None
    question, answer = match["question"].strip(), match["answer"] or ""
    verdict = VERDICTS.get(answer[:1].lower(), "answer not read")
    about = f"; about: {subject}" if subject and question in SUBJECT_QUESTIONS else ""
    return (f'permission decision: {verdict} ("{question}" answered "{answer}"{about})',
            SUBJECT_QUESTIONS.get(question, ""))
