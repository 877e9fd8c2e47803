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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import cast

from aitrail.analyzer.bundle import MemberUnreadable
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.decode import decode_json_utf8
from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.rows import Draft

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


def find_duplicates(ctx: ParseContext) -> dict[int, int]:
    """{line that repeats: line it repeats} for the whole file, by reading it once more."""
    sides: dict[tuple[str, bytes], tuple[list[int], list[int]]] = {}
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
                sides.setdefault(key, ([], []))[0 if side == "response" else 1].append(item.number)
    except MemberUnreadable:
        pass  # the rows pass reads up to the same place and reports it
    pairs: dict[int, int] = {}
    for (kind, _), (responses, events) in sides.items():
        for response, event in zip(responses, events, strict=False):  # unpaired extras stay unpaired
            if kind == "user":
                pairs[response] = event
            else:
                pairs[event] = response
    return pairs


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
        # per key, the lines of each side not paired yet: (line, its held row or None)
        self.open: dict[tuple[str, bytes], tuple[deque, deque]] = {}
        self.known: dict[int, int] = {}  # line that repeats: line it repeats (found so far)
        self.whole: dict[int, int] | None = None  # the whole file's pairing, once it had to be read
        self.queue: deque[Draft | _Held] = deque()  # rows not yet given, in file order
        self.waiting: dict[int, _Held] = {}  # line: its held row, while a later line may repeat it
        self.characters = 0  # text held in the queue

    def get(self, line: int) -> int | None:
        """The line that ``line`` repeats, as the lines read so far say (the whole file, after a re-read)."""
        return self.whole.get(line) if self.whole is not None else self.known.get(line)

    def place(self, line: Line) -> _Held | None:
        """Pair one decoded line with earlier ones; a _Held when its row must wait for a later line."""
        if self.whole is not None:
            return None
        side, keys = line_keys(line.value, line.raw)
        held = None
        for kind, digest in keys:
            sides = self.open.get((kind, digest))
            if sides is None:  # not setdefault: that would make two deques for every key seen before
                sides = self.open[(kind, digest)] = (deque(), deque())
            responses, events = sides
            mine, theirs = (responses, events) if side == "response" else (events, responses)
            if theirs:
                partner, partner_held = theirs.popleft()
                if side == repeating_side(kind):
                    self.known[line.number] = partner
                else:
                    self.known[partner] = line.number
                    if partner_held is not None:
                        partner_held.decide(line.number)
                        del self.waiting[partner]
            elif side == repeating_side(kind):  # a later line of the other side may make this a repeat
                held = held or _Held(_repeat_text(kind, line))
                mine.append((line.number, held))
                self.waiting[line.number] = held
            else:
                mine.append((line.number, None))
        return held

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
        self.whole = find_duplicates(self.ctx)
        for line, held in self.waiting.items():
            held.decide(self.whole.get(line))
        self.waiting.clear()
        self.open.clear()

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
