"""Replaying a Gemini CLI chat JSONL file as the mutation log it is, without losing anything.

The file is appended to, never rewritten (since 2026-04-09). Lines are:

* the metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind?,
  directories?, summary?}`` (a whole legacy record on one line also carries
  ``messages``);
* a ``MessageRecord`` (has a string ``id``), re-appended whole each time it
  changes: the loader keeps the last copy per id at the position of the first
  (a JavaScript ``Map.set`` on an existing key keeps its place);
* ``{"$set": {...}}``, merged into the metadata; ``$set.messages`` replaces the
  whole message list (a checkpoint);
* ``{"$rewindTo": "<id>"}``: that message and every later one leave the
  conversation (all of them when the id is unknown).

Upstream drops what a rewind or a checkpoint removes; the replay keeps it:
each such message still gives its rows, marked ``rewound@line:R`` or
``replaced@line:R`` as the last segment of their locators. Every earlier
copy of a message is an ``Occurrence`` too, so every line is accounted for.

What the replay holds has a budget (MAX_HELD_COST, estimated bytes of
objects: ``decode.decode_cost`` of each line held, and ITEM_COST for each copy,
event and row; an earlier copy, slimmed, gives its line's cost back). Past it
the lines are counted, not held (``over_at``, ``skipped``), and the caller
shows the conversation as the lines before them left it, as the VS Code
mutation-log replay does. Real chat files are far under it.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/services/chatRecordingService.ts:76-98,
151-345 (loadConversationRecord), 559-573, 648-663, 1004-1031 (research/formats-cli-agents.md 3.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Estimated bytes of objects a replay holds, all lines together: about the memory of a chat file of
# several hundred MB of distinct messages; a real one is a few MB to tens of MB.
MAX_HELD_COST = 512 * 1024 * 1024
ITEM_COST = 512  # a copy, event or row held: its objects (locator, position, record or slim record)

Position = tuple[int, int]  # (line number, index inside the line: -1 for the line itself)
# What ``Replay.ordered`` yields, in this order when they share a place.
EVENT, MESSAGE, EARLIER_COPY = 0, 1, 2


@dataclass(slots=True)
class Copy:
    """One copy of a message: the record as written, its locator and its position in the file."""

    record: dict
    locator: str
    position: Position
    cost: int = 0  # the estimated cost of its record, given back when the record is slimmed


@dataclass
class Entry:
    """One message's life in the conversation: its copies and, if it left, where."""

    message_id: str
    copies: list[Copy] = field(default_factory=list)
    marker: str = ""  # "rewound@line:R" or "replaced@line:R"

    @property
    def anchor(self) -> Position:
        """Where the message first appeared (its rows sit there)."""
        return self.copies[0].position

    @property
    def final(self) -> Copy:
        """The last copy, whose content the rows show."""
        return self.copies[-1]


@dataclass
class LineEvent:
    """A row-giving line that is not a message: metadata, $set, $rewindTo, unknown, unreadable."""

    kind: str  # metadata | set | rewind | unknown | draft
    position: Position
    record: object = None
    removed: list[str] = field(default_factory=list)  # ids a rewind or checkpoint took out
    found: bool = True  # whether a rewind's target was in the conversation


