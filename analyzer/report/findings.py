"""The findings lists of one bundle, gathered while its rows stream past (timeline.spool).

A finding is a row number and a few short strings (a command, a path, a
target, a redacted secret): the rows themselves are never kept. Each list is
capped at ``LIST_MAX`` entries; ``counts`` stays exact. Commands are joined
with their results and with the ``permission decision:`` rows that name them
by (session, tool_use_id), whichever comes first in the timeline, and their
outcome is settled at the end (outcomes.py).
"""

from __future__ import annotations

from collections import Counter

from aitrail.analyzer.report import commandline, outcomes, tools
from aitrail.analyzer.report.secrets import find_secrets
from aitrail.analyzer.view.rows import UNPAIRED_PREFIXES

LIST_MAX = 100_000  # entries of one findings list in the page data; counts are exact
TEXT_MAX = 20_000  # characters of a command kept in the page data
LISTS = ("commands", "files", "network", "mcp_servers", "mcp_calls", "subagents", "secrets", "integrity",
         "permissions", "problems", "unpaired")
FILE_COUNTS = {"written": "files_written", "read": "files_read", "deleted": "files_deleted"}
PROMPT_KEY_CHARS = 2000  # characters of a sub-agent prompt compared with the prompt rows

Key = tuple[int, str]  # (session number, tool_use_id)


