"""What became of a shell call: ran (with its exit code), failed, refused by the user, blocked by a rule, or unknown.

Read from the texts the agents' parsers write (docs/agents/<agent>.md, the
goldens fixtures/<agent>/<case>/expected.csv) and from the ``permission
decision:`` rows that name the call. Every reading is a fixed-prefix test or
a bounded, anchored pattern on the first or last line of the result, so a
hostile result costs at most a few kilobytes of scanning.

The readings are flags, so that a call answered by several rows (a result,
then a decision; PearAI's approval note, then the output) adds them up and
``settle`` gives one outcome: a rule block before a user's refusal before a
failure before a result.
"""

from __future__ import annotations

import json
import re

OUTCOMES = ("ran", "failed", "denied by user", "blocked by rule", "no result recorded", "not recorded by store")

RESULT, FAILED, USER, RULE, DECIDED_USER, DECIDED_RULE, RESULTLESS = 1, 2, 4, 8, 16, 32, 64

# A result whose text starts with one of these: a rule or policy refused the call without asking.
RULE_BLOCK_STARTS = (
    "The user has specified a rule which prevents you from using this specific tool call.",  # OpenCode (page)
    "Command blocked by security policy",  # Continue cn (page)
    "[tool error] Exec denied (", "exec denied: ",  # OpenClaw (page)
    "[tool error] Tool execution denied: ",  # Auggie: an explicit rule (page)
    "Command denied: ",  # Mistral Vibe (page)
    "error: Tool call blocked by hook.",  # Crush (page)
)
RULE_BLOCK_CLAUDE = ("Permission to use ", " has been denied.")  # Claude Code: a deny rule or a mode that does not
# ask (page, Permission rows; claude-code current-session)

# A result whose text starts with one of these: the user refused the call (or cancelled it at the prompt).
USER_DENIAL_STARTS = (
    "The user doesn't want to proceed with this tool use.",  # Claude Code (page; claude-code current-session)
    "The user doesn't want to take this action right now.",  # Claude Code (page)
    "Permission for this tool use was denied.",  # Claude Code, a sub-agent's call (page)
    "The agent proposed a plan that was rejected by the user.",  # Claude Code (page)
    "The user denied this operation",  # Cline, Roo Code, PearAI (pages; cline feedback, roo-code xml-task)
    "Skipping tool ",  # Roo Code / PearAI: "... due to user rejecting a previous tool." (pages)
    "exec command rejected by user", "patch rejected by user",  # Codex (page; codex tagged-rollout)
    "Permission denied by user",  # Continue cn (page; continue cn-session)
    "The user skipped the tool call.",  # Continue (page; continue tool-call-states)
    "The user rejected permission to use this specific tool call.",  # OpenCode (page; opencode permission-rejected)
    "The user chose not to run this command.", "The user denied this command.",  # VS Code (vscode confirmations)
    "(rejected: no output recorded)",  # Cursor IDE (page; cursor-ide auto-run-settings)
    "error: [denied] The user rejected this tool call.",  # Copilot CLI (page)
    "(rejected by the user",  # Amp (page)
    "The user has declined to run this tool.",  # Goose (page)
    "Action rejected: ",  # OpenHands (page)
    "<system>ERROR: The tool call is rejected by the user.",  # Kimi CLI (page)
    "<user_cancellation>",  # Mistral Vibe (page)
    "[tool error] Command did not run: approval was denied.",  # OpenClaw (page)
    "[tool error] Tool execution denied by user: ",  # Auggie (page)
    "error: User denied permission", "error: Permission denied",  # Crush (page; the second before 2025-11)
    "User rejected tool use.",  # Qoder CLI (page)
    "[tool error] Tool use was cancelled by the user",  # Amazon Q, Kiro (amazon-q conversation-rewrites)
    "Tool call was rejected by the user.",  # Void (page; void thread-wal)
)
USER_DENIAL_FRAGMENTS = (
    "User denied execution.",  # Gemini CLI: error: [Operation Cancelled] Reason: User denied execution. (page)
    "User did not allow tool call",  # Gemini CLI before 2025-10-27 (page)
)
USER_DENIAL_EXACT = ("aborted\nmetadata: {}",)  # Codex TypeScript CLI {"output":"aborted","metadata":{}} (page)
_ROO_STATUS = re.compile(r'\{\s*"status"\s*:\s*"(denied|error)"')  # Roo Code native results (page)

