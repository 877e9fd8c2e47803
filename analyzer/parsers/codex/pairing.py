"""Which rollout lines repeat another: the prompt, reply and reasoning that Codex records twice.

A prompt is a ``response_item`` user message *and* a ``user_message`` event; a
reply an assistant message and an ``agent_message`` event; a reasoning
summary a reasoning item and ``agent_reasoning`` events. Per content (kind
and whitespace-free text digest), the n-th response line pairs with the n-th
event line; extras stay unpaired. Only text is compared: a prompt's event
holds its typed text without the image parts, and a reply gives one event per
text part and none for an image part. Lines written without their ``type``
pair as the type their fields make certain (``items.item_kind``,
``event_kind``). In a pair the prompt keeps the event (it holds only what
the user typed) and the response line becomes a ``duplicate of line N`` row;
replies and reasoning keep the response item (it is complete) and the event
becomes the duplicate.

``Repeats`` finds the pairs while the rollout is read, in one pass. The row
of a line that a *later* line may still repeat (a prompt's response line
before its event, a reply's event before its item) is held, with the rows
after it, until its partner arrives or the file ends, and rows leave in file
order. Pairs are a few lines apart; should the held rows pass HOLD_ROWS or
HOLD_CHARACTERS (a line that never pairs, early in a long file), the whole
file's pairing is computed by a second read (``find_duplicates``, what every
rollout cost before) and nothing more is held. Both give the same pairs.

Both reads pair with the same ``Pairing``, whose memory has budgets of its
own: the lines still waiting for their other half (MAX_UNPAIRED: past it the
oldest is let go, a row of its own, and a line that would have paired with it
is one too), and the pairs the second read keeps for the lines still to come
(MAX_KNOWN_PAIRS: past it the later lines are not marked as repeats). Each
says so once in a ``parser:`` row (``notices``). A waiting content held two
empty queues for the rest of the file once it paired (1.5 KB a content);
a paired content now holds nothing.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from typing import cast

from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json_utf8
from aitrail.analyzer.view.rows import Draft

from .items import (
    PROMPT_REPEAT,
    as_text,
    is_context,
    item_kind,
    prompt_signature,
    reasoning_texts,
    reply_signatures,
    signature,
)


def names_a_pair(raw: bytes) -> bool:
    """Whether a line's raw text holds a marker that any half of a pair holds.

    The raw text must say what the value says: a key spelled with escapes is
    not taken for one. Up to seven searches in C: a regular expression of the
    alternatives, which tries each at every byte, took three times as long on
    a reasoning line and six times on a 5 KB line (measured with five).
    """
    # the commonest first: reasoning items, messages, then the events; last, what the halves written
    # without their type hold instead of it (a reasoning item's summary, a prompt event's image lists)
    return (b'"reasoning"' in raw or b'"role"' in raw or b"agent_reasoning" in raw or b"agent_message" in raw
            or b"user_message" in raw or b'"summary"' in raw or b'images"' in raw)


_EVENT_FIELDS = {"user_message": ("user", "message"), "agent_message": ("assistant", "message"),
                 "agent_reasoning": ("reasoning", "text"), "agent_reasoning_raw_content": ("reasoning_raw", "text")}
EVENT_REPEAT = "duplicate of line {line} ({kind} event of that response item)"
HOLD_ROWS = 4096
HOLD_CHARACTERS = 8 * 1024 * 1024
# Halves waiting for their other half (about 500 bytes each, so about 125 MB at most); a real rollout
# has a few hundred at a time (a reasoning item whose events were not kept, a reply written once).
MAX_UNPAIRED = 250_000
# Pairs the whole-file read keeps for the lines still to come (about 100 bytes each): a real rollout
# has fewer than 100,000 lines, so fewer than 50,000 pairs.
MAX_KNOWN_PAIRS = 1_000_000
UNPAIRED_OVER = ("parser: unpaired lines over the limit ({limit} waiting for their other half); from here on the "
                 "oldest waiting is let go: it, and a later line that would have paired with it, are rows of their "
                 "own")
PAIRS_OVER = ("parser: pairing over the limit ({limit} pairs kept from the whole file's read); from here on the lines "
              "are not marked as repeats: a prompt, reply or reasoning may be given twice")


_SIDES = {"response_item": "response", "event_msg": "event"}  # a tagged line's type: its side
# fields only a user_message event has among the events that carry a ``message`` (protocol.rs UserMessageEvent)
_PROMPT_EVENT_FIELDS = ("images", "local_images")


def event_kind(event: dict) -> str:
    """An event's type: its ``type`` tag; untagged, ``user_message`` when its fields say so, else ''.

    Error, warning, agent and background events all carry a ``message`` too,
    so a ``message`` alone says nothing; a prompt event alone has image lists.
    A tag of another JSON kind is given as JSON text (never an event kind).
    """
    kind = event.get("type")
    if kind is None and isinstance(event.get("message"), str) and any(key in event for key in _PROMPT_EVENT_FIELDS):
        return "user_message"
    return as_text(kind)


def record_item(record: dict) -> tuple[str, dict]:
    """('response'|'event', payload) of a decoded line; ('', {}) for anything else.

    The line forms are told apart in the order ``RolloutReader.line_rows`` uses.
    """
    kind = record.get("type")  # any JSON value: a list or object is no key of _SIDES (nor hashable)
    if "payload" in record and isinstance(kind, str):
        return _SIDES.get(kind, ""), as_dict(record.get("payload"))
    if "record_type" in record or (not isinstance(kind, str) and "id" in record and "timestamp" in record):
        return "", {}  # a state line, an untagged meta line
    return ("response", record) if item_kind(record) is not None else ("", {})


def signatures(side: str, item: dict) -> list[tuple[str, bytes]]:
    """(content kind, signature) of each pairable piece of a response item or event."""
    if side == "event":
        field = _EVENT_FIELDS.get(event_kind(item))
        return [(field[0], signature(as_text(item.get(field[1]))))] if field else []
    kind = item_kind(item) if side == "response" else None
    if kind == "message":
        role, content = item.get("role"), item.get("content")
        if role == "user" and not is_context(content):
            return [("user", prompt_signature(content))]
        if role == "assistant":
            return [("assistant", digest) for digest in reply_signatures(content)]
    elif kind == "reasoning":
        summary, raw = reasoning_texts(item)
        return [*(("reasoning", signature(text)) for text in summary),
                *(("reasoning_raw", signature(text)) for text in raw)]
    return []


def line_keys(record: object, raw: bytes) -> tuple[str, list[tuple[str, bytes]]]:
    """The side ('response'|'event'|'') and pairing keys of one decoded line."""
    side, item = record_item(record) if isinstance(record, dict) else ("", {})
    keys = signatures(side, item) if side else []
    if keys and not names_a_pair(raw):
        return side, []
    return side, keys


Key = tuple[str, bytes]  # (content kind, signature)


class _Queue:
    """The lines of one side waiting for the other, for one content: (line, held row or None, serial), oldest first.

    A list read from a moving head: most contents wait with one line, and a
    deque costs 760 bytes however few it holds.
    """

    __slots__ = ("side", "items", "head")

    def __init__(self, side: str) -> None:
        self.side = side
        self.items: list[tuple[int, _Held | None, int]] = []
        self.head = 0

    def push(self, item: tuple[int, _Held | None, int]) -> None:
        self.items.append(item)

    def pop(self) -> tuple[int, _Held | None, int]:
        """The oldest item, no longer waiting (what it held is let go once half of the list is read)."""
        item = self.items[self.head]
        self.head += 1
        if self.head * 2 >= len(self.items):
            del self.items[:self.head]
            self.head = 0
        return item

    def __len__(self) -> int:
        return len(self.items) - self.head


class Pairing:
    """Per content, the lines of one side waiting for the other: the n-th line of a side pairs with the n-th.

    Within MAX_UNPAIRED waiting lines, all told: past it the oldest is let go.
    ``evicted_at``: the line at which that first happened (0: never).
    """

    def __init__(self) -> None:
        self.open: dict[Key, _Queue] = {}  # only contents with a line waiting: one side at a time
        self.order: OrderedDict[int, Key] = OrderedDict()  # serial of each waiting line -> its content, oldest first
        self.serial = 0
        self.evicted_at = 0

    def take(self, side: str, key: Key) -> tuple[int, _Held | None] | None:
        """The oldest line of the other side waiting with this content, no longer waiting (its line, its held row)."""
        queue = self.open.get(key)
        if queue is None or queue.side == side:
            return None
        partner, partner_held, serial = queue.pop()
        del self.order[serial]
        if not len(queue):
            del self.open[key]
        return partner, partner_held

    def wait(self, line: int, side: str, key: Key, held: _Held | None) -> None:
        """``line`` waits for a line of the other side with this content (``held``: its held row, if any)."""
        queue = self.open.get(key)
        if queue is None:
            queue = self.open[key] = _Queue(side)
        self.serial += 1
        queue.push((line, held, self.serial))
        self.order[self.serial] = key

    def trim(self, line: int) -> list[tuple[int, _Held | None]]:
        """Let the oldest waiting lines go until MAX_UNPAIRED wait (``line``: the line read); the ones let go."""
        gone = []
        while len(self.order) > MAX_UNPAIRED:
            _, key = self.order.popitem(last=False)
            queue = self.open[key]
            old, old_held, _ = queue.pop()  # the oldest of all is the oldest of its own content
            if not len(queue):
                del self.open[key]
            gone.append((old, old_held))
            self.evicted_at = self.evicted_at or line
        return gone


def find_duplicates(ctx: ParseContext, after: int = 0, waiting: Iterable[int] = ()) -> tuple[dict[int, int],
                                                                                                Pairing, int]:
    """The whole file's pairing, by reading it once more: ({line that repeats: line it repeats}, pairing, over).

    Kept: the pairs of a line in ``waiting`` or after line ``after`` (those a
    caller reading at ``after`` still needs), at most MAX_KNOWN_PAIRS; ``over``
    is the line at which that budget was reached (the read stops there; 0: never).
    """
    wanted, pairing = set(waiting), Pairing()
    pairs: dict[int, int] = {}
    try:
        for item in ctx.lines():
            if isinstance(item, Draft) or not names_a_pair(item.raw):
                continue  # the rows pass reads the same lines and yields the Drafts
            try:  # decoded exactly as the rows pass decodes it, so both agree on which lines exist
                record = decode_json_utf8(item.raw.strip())
            except (ValueError, UnicodeDecodeError):
                continue
            side, keys = line_keys(record, item.raw)
            for key in keys:
                found = pairing.take(side, key)
                if found is None:
                    pairing.wait(item.number, side, key, None)
                    continue
                repeats, repeated = (item.number, found[0]) if side == repeating_side(key[0]) else (
                    found[0], item.number)
                if repeats > after or repeats in wanted:
                    if len(pairs) >= MAX_KNOWN_PAIRS:
                        return pairs, pairing, item.number
                    pairs[repeats] = repeated
            pairing.trim(item.number)
    except MemberUnreadable:
        pass  # the rows pass reads up to the same place and reports it
    return pairs, pairing, 0


def repeating_side(kind: str) -> str:
    """The side whose line becomes the ``duplicate of`` row: a prompt keeps its event, the rest their item."""
    return "response" if kind == "user" else "event"


class _Held:
    """The row of a line that a later line may still turn into a ``duplicate of`` row."""

    __slots__ = ("row", "repeat", "waiting")

    def __init__(self, repeat: str):
        self.row: Draft | None = None  # given by release(), right after place() made this
        self.repeat = repeat  # the duplicate text, with {line} still open
        self.waiting = True

    def decide(self, line: int | None) -> None:
        """Settled: a repeat of ``line``, or (None) a row of its own."""
        if line is not None and self.row is not None:
            self.row.turn_type, self.row.text = "system", self.repeat.format(line=line)
        self.waiting = False


class Repeats:
    """The pairing of one rollout, found while it is read; rows are held back only while a pair is open."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.pairing: Pairing | None = Pairing()  # None once the whole file's pairing was read
        self.known: dict[int, int] = {}  # the line read, when it repeats an earlier one: the line it repeats
        self.whole: dict[int, int] | None = None  # the whole file's pairing (for the lines to come), once read
        self.line = 0  # the last line placed
        self.notices: list[Draft] = []  # parser: rows of the budgets, for the reader to give
        self.said: set[str] = set()
        self.queue: deque[Draft | _Held] = deque()  # rows not yet given, in file order
        self.waiting: dict[int, _Held] = {}  # line: its held row, while a later line may repeat it
        self.characters = 0  # text held in the queue

    def get(self, line: int) -> int | None:
        """The line that ``line`` (the line read) repeats, as the lines read so far say.

        After a re-read, the whole file says, and each line's answer is let go once given.
        """
        return self.whole.pop(line, None) if self.whole is not None else self.known.get(line)

    def place(self, line: Line) -> _Held | None:
        """Pair one decoded line with earlier ones; a _Held when its row must wait for a later line."""
        self.known.clear()  # only the line read is asked about
        self.line = line.number
        pairing = self.pairing
        if pairing is None:
            return None
        side, keys = line_keys(line.value, line.raw)
        held = None
        for key in keys:
            found = pairing.take(side, key)
            if found is not None:
                partner, partner_held = found
                if side == repeating_side(key[0]):
                    self.known[line.number] = partner
                elif partner_held is not None:
                    partner_held.decide(line.number)
                    del self.waiting[partner]
            elif side == repeating_side(key[0]):  # a later line of the other side may make this a repeat
                held = held or _Held(_repeat_text(key[0], line))
                pairing.wait(line.number, side, key, held)
                self.waiting[line.number] = held
            else:
                pairing.wait(line.number, side, key, None)
        for gone, gone_held in pairing.trim(line.number):
            if gone_held is not None and self.waiting.get(gone) is gone_held:
                del self.waiting[gone]
                gone_held.decide(None)  # let go: a row of its own
        if pairing.evicted_at and not self.said:
            self.notice(UNPAIRED_OVER.format(limit=MAX_UNPAIRED), pairing.evicted_at)
        return held if held is not None and held.waiting else None

    def notice(self, text: str, line: int) -> None:
        """A budget's ``parser:`` row at ``line``, given once per budget."""
        if text not in self.said:
            self.said.add(text)
            self.notices.append(Draft("system", text, f"line:{line}", timestamp_source="none"))

    def take_notices(self) -> list[Draft]:
        """The budget rows made since the last call (the reader gives them with its thread's columns)."""
        notices, self.notices = self.notices, []
        return notices

    def release(self, rows: list[Draft], held: _Held | None = None) -> Iterable[Draft]:
        """Queue one line's rows (its ``held`` from place()); give every row that is settled, in order."""
        if held is None and not self.queue:
            # nothing is held (a held row waits in the queue): these rows are settled, and leave as they are
            return rows
        if held is not None and held.waiting and len(rows) == 1:
            held.row = rows[0]
            self.queue.append(held)
        else:
            if held is not None and held.waiting:  # not the one row a pair replaces: decide every pair now
                self.settle()
            self.queue.extend(rows)
        self.characters += sum(len(row.text) for row in rows)
        if self.waiting and (len(self.queue) > HOLD_ROWS or self.characters > HOLD_CHARACTERS):
            self.settle()
        return self._settled()

    def finish(self) -> Iterator[Draft]:
        """At the end of what could be read: no row still held repeats a line."""
        for held in self.waiting.values():
            held.decide(None)
        self.waiting.clear()
        return self._settled()

    def settle(self) -> None:
        """Read the whole file's pairing now (one more read), decide every held row by it, hold no more."""
        self.whole, pairing, over = find_duplicates(self.ctx, self.line, self.waiting)
        for line, held in self.waiting.items():
            held.decide(self.whole.pop(line, None))
        self.waiting.clear()
        self.pairing = None
        if pairing.evicted_at:  # the same as this read's, or one it had not reached yet
            self.notice(UNPAIRED_OVER.format(limit=MAX_UNPAIRED), pairing.evicted_at)
        if over:
            self.notice(PAIRS_OVER.format(limit=MAX_KNOWN_PAIRS), over)

    def _settled(self) -> Iterator[Draft]:
        queue = self.queue
        while queue and not (isinstance(queue[0], _Held) and queue[0].waiting):
            item = queue.popleft()
            yield cast(Draft, item.row) if isinstance(item, _Held) else item  # a queued _Held has its row
        if not queue:
            self.characters = 0  # counted as queued (a held text may change): zero only when all is given


def _repeat_text(kind: str, line: Line) -> str:
    """The ``duplicate of`` text a held line would get: the prompt's, or the event's with its type."""
    if kind == "user":
        return PROMPT_REPEAT
    record = line.value
    event = as_dict(record.get("payload")) if "payload" in record else record
    return EVENT_REPEAT.replace("{kind}", event_kind(event))