class Findings:
    """Every findings list of one bundle, and the joins that settle each command's outcome."""

    def __init__(self) -> None:
        self.lists: dict[str, list] = {name: [] for name in LISTS}
        self.counts: Counter = Counter()
        self.flags = bytearray()  # per command (listed or not): outcomes.* flags
        self.calls: dict[Key, int | list[int]] = {}  # command numbers by call id
        self.early_results: dict[Key, tuple[int, int, int | None]] = {}  # a result seen before its call
        self.early_decisions: dict[Key, int] = {}  # a refusal seen before its call
        self.refusals: set[Key] = set()  # calls a permission decision refused
        self.unkeyed_refusals = 0  # refusing decisions that name no call
        self.subagent_prompts: set[int] = set()  # hashes of the prompts sub-agent calls gave
        self.tokens: dict[tuple[int, str], list[int]] = {}  # (session, model) -> [input, output]
        self.tentative: list[tuple[Key, str, str, list | None]] = []  # findings of a call, withdrawn if refused

    def see(self, number: int, session: int, turn: str, tool: str, call_id: str, text: str,
            resultless: bool) -> None:
        """Account one row (its number in the bundle's rows, its session number) in every list it belongs to."""
        if turn == "tool_use":
            self._call(number, (session, call_id) if call_id else None, tool, tools.unmarked(text), resultless)
        elif turn == "tool_result":
            if call_id:
                self._result(number, (session, call_id), tool, text)
        elif turn == "user":
            self.counts["prompts"] += 1
            for kind, shown in find_secrets(tools.unmarked(text)):
                self._note("secrets", [number, kind, shown])
        elif turn == "system":
            self._system(number, session, call_id, text)

    def _note(self, name: str, entry: list, count: str | None = None, key: Key | None = None) -> None:
        """Add a finding; one that a call with an id gave is withdrawn at the end if the call was refused."""
        self.counts[count or name] += 1
        found = self.lists[name]
        listed = len(found) < LIST_MAX
        if listed:
            found.append(entry)
        if key is not None:
            self.tentative.append((key, name, count or name, entry if listed else None))

    def _call(self, number: int, key: Key | None, tool: str, text: str, resultless: bool) -> None:
        if tool in tools.SHELL_TOOLS:
            self._command(number, key, tools.command_of(text), resultless)
        elif tool in tools.WRITE_TOOLS:
            for path, action in tools.file_actions(text) or [("", "written")]:
                self._file(number, path, action, key)
        elif tool in tools.READ_TOOLS:
            for path, action in tools.file_actions(text, "read") or [("", "read")]:
                self._file(number, path, action, key)
        elif tool in tools.DELETE_TOOLS:
            for path, action in tools.file_actions(text, "deleted") or [("", "deleted")]:
                self._file(number, path, action, key)
        elif tool in tools.FETCH_TOOLS or tool in tools.SEARCH_TOOLS:
            kind = "fetch" if tool in tools.FETCH_TOOLS else "search"
            self._note("network", [number, kind, tools.target_of(text)], key=key)
        elif tool in tools.SUBAGENT_TOOLS:
            prompt = tools.subagent_prompt(text)
            if prompt:
                self.subagent_prompts.add(_prompt_key(prompt))
            self._note("subagents", [number, tools.description_of(text)], key=key)
        else:
            mcp = tools.mcp_call(tool, text)
            if mcp is not None:
                self._note("mcp_calls", [number, *mcp], key=key)

    def _file(self, number: int, path: str, action: str, key: Key | None = None) -> None:
        self._note("files", [number, _cut(path), action], FILE_COUNTS[action], key)

    def _command(self, number: int, key: Key | None, command: str, resultless: bool) -> None:
        index = len(self.flags)
        self.flags.append(outcomes.RESULTLESS if resultless else 0)
        self.counts["commands"] += 1
        if index < LIST_MAX:
            self.lists["commands"].append([number, -1, _cut(command), None, None])
        if key is not None:
            known = self.calls.get(key)
            self.calls[key] = index if known is None else [*_each(known), index]
            early = self.early_results.get(key)
            if early is not None:
                self._answer(index, *early)
            self.flags[index] |= self.early_decisions.get(key, 0)
        uses, deleted = commandline.effects(command)
        for use in uses:
            self._note("network", [number, "command", use], key=key)
        for path in deleted:
            self._file(number, path, "deleted", key)
        for path, action in tools.patch_actions(command):  # Codex: ["apply_patch", "<patch>"] as a shell call
            self._file(number, path, action, key)

    def _answer(self, index: int, row: int, flags: int, code: int | None) -> None:
        self.flags[index] |= flags
        if index < LIST_MAX:
            entry = self.lists["commands"][index]
            if entry[1] < 0:
                entry[1] = row
            if entry[4] is None and code is not None:
                entry[4] = code

    def _result(self, number: int, key: Key, tool: str, text: str) -> None:
        known = self.calls.get(key)
        if known is None:  # a result before its call (equal or missing times); only a shell call can use it
            if (not tool or tool in tools.SHELL_TOOLS) and key not in self.early_results:
                self.early_results[key] = (number, *outcomes.read_result(text))
            return
        flags, code = outcomes.read_result(text)
        for index in _each(known):
            self._answer(index, number, flags, code)

    def _system(self, number: int, session: int, call_id: str, text: str) -> None:
        if text.startswith(tools.PARSER_PREFIX):
            self._note("unpaired" if text.startswith(UNPAIRED_PREFIXES) else "problems", number)
            return
        if tools.is_permission(text):
            self._note("permissions", number)
            self._decision(session, call_id, text)
            server = tools.mcp_server(text)
            if server is not None:
                self._note("mcp_servers", [number, *server])
            return
        rule = tools.integrity_rule(text)
        if rule is not None:
            self._note("integrity", [number, rule])
            return
        path = tools.deleted_path(text)
        if path is not None:
            self._file(number, path, "deleted")
        counted = tools.tokens_of(text)
        if counted is not None:
            model, given, taken = counted
            total = self.tokens.setdefault((session, model), [0, 0])
            total[0] += given
            total[1] += taken
        description = _subagent_row(text)
        if description is not None and description[1] not in self.subagent_prompts:
            self._note("subagents", [number, description[0]])

    def _decision(self, session: int, call_id: str, text: str) -> None:
        refusal = outcomes.read_decision(text)
        if not refusal:
            return
        if not call_id:
            self.unkeyed_refusals += 1
            return
        key = (session, call_id)
        self.refusals.add(key)
        known = self.calls.get(key)
        if known is None:
            self.early_decisions[key] = self.early_decisions.get(key, 0) | refusal
        for index in _each(known):
            self.flags[index] |= refusal

    def finish(self) -> dict:
        """Settle each command's outcome; the exact counts (``commands_by_outcome``, ``denials`` included)."""
        by_outcome = Counter(outcomes.settle(flags) for flags in self.flags)
        for index, entry in enumerate(self.lists["commands"]):
            entry[3] = outcomes.settle(self.flags[index])
        self._withdraw_refused()
        refused = by_outcome["denied by user"] + by_outcome["blocked by rule"]
        others = sum(1 for key in self.refusals if key not in self.calls) + self.unkeyed_refusals
        counts = {name: self.counts[name] for name in ("prompts", "commands", "network", "mcp_calls", "subagents",
                                                       "secrets", "integrity", "problems", "permissions", "unpaired",
                                                       "mcp_servers", *FILE_COUNTS.values())}
        counts["commands_by_outcome"] = {outcome: by_outcome[outcome] for outcome in outcomes.OUTCOMES}
        counts["denials"] = refused + others
        return counts

    def _refused(self, key: Key) -> bool:
        refusing = outcomes.USER | outcomes.RULE | outcomes.DECIDED_USER | outcomes.DECIDED_RULE
        return key in self.refusals or any(self.flags[index] & refusing for index in _each(self.calls.get(key)))

    def _withdraw_refused(self) -> None:
        """A file, network use, MCP call or sub-agent run of a call the user or a rule refused did not happen."""
        withdrawn: dict[str, set[int]] = {}
        for key, name, count, entry in self.tentative:
            if self._refused(key):
                self.counts[count] -= 1
                if entry is not None:
                    withdrawn.setdefault(name, set()).add(id(entry))
        for name, ids in withdrawn.items():
            self.lists[name] = [entry for entry in self.lists[name] if id(entry) not in ids]
        self.tentative = []

    def token_list(self) -> list[list]:
        """``[session, model, input, output]`` per session and model that a row gives token counts for."""
        return [[session, model, given, taken]
                for (session, model), (given, taken) in sorted(self.tokens.items())][:LIST_MAX]


def _each(known: int | list[int] | None) -> list[int]:
    if known is None:
        return []
    return known if isinstance(known, list) else [known]


def _prompt_key(prompt: str) -> int:
    return hash(" ".join(prompt[:PROMPT_KEY_CHARS].split()))


def _subagent_row(text: str) -> tuple[str, int | None] | None:
    """``(description, prompt key)`` of a row that records a sub-agent run (its prompt, a delegation, a thread)."""
    for prefix in tools.SUBAGENT_PROMPT_PREFIXES:
        if text.startswith(prefix):
            prompt = text[len(prefix):]
            return tools.one_line(prompt, tools.TARGET_MAX), _prompt_key(prompt)
    for prefix in tools.SUBAGENT_RUN_PREFIXES:
        if text.startswith(prefix):
            described = tools.strip_tail(tools.first_line(text[text.index(": ") + 2:]), "paren")
            return tools.one_line(described or text, tools.TARGET_MAX), None
    for prefix, marker in tools.SUBAGENT_START_MARKERS:
        if text.startswith(prefix) and marker in tools.first_line(text):
            return tools.one_line(text, tools.TARGET_MAX), None
    return None


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_MAX else text[:TEXT_MAX] + " …"