# A result whose text starts with one of these is an error result: the call failed.
FAILURE_STARTS = (
    "error: ",  # Gemini CLI `error: <response.error>`; VS Code hook transcripts `error: <message>` (pages)
    "[tool error] ",  # pi, isError (page)
    "Tool [",  # Roo Code / PearAI "Tool [x] was not executed ..." (pages; roo-code xml-task)
    "(error: no output recorded)", "(cancelled: no output recorded)", "(aborted: no output recorded)",  # Cursor IDE
    "<system>ERROR: ",  # Kimi CLI (page)
    "<tool_error>",  # Mistral Vibe (page)
    "[An error occurred during execution.]",  # OpenHands (page)
    "invalid params: ",  # Void (page)
    "[status ERROR]", "[status CANCELED]",  # Antigravity, a step not DONE (page; antigravity gen2-cli)
)
FAILURE_EXACT = ("failed",)  # VS Code hook transcripts `succeeded` / `failed` (page)
FAILURE_LAST_LINE_ENDS = ("(status FAILED)",)  # JetBrains AI, a block not COMPLETED (page)

# Exit codes, on the first line, the last line, or in a JSON result.
EXIT_FIRST_LINE = (re.compile(r"Exit code: (-?\d{1,10})\s*$"),  # Codex shell_command output (codex damaged)
                   re.compile(r"(?:error: )?Command exited with code (-?\d{1,10})\b"),  # Gemini (legacy-hash-folder)
                   re.compile(r"<system>ERROR: Command failed with exit code: (-?\d{1,10})\."),  # Kimi CLI (page)
                   # Zed's terminal tool (zed threads-db): [tool error] Command "cargo test" failed with exit code 101.
                   re.compile(r"\[tool error\] Command .{0,4000}? failed with exit code (-?\d{1,10})\.\s*$"))
EXIT_LAST_LINE = re.compile(r"\[exit code (-?\d{1,10})[,\]:]"  # pi bashExecution, OpenHands (pages)
                            r"|<exited with exit code (-?\d{1,10})>"  # Copilot CLI (page)
                            r"|\(Command exited with code (-?\d{1,10})\)"  # OpenClaw (page)
                            r"|^Exit code (-?\d{1,10})$")  # Crush (page)
METADATA_LINE = "metadata: "  # Codex: output's last line `metadata: {"exit_code":N,...}` (page; codex untagged-v1)
EXIT_KEYS = ("exit_code", "exitCode",  # Codex metadata; Cursor IDE JSON result (cursor-ide damaged-bubble)
             "exit_status")  # Amazon Q and Kiro execute_bash, a string of digits (amazon-q conversation-rewrites)
_CODE_TEXT = re.compile(r"-?[0-9]{1,10}")
JSON_AFTER = ("[tool error] ",)  # Amazon Q and Kiro: an error result is the same JSON object after this

DECISION_PREFIX = "permission decision: "
DECISION_RULE_STARTS = ("denied by a permission rule",  # OpenCode, Copilot CLI, Hermes, Kilo CLI (pages)
                        "denied by a rule",  # Qwen Code, Mistral Vibe (pages)
                        "denied by a hook",  # OpenHands (page)
                        "denied by the built-in blocklist", "denied by smart approval",  # Hermes (page)
                        "denied by the autonomy level", "denied by spec mode", "denied by the sandbox policy",  # Droid
                        "blocked by",  # Crush `blocked by a PreToolUse hook`, Qoder CLI `blocked by auto mode` (pages)
                        )
