"""The Pi session entry walk: one row per entry (and per content block), on every branch of the entry tree.

A Pi session (pi-mono's coding agent; OpenClaw keeps the same entries, as
JSONL files in older installs and as SQLite rows now) is a header entry
(``type: session``: id, version, cwd, parentSession) and then entries. From
v2 on, entries form a tree by ``id``/``parentId``: going back to an earlier
message and typing again starts a branch, and the conversation shown is the
path from the last entry back to the root. The other branches stay and are
evidence too, so every entry is a row whatever branch it is on; after the last
entry, one ``branch:`` row per run of entries that are not on the path to the
last entry says they were abandoned (and when: the time of the next entry on
the path). v1 files have no ids and no tree.

``PiSessionWalk`` reads one session's entries, each given as a decoded
``Line`` (a JSONL line, or a row of a database made to look like one): the
``number`` of a Line names it in the rows that only the whole session gives
(``line N`` of a file; a subclass names a database row its own way through
``place`` and ``span``). A store whose entries differ a little from pi's
(message content as a plain string, entry types pi does not have) overrides
``message_of`` and ``entry_text``.

The tree is held for the branch walk at the end, within a budget
(``tree_limit()``, TREE_ENTRIES entries, far above a real session's few
thousand): past it the oldest entries are forgotten, counted, never held, and
the walk is made over the entries held. Entries are appended after their
parent, so the path from the last entry, once it leaves the entries held,
never comes back into them: every held entry not on the path is still known to
be abandoned; of the forgotten ones it is not known, and one ``parser:`` row
says so.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.formats.pi_content import (
    arguments_text,
    bash_execution_text,
    content_text,
    image_text,
    text_field,
    unknown_text,
)
from aitrail.analyzer.formats.text import bad_record, is_image_block
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

# Entries of the tree held for the branch walk: about 250 bytes each, so at most about 125 MB for a hostile
# file of millions of tiny entries; a real session has a few thousand.
TREE_ENTRIES = 500_000
CHAIN_BREAKS_SHOWN = 20  # chain-break rows of one session; one more row counts the rest
SHORT_ID = 128  # characters: an id this short is held as it is, a longer one as its digest (pi's ids are 8)

Key = str | bytes
TreeEntry = tuple[int, Key, Key | None, int | None]  # (line, id, parentId, time)


def held_id(text: str) -> Key:
    """An entry id as the tree holds it: itself when short, else a 16-byte digest (equal exactly when it is)."""
    return text if len(text) <= SHORT_ID else hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


class PiSessionWalk:
    """The state of one session while its entries are read: header columns, model, calls and the tree."""

    container = "this file"  # what holds the entries, as the chain-break rows name it

    def __init__(self, session_id: str = "") -> None:
        self.session_id = session_id
        self.project = ""
        self.header_ns: int | None = None
        self.row_ns: int | None = None  # the time the store gave the entry being read, if it keeps one apart
        self.model = ""
        self.calls = BoundedLedger()  # the session's call ids, within call_budget.MAX_CALL_IDS
        self.seen_first = False
        self.tree: deque[TreeEntry] = deque()  # the entries held, in order (at most tree_limit())
        self.forgotten = 0  # entries no longer held, the oldest first
        self.forgotten_lines: tuple[int, int] = (0, 0)  # the first and last line of those
        self.over_at = 0  # the line whose entry passed the tree budget

    # -- what a store may change --------------------------------------------------------------------------------

    def tree_limit(self) -> int:
        """The entries held for the branch walk (this module's TREE_ENTRIES, read at call time)."""
        return TREE_ENTRIES

    def place(self, number: int) -> str:
        """The locator of the entry numbered ``number``."""
        return f"line:{number}"

    def span(self, first: int, last: int) -> str:
        """The words naming the entries from ``first`` to ``last``."""
        return f"line {first}" if first == last else f"lines {first}-{last}"

    def message_of(self, entry: dict) -> object:
        """The message object of a ``message`` entry, as the store wrote it."""
        return entry.get("message")

    def entry_text(self, entry: dict) -> str:
        """The text of a non-message entry (model changes have their own rows)."""
        return entry_text(entry)

    # -- columns ------------------------------------------------------------------------------------------------

    def when(self, entry: dict, message: dict | None = None) -> dict:
        """The time columns of an entry: the message's ms time, the entry's ISO time, the row's, or the header's."""
        ns = ns_from_ms(message.get("timestamp")) if message else None
        ns = ns if ns is not None else ns_from_iso(entry.get("timestamp"))
        ns = ns if ns is not None else self.row_ns
        if ns is not None:
            return {"timestamp_ns": ns, "timestamp_source": "record"}
        if self.header_ns is not None:
            return {"timestamp_ns": self.header_ns, "timestamp_source": "index"}
        return {"timestamp_source": "none"}

    def base(self, entry: dict, message: dict | None = None) -> dict:
        """The columns every row of an entry shares."""
        return {"session_id": self.session_id, "project_path": self.project, **self.when(entry, message)}

    # -- entries ------------------------------------------------------------------------------------------------

    def rows(self, line: Line) -> Iterator[Draft]:
        """The rows of one decoded entry."""
        entry = line.value
        kind = entry.get("type")
        first, self.seen_first = not self.seen_first, True
        if kind == "session":
            yield self.header(entry, line, first)
            return
        if first:
            yield bad_record(line.locator, "the first line is not a session header", line.raw)
        self.remember(entry, line.number)
        if kind == "message":
            yield from self.message_rows(entry, line)
        elif kind == "model_change":
            yield from self.model_rows(entry, line.locator, text_field(entry, "modelId"))
        else:
            yield Draft("system", self.entry_text(entry), line.locator, **self.base(entry))

    def header(self, entry: dict, line: Line, first: bool) -> Draft:
        """The ``session start:`` row; the header's id, cwd and time become every later row's columns."""
        if isinstance(entry.get("id"), str) and entry["id"]:
            self.session_id = entry["id"]
        if isinstance(entry.get("cwd"), str):
            self.project = entry["cwd"]
        self.header_ns = ns_from_iso(entry.get("timestamp"))
        version = entry.get("version", "absent (v1)")
        parts = [f"id={text_field(entry, 'id')}", f"version={version}", f"cwd={self.project}"]
        if "parentSession" in entry:
            parts.append(f"parentSession={text_field(entry, 'parentSession')}")
        again = "" if first else " (a second header, not on the first line)"
        return Draft("system", f"session start{again}: " + " ".join(parts), line.locator, **self.base(entry))

    def remember(self, entry: dict, number: int) -> None:
        """Keep the entry's place in the tree (v2+: it has an id)."""
        entry_id = entry.get("id")
        if isinstance(entry_id, str) and entry_id:
            parent = entry.get("parentId")
            held_parent = held_id(parent) if isinstance(parent, str) else None
            self.tree.append((number, held_id(entry_id), held_parent, self.when(entry).get("timestamp_ns")))
            if len(self.tree) > self.tree_limit():
                self.forget(number)

    def forget(self, number: int) -> None:
        """Forget the oldest entries of the tree until it is within the budget (``number``: this entry)."""
        while len(self.tree) > self.tree_limit():
            line = self.tree.popleft()[0]
            self.forgotten_lines = (self.forgotten_lines[0] or line, line)
            self.forgotten += 1
        self.over_at = self.over_at or number

    def model_rows(self, entry: dict, locator: str, model: str, message: dict | None = None) -> Iterator[Draft]:
        """A ``model:`` row when the model is set or changes (a model_change entry always gives one)."""
        if not model or (message is not None and model == self.model):
            return
        text = f"model: {self.model} -> {model}" if self.model and self.model != model else f"model: {model}"
        self.model = model
        yield Draft("system", text, locator, model=model, **self.base(entry, message))

    # -- messages -----------------------------------------------------------------------------------------------

    def message_rows(self, entry: dict, line: Line) -> Iterator[Draft]:
        """The rows of a ``message`` entry, by the message's role."""
        message = self.message_of(entry)
        if not isinstance(message, dict):
            yield bad_record(line.locator, "a message entry without a message object", line.raw)
            return
        role = message.get("role")
        base = self.base(entry, message)
        where = f"{line.locator}/message"
        if role == "user":
            yield Draft("user", content_text(message.get("content")), where, **base)
        elif role == "assistant":
            yield from self.assistant_rows(entry, message, line)
        elif role == "toolResult":
            yield from self.result_rows(message, where, base)
        elif role == "bashExecution":
            yield from self.bash_rows(message, where, base)
        elif role in ("custom", "hookMessage"):
            yield Draft("system", f"custom message {text_field(message, 'customType')}: "
                        f"{content_text(message.get('content'))}", where, **base)
        elif role == "branchSummary":
            yield Draft("system", f"branch summary (from entry {text_field(message, 'fromId')}): "
                        f"{text_field(message, 'summary')}", where, **base)
        elif role == "compactionSummary":
            yield Draft("system", f"compaction summary (tokensBefore={text_field(message, 'tokensBefore')}): "
                        f"{text_field(message, 'summary')}", where, **base)
        else:
            yield Draft("system", unknown_text(f"message role {text_field(message, 'role')}", message), where, **base)

    def assistant_rows(self, entry: dict, message: dict, line: Line) -> Iterator[Draft]:
        """A row per content block in order (text, thinking, toolCall), the model, and how the reply stopped."""
        model = text_field(message, "model")
        yield from self.model_rows(entry, f"{line.locator}/message/model", model, message)
        base = {**self.base(entry, message), "model": model}
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        for index, block in enumerate(blocks):
            yield from self.block_rows(block, f"{line.locator}/message/content/{index}", base)
        stop = text_field(message, "stopReason")
        if stop in ("error", "aborted", "length") or "errorMessage" in message:
            error = text_field(message, "errorMessage")
            yield Draft("system", f"reply stopped ({stop or 'no stopReason'})" + (f": {error}" if error else ""),
                        f"{line.locator}/message/stopReason", **base)
        elif not blocks:
            yield Draft("system", f"reply with no content (stopReason={stop or 'absent'})",
                        f"{line.locator}/message", **base)

    def block_rows(self, block, where: str, base: dict) -> Iterator[Draft]:
        """The row of one assistant content block."""
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            yield Draft("assistant", text_field(block, "text"), where, **base)
        elif kind == "thinking":
            text = text_field(block, "thinking")
            if block.get("redacted") is True:
                text = "[redacted thinking]" + (f" {text}" if text else "")
            yield Draft("thinking", text, where, **base)
        elif kind == "toolCall":
            name = text_field(block, "name")
            # a call without an id is joined by its place in the session; its id says so
            call_id = text_field(block, "id") or f"position:{where}"
            call = Draft("tool_use", arguments_text(block.get("arguments")), where, tool_name=name,
                         tool_use_id=call_id, **base)
            self.calls.called(call)
            yield call
        elif is_image_block(block):  # not a block pi-ai's assistant content has: named as unknown, bytes never shown
            yield Draft("system", f"assistant block image: {image_text(block)}", where, **base)
        else:
            label = f"assistant block {text_field(block, 'type')}" if isinstance(block, dict) else "assistant block"
            yield Draft("system", unknown_text(label, block if isinstance(block, dict) else {"value": block}),
                        where, **base)

    def result_rows(self, message: dict, where: str, base: dict) -> Iterator[Draft]:
        """A toolResult: the tool_result row joined by toolCallId (and a row when no call came before it)."""
        call_id, name = text_field(message, "toolCallId"), text_field(message, "toolName")
        call = self.calls.take(call_id)
        text = content_text(message.get("content"))
        if message.get("isError") is True:
            text = f"[tool error] {text}"
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id,
                    model=call.model if call else "", **base)
        if call is None and not self.calls.was_called(call_id):
            yield Draft("system", f"parser: tool result for {name} with no tool call before it", where,
                        tool_name=name, tool_use_id=call_id, **base)

    def bash_rows(self, message: dict, where: str, base: dict) -> Iterator[Draft]:
        """A shell command the user ran with ``!``: a tool_use and its tool_result, joined by their entry."""
        command, output = bash_execution_text(message)
        call_id = f"bash:{where}"
        yield Draft("tool_use", command, where, tool_name="bashExecution", tool_use_id=call_id, **base)
        yield Draft("tool_result", output, where, tool_name="bashExecution", tool_use_id=call_id, **base)

    # -- end of the session -------------------------------------------------------------------------------------

    def finish(self) -> Iterator[Draft]:
        """The rows only the whole session gives: calls never answered, and the abandoned branches."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()
        if self.forgotten:
            yield self.limit_row()
        else:  # a forgotten entry may be the parent looked for: chain breaks are known only of a whole tree
            yield from self.chain_breaks()
        yield from self.branch_rows()

    def chain_breaks(self) -> Iterator[Draft]:
        """An ``integrity: chain break:`` row per entry whose parentId names no entry of the session (at most 20)."""
        ids = {entry_id for _, entry_id, _, _ in self.tree}
        broken = [item for item in self.tree if item[2] is not None and item[2] not in ids]
        for line, _, parent, when in broken[:CHAIN_BREAKS_SHOWN]:
            named = parent if isinstance(parent, str) else f"an id over {SHORT_ID} characters"
            times = {"timestamp_ns": when, "timestamp_source": "record"} if when is not None \
                else {"timestamp_source": "none"}
            yield Draft("system", f"integrity: chain break: {self.span(line, line)} continues from entry {named}, "
                                  f"which is not in {self.container}", self.place(line), session_id=self.session_id,
                        project_path=self.project, **times)
        if len(broken) > CHAIN_BREAKS_SHOWN:
            yield Draft("system", f"integrity: chain break: {len(broken) - CHAIN_BREAKS_SHOWN} more entries continue "
                                  f"from entries not in {self.container}", "file",
                        session_id=self.session_id, project_path=self.project, timestamp_source="none")

    def limit_row(self) -> Draft:
        """The ``parser:`` row of a tree over its budget, at the entry where it was passed."""
        first, last = self.forgotten_lines
        count = "1 oldest entry" if self.forgotten == 1 else f"{self.forgotten} oldest entries"
        text = (f"parser: entry tree over the limit ({self.tree_limit()} entries held); the {count} "
                f"({self.span(first, last)}) were counted, not held: whether they are on the path from the last entry "
                "is not known, and the branch rows are of the entries held")
        return Draft("system", text, self.place(self.over_at), session_id=self.session_id, project_path=self.project,
                     timestamp_source="none")

    def branch_rows(self) -> Iterator[Draft]:
        """One ``branch:`` row per run of entries that are not on the path from the last entry to the root."""
        if not self.tree:
            return
        on_path = path_to_root(self.tree)
        leaf_line = self.tree[-1][0]
        run: list[TreeEntry] = []
        for item in [*self.tree, None]:
            if item is not None and item[1] not in on_path:
                run.append(item)
                continue
            if run:
                left_at = item[3] if item is not None else self.tree[-1][3]
                yield self.abandoned(run, left_at, leaf_line)
                run = []

    def abandoned(self, run: list, left_at: int | None, leaf_line: int) -> Draft:
        """The ``branch:`` row of one abandoned run, at its first entry, timed when the path went on without it."""
        first, last = run[0][0], run[-1][0]
        first_id = run[0][1]
        named = f"entry {first_id}" if isinstance(first_id, str) else f"an entry whose id is over {SHORT_ID} characters"
        text = (f"branch: {self.span(first, last)} ({len(run)} entr{'y' if len(run) == 1 else 'ies'}, from {named}) "
                f"are not on the path from the last entry ({self.span(leaf_line, leaf_line)}) to the root: "
                "an abandoned branch")
        times = {"timestamp_ns": left_at, "timestamp_source": "record"} if left_at is not None \
            else {"timestamp_source": "none"}
        return Draft("system", text, self.place(first), session_id=self.session_id, project_path=self.project,
                     **times)


def path_to_root(tree: deque[TreeEntry]) -> set[Key]:
    """The ids on the path from the last entry back through parentId (a cycle, a dangling or lost parent ends it)."""
    parents = {entry_id: parent for _, entry_id, parent, _ in tree}
    on_path: set[Key] = set()
    current: Key | None = tree[-1][1]
    while current is not None and current not in on_path and current in parents:
        on_path.add(current)
        current = parents[current]
    return on_path


def entry_text(entry: dict) -> str:
    """The text of a non-message entry pi writes (model changes have their own rows)."""
    kind = entry.get("type")
    if kind == "thinking_level_change":
        return f"thinking level: {text_field(entry, 'thinkingLevel')}"
    if kind == "compaction":
        kept = text_field(entry, "firstKeptEntryId") or text_field(entry, "firstKeptEntryIndex")
        hook = " fromHook=true" if entry.get("fromHook") is True else ""
        return (f"compaction: {text_field(entry, 'summary')} (tokensBefore={text_field(entry, 'tokensBefore')} "
                f"firstKept={kept}{hook})")
    if kind == "branch_summary":
        return f"branch summary (from entry {text_field(entry, 'fromId')}): {text_field(entry, 'summary')}"
    if kind == "custom":
        return f"custom {text_field(entry, 'customType')}: {text_field(entry, 'data')}"
    if kind == "custom_message":
        hidden = " (not displayed)" if entry.get("display") is False else ""
        return f"custom message {text_field(entry, 'customType')}{hidden}: {content_text(entry.get('content'))}"
    if kind == "label":
        target = text_field(entry, "targetId")
        label = entry.get("label")
        return f"label: {label} (on entry {target})" if isinstance(label, str) else f"label cleared (on entry {target})"
    if kind == "session_info":
        return f"session name: {text_field(entry, 'name')}"
    if not isinstance(kind, str):
        return unknown_text("entry without a type", entry)
    return unknown_text(f"entry {kind}", entry)