class Replay:
    """Feed records in file order; read ``entries``, ``events`` and ``metadata`` after."""

    def __init__(self) -> None:
        self.live: dict[str, Entry] = {}  # the conversation as upstream would load it, in order
        self._place: dict[str, int] = {}  # live id -> its index in _order
        self._order: list[str] = []  # the live ids in order: a rewind cuts a suffix of it
        self.entries: list[Entry] = []  # every message life, including the removed ones
        self.events: list[LineEvent] = []
        self.metadata: dict = {}
        self.limit = MAX_HELD_COST  # read when the replay starts (a test may set the module's constant)
        self.held = 0  # estimated cost of what is held
        self.over_at = 0  # the line at which the budget was reached: it and the lines after are not held
        self.skipped = 0  # lines counted, not held

    def admit(self, cost: int, line: int) -> bool:
        """Whether a line of estimated ``cost`` may be held; past MAX_HELD_COST it is counted instead."""
        if not self.over_at and self.held + cost + ITEM_COST <= self.limit:
            self.held += cost + ITEM_COST
            return True
        self.over_at = self.over_at or line
        self.skipped += 1
        return False

    def add_record(self, record: dict, line: int, cost: int = 0) -> None:
        """Classify one decoded line the way the upstream loader does, in its order.

        ``cost``: the line's estimated cost (``decode.decode_cost`` of its text), for the budget.
        """
        if not self.admit(cost, line):
            return
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"], line)
        elif isinstance(record.get("id"), str):
            self._message(record, f"line:{line}", (line, -1), cost)
        elif isinstance(record.get("$set"), dict):
            self._set(record, line)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            self._metadata(record, line)
        else:
            self.events.append(LineEvent("unknown", (line, -1), record))

    def add_draft(self, draft, line: int) -> None:
        """A row made elsewhere (an unreadable line) that keeps its place in line order (within the budget)."""
        if self.admit(len(draft.text), line):
            self.events.append(LineEvent("draft", (line, -1), draft))

    def note(self, draft, line: int) -> None:
        """A row about the replay itself (its budget), at ``line``, whatever the budget."""
        self.events.append(LineEvent("draft", (line, -1), draft))

    # -- record kinds --------------------------------------------------------------------

    def _message(self, record: dict, locator: str, position: Position, cost: int = 0) -> None:
        message_id = record["id"]
        entry = self.live.get(message_id)
        if entry is None:
            entry = Entry(message_id)
            self.entries.append(entry)
            self.live[message_id] = entry
            self._place[message_id] = len(self._order)
            self._order.append(message_id)
        elif entry.copies:  # the copy before this one only names itself from now on: never held whole
            earlier = entry.copies[-1]
            earlier.record = _slim(earlier.record)
            self.held -= earlier.cost
            earlier.cost = 0
        entry.copies.append(Copy(record, locator, position, cost))

    def _rewind(self, target: str, line: int) -> None:
        """Cut the live conversation from ``target`` on: time linear in what it removes, never in what stays."""
        found = target in self._place
        start = self._place[target] if found else 0
        removed = self._order[start:]
        del self._order[start:]
        for message_id in removed:
            del self._place[message_id]
            self.live.pop(message_id).marker = f"rewound@line:{line}"
        self.events.append(LineEvent("rewind", (line, -1), target, removed, found))

    def _set(self, record: dict, line: int) -> None:
        update = record["$set"]
        event = LineEvent("set", (line, -1), record)
        self.events.append(event)
        messages = update.get("messages")
        if isinstance(messages, list):
            kept: dict[str, Entry] = {}
            for index, message in enumerate(messages):
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._message(message, f"line:{line}/$set/messages/{index}", (line, index))
                    kept[message["id"]] = self.live[message["id"]]
            for message_id, entry in self.live.items():
                if message_id not in kept:
                    entry.marker = f"replaced@line:{line}"
                    event.removed.append(message_id)
            self.live = kept
            self._order = list(kept)
            self._place = {message_id: index for index, message_id in enumerate(self._order)}
        self._merge(update)

    def _merge(self, fields: dict) -> None:
        """Later values win, except the session id: rows keep the one the file started with."""
        for key, value in fields.items():
            if key == "messages" or (key == "sessionId" and self.session_id()):
                continue
            self.metadata[key] = value

    def _metadata(self, record: dict, line: int) -> None:
        self.events.append(LineEvent("metadata", (line, -1), record))
        self._merge(record)
        messages = record.get("messages")
        if isinstance(messages, list):  # a whole legacy record written on one line
            for index, message in enumerate(messages):
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._message(message, f"line:{line}/messages/{index}", (line, index))

    # -- reading the result -------------------------------------------------------------------

    def ordered(self) -> list[tuple[Position, int, object]]:
        """Everything that gives rows, in line order.

        A message gives its rows at its first copy's place (where upstream keeps
        it), from its last copy; each earlier copy, and each line event, at its own.
        """
        items: list[tuple[Position, int, object]] = []
        for event in self.events:
            items.append((event.position, EVENT, event))
        for entry in self.entries:
            items.append((entry.anchor, MESSAGE, entry))
            for copy in entry.copies[:-1]:
                items.append((copy.position, EARLIER_COPY, (entry, copy)))
        items.sort(key=lambda item: (item[0], item[1]))
        return items

    def session_id(self) -> str:
        """The session id from the metadata records ('' if none)."""
        value = self.metadata.get("sessionId")
        return value if isinstance(value, str) else ""


def _slim(record: dict) -> dict:
    """What an earlier copy of a message is shown by (its type and time), not the whole record.

    A message is re-appended whole each time it changes (a long reply streamed
    into a thousand copies): the rows come from the last copy, the earlier ones
    give a ``superseded:`` row that names only their type and time, so only
    those are kept, and memory holds each message once.
    """
    return {key: record[key] for key in ("type", "timestamp") if isinstance(record.get(key), str)}