DECISION_USER_STARTS = ("denied", "skipped",  # every page's `denied...`; VS Code ToolConfirmKind Skipped (page)
                        "cancelled by the user")  # Factory Droid: refused at the prompt, or interrupted (page)

HEAD_MAX = 64 * 1024  # characters of a result looked at from its start (a denial text repeats the command)
LINE_MAX = 4096  # characters of the first and of the last line read for an exit code
JSON_MAX = 64 * 1024  # a whole-JSON result longer than this is not decoded


def read_result(text: str) -> tuple[int, int | None]:
    """Flags (RESULT and FAILED, USER or RULE) and the exit code a result's text shows."""
    head = text[:HEAD_MAX].lstrip()
    flags = RESULT | _refusal(head)
    if flags != RESULT:
        return flags, None
    code = exit_code(head if len(text) <= HEAD_MAX else text)
    if code is not None:
        return flags | (FAILED if code else 0), code
    if (head.startswith(FAILURE_STARTS) or head.strip() in FAILURE_EXACT or _roo_status(head) == "error"
            or text[-LINE_MAX:].rstrip().endswith(FAILURE_LAST_LINE_ENDS)):
        flags |= FAILED
    return flags, None


def _refusal(head: str) -> int:
    if head.startswith(RULE_BLOCK_STARTS) or (head.startswith(RULE_BLOCK_CLAUDE[0]) and RULE_BLOCK_CLAUDE[1] in head):
        return RULE
    first = head[:LINE_MAX].partition("\n")[0]
    if (head.startswith(USER_DENIAL_STARTS) or head.strip() in USER_DENIAL_EXACT or _roo_status(head) == "denied"
            or any(fragment in first for fragment in USER_DENIAL_FRAGMENTS)):
        return USER
    return 0


def _roo_status(head: str) -> str | None:
    match = _ROO_STATUS.match(head, 0, 200)
    return match.group(1) if match else None


def exit_code(text: str) -> int | None:
    """The exit code a result records on its first or last line, or in its JSON object; None when it records none."""
    first = text[:LINE_MAX].lstrip().partition("\n")[0]
    for pattern in EXIT_FIRST_LINE:
        match = pattern.match(first)
        if match:
            return int(match.group(1))
    last = text[-LINE_MAX:].rstrip().rpartition("\n")[2]
    match = EXIT_LAST_LINE.search(last)
    if match:
        return int(next(group for group in match.groups() if group is not None))
    if last.startswith(METADATA_LINE):
        return _exit_in_json(last[len(METADATA_LINE):])
    body = text.lstrip()
    for prefix in JSON_AFTER:
        if body.startswith(prefix):
            body = body[len(prefix):]
    if len(body) <= JSON_MAX and body.startswith("{"):
        return _exit_in_json(body)
    return None


def _exit_in_json(text: str) -> int | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key in EXIT_KEYS:
        code = value.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
        if isinstance(code, str) and _CODE_TEXT.fullmatch(code):
            return int(code)
    return None


def read_decision(text: str) -> int:
    """DECIDED_RULE or DECIDED_USER for a ``permission decision:`` row that refuses; 0 for any other row."""
    if not text.startswith(DECISION_PREFIX):
        return 0
    answer = text[len(DECISION_PREFIX):len(DECISION_PREFIX) + 200]
    if answer.startswith(DECISION_RULE_STARTS):
        return DECIDED_RULE
    if answer.startswith(DECISION_USER_STARTS):
        return DECIDED_USER
    return 0


def settle(flags: int) -> str:
    """The one outcome the flags of a call give (OUTCOMES)."""
    if flags & (RULE | DECIDED_RULE):
        return "blocked by rule"
    if flags & (USER | DECIDED_USER):
        return "denied by user"
    if flags & FAILED:
        return "failed"
    if flags & RESULT:
        return "ran"
    return "not recorded by store" if flags & RESULTLESS else "no result recorded"
