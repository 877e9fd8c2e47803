"""What a Claude Code transcript walk holds from line to line, each part within a budget of its own.

A transcript is streamed line by line, but joining its lines needs memory of
earlier ones: the ``parentUuid`` tree (where each uuid is, its first child,
the tool calls on its line), the sessions of the file (the last chain entry
and the model of each), and the blocks each API response (``message.id``)
has already given. Held without a limit, a hostile file of many millions of
tiny lines took gigabytes for them. Each is now a window in file order with a
budget: past it the oldest entries are forgotten (counted, never held), the
walk says so once in a ``parser:`` row at the line where it first happened
(``notices``), and it goes on with what it holds. The budgets are far above
real transcripts (the longest known have about 100,000 lines, fewer than
that many uuids, a handful of sessions and responses of a few blocks each).

Keys are held as written up to SHORT_KEY characters and as a 16-byte digest
when longer, so that every held entry costs a bounded few hundred bytes
whatever its line holds.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable

from aitrail.analyzer.view.decode import canonical_json
from aitrail.analyzer.view.rows import carried

from . import entries

SHORT_KEY = 128  # characters: an id this short is held as it is, a longer one as its digest
# uuids held, plus the tool call ids of their lines: about 350 bytes each, so at most about 180 MB
TREE_ENTRIES = 500_000
SESSIONS = 10_000  # sessions (tracks) of one file held: a file has one, and a sidechain or sub-agent track each
# block identities of the responses held (a response counts four more, for itself): about 150 bytes each
RESPONSE_BLOCKS = 500_000
GROWN_CANDIDATES = 8  # earlier texts of one response and kind that a block is compared with to see it grow
# tool_use ids answered by a result, with the tool name the result gave (about 200 bytes each: about 50 MB)
ANSWERED_IDS = 262_144
_HEAD = 64  # characters of an earlier text kept to compare before a digest is computed

Key = str | bytes

TREE_OVER = ("parser: entry tree over the limit ({limit} uuids and their tool call ids); from here on the oldest "
             "are forgotten: a branch from one of them is named as not held, and a line repeating one is read again")
SESSIONS_OVER = ("parser: sessions over the limit ({limit} held for this file); from here on the oldest are "
                 "forgotten: a later line of one starts its branch walk and its model rows afresh")
ANSWERS_OVER = ("parser: answered tool calls over the limit ({limit} ids held); from here on the oldest are "
                "forgotten: a later result for one of them reads as having no call before it")
RESPONSES_OVER = ("parser: response blocks over the limit ({limit} held); from here on the oldest responses are "
                  "forgotten: a later line repeating one of their blocks gives it again")


def held_key(text: str) -> Key:
    """``text`` itself when it is at most SHORT_KEY characters, else a 16-byte digest of it."""
    if len(text) <= SHORT_KEY:
        return text
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


class Window:
    """Values by key in the order first put, within a budget of weight; past it the oldest are forgotten.

    ``weight`` gives what one value costs against the budget (at least 1).
    The limit is given at each call, so that a test can set the module's constant.
    """

    def __init__(self, weight: Callable[[object], int]) -> None:
        self.values: dict[Key, object] = {}
        self._order: deque[Key] = deque()  # keys in the order put (a dict's oldest cannot be popped in O(1))
        self._weight = weight
        self.held = 0
        self.forgotten = 0

    def get(self, key: Key) -> object | None:
        """The value held under ``key``, or None."""
        return self.values.get(key)

    def put(self, key: Key, value: object, limit: int) -> bool:
        """Hold ``value`` under a key not held; True when the window forgot for the first time now."""
        self.values[key] = value
        self._order.append(key)
        self.held += self._weight(value)
        return self.fit(limit)

    def grew(self, key: Key, amount: int, limit: int) -> bool:
        """The value under ``key`` weighs ``amount`` more (nothing if it is no longer held); as ``put``."""
        if key not in self.values:
            return False
        self.held += amount
        return self.fit(limit)

    def fit(self, limit: int) -> bool:
        """Forget the oldest values until the window is within ``limit``; True on the first forgetting."""
        first = self.forgotten == 0
        while self.held > limit and self._order:
            value = self.values.pop(self._order.popleft(), None)
            if value is not None:
                self.held -= self._weight(value)
                self.forgotten += 1
        return first and self.forgotten > 0


# -- the parentUuid tree and the sessions ---------------------------------------------------------------


class Track:
    """One session (track) of the file: its name as shown, its last chain entry and its model."""

    __slots__ = ("key", "name", "last", "model_key", "model")

    def __init__(self, key: Key, name: str) -> None:
        self.key = key
        self.name = carried(name)  # shown in another track's branch row: cut like a carried column
        self.last: Key | None = None  # the last chain entry's key
        self.model_key: Key | None = None
        self.model = ""


class Node:
    """Where one uuid is: its line, track, bytes (or their digest), response, first child and calls."""

    __slots__ = ("line", "track", "bytes_at", "response", "first_child", "calls")

    def __init__(self, line: int, track: Track, bytes_at: bytes | int, response: Key | None,
                 calls: tuple[Key, ...] | frozenset[Key]) -> None:
        self.line = line
        self.track = track
        self.bytes_at = bytes_at  # the line's digest, or packed_span(offset, length) in a file held whole
        self.response = response  # message.id of an assistant line
        self.first_child: int | None = None  # the line of its first non-progress child
        self.calls = calls  # the tool_use ids the line holds (a tuple when few: a set costs 216 bytes)


_SPAN = 1 << 32  # a line is far shorter (context.MAX_LINE_BYTES): one int holds its offset and length


def packed_span(offset: int, length: int) -> int:
    """A line's offset and length as one int (a tuple of two costs three objects per uuid)."""
    return offset * _SPAN + length


def unpacked_span(span: int) -> tuple[int, int]:
    """(offset, length) of a packed_span."""
    return divmod(span, _SPAN)


def held_calls(calls: set) -> tuple[Key, ...] | frozenset[Key]:
    """The tool_use ids of a line as held by its node: a tuple of a few, a frozenset of many."""
    keys = [held_key(call) for call in calls]
    return tuple(keys) if len(keys) <= 8 else frozenset(keys)


def _node_weight(node: object) -> int:
    return 1 + len(node.calls) if isinstance(node, Node) else 1


def _one(_value: object) -> int:
    return 1


class EntryTree:
    """The uuids of one transcript and its sessions, each a Window; ``notices``: the parser: texts to give."""

    def __init__(self) -> None:
        self.nodes = Window(_node_weight)
        self.tracks = Window(_one)
        self.notices: list[str] = []

    def track(self, name: str) -> Track:
        """The track of a session name, held from now on (a new one when it was never held or was forgotten)."""
        key = held_key(name)
        track = self.tracks.get(key)
        if isinstance(track, Track):
            return track
        made = Track(key, name)
        if self.tracks.put(key, made, SESSIONS):
            self.notices.append(SESSIONS_OVER.format(limit=SESSIONS))
        return made

    def node(self, uuid: object) -> Node | None:
        """The node held for a uuid (None for anything else)."""
        if not isinstance(uuid, str):
            return None
        node = self.nodes.get(held_key(uuid))
        return node if isinstance(node, Node) else None

    def line_of(self, uuid: object) -> int | None:
        """The line of a uuid held (None if it is not)."""
        node = self.node(uuid)
        return node.line if node is not None else None

    def add(self, key: Key, node: Node) -> None:
        """Hold a uuid's node (by its held_key), unless it is held already (the first line of a uuid is its place)."""
        if key not in self.nodes.values and self.nodes.put(key, node, TREE_ENTRIES):
            self.notices.append(TREE_OVER.format(limit=TREE_ENTRIES))

    def not_held(self, parent: str) -> str:
        """The branch text for a parent that is not held: not in the file, or (past the budget) perhaps forgotten."""
        if self.nodes.forgotten:
            return (f"branch: continues from entry {parent}, which is not among the entries held (the oldest are "
                    "forgotten past the entry tree's limit)")
        return f"integrity: chain break: continues from entry {parent}, which is not in this file"

    def model_change(self, track: Track, model: str) -> str | None:
        """The ``model:`` text when ``model`` is not the track's model (and it becomes it), else None."""
        key = held_key(model)
        if track.model_key == key:
            return None
        old = track.model if track.model_key is not None else None
        track.model_key, track.model = key, carried(model)
        return f"model: {model}" if old is None else f"model: {old} -> {model}"


# -- what each response has given -----------------------------------------------------------------------


def _digest(*parts: object) -> bytes:
    """A digest of JSON values that is equal exactly when the values are (key order aside)."""
    return hashlib.sha256(canonical_json(parts)).digest()[:16]


def block_identity(block: object) -> tuple | bytes:
    """What a response's later lines are compared by: a call's id (a digest when long), any other block's digest."""
    key = entries.block_key(block)
    if key[0] == "call" and len(key[1]) <= SHORT_KEY:
        return key  # a tuple of two strings: never equal to a digest (bytes)
    return _digest(key)


class Response:
    """What one API response (``message.id``) has already given in this file."""

    __slots__ = ("first_line", "keys", "texts")

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.keys: set = set()  # block identities given
        # kind -> (length, head, digest) of the last GROWN_CANDIDATES texts given, for a block that grows
        self.texts: dict[str, list[tuple[int, str, bytes]]] | None = None


def _response_weight(response: object) -> int:
    return 4 + len(response.keys) if isinstance(response, Response) else 4


def _text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def grown_tail(response: Response, block: object) -> str | None:
    """The new end of a text or thinking block that extends one an earlier line gave, else None.

    The earlier texts are held as length, head and digest (never whole), and
    only the last GROWN_CANDIDATES of a kind are compared: a response of a
    hundred thousand text blocks compared each with all before it was quadratic.
    """
    if not isinstance(block, dict) or block.get("type") not in ("text", "thinking"):
        return None
    kind = str(block["type"])
    text = str(block.get(kind, ""))
    if response.texts is None:
        response.texts = {}
    given = response.texts.setdefault(kind, [])
    for index, (length, head, digest) in enumerate(given):
        if length and len(text) > length and text.startswith(head) and _text_digest(text[:length]) == digest:
            given[index] = (len(text), text[:_HEAD], _text_digest(text))
            return text[length:]
    given.append((len(text), text[:_HEAD], _text_digest(text)))
    if len(given) > GROWN_CANDIDATES:
        del given[0]
    return None


class Responses:
    """The responses of one transcript (a Window of Response by message.id); ``notices`` as EntryTree's."""

    def __init__(self) -> None:
        self.window = Window(_response_weight)
        self.notices: list[str] = []

    def fresh(self, message_id: str | None, blocks: list, number: int) -> tuple[int, list[tuple[int, object,
                                                                                                  str | None]]]:
        """(the response's first line, the blocks of this line it has not given yet, with a grown text's tail).

        Handles both ways a response can be split: each line carrying only its
        new block (what 2.x writes), and lines repeating the earlier blocks
        (a block already given is skipped; a text that grew gives its new tail).
        """
        if message_id is None:  # no id: every block is fresh
            return number, [(position, block, None) for position, block in enumerate(blocks)]
        key = held_key(message_id)
        response = self.window.get(key)
        if not isinstance(response, Response):
            response = Response(number)
            if self.window.put(key, response, RESPONSE_BLOCKS):
                self.notices.append(RESPONSES_OVER.format(limit=RESPONSE_BLOCKS))
        fresh = []
        for position, block in enumerate(blocks):
            identity = block_identity(block)
            if identity in response.keys:
                continue
            response.keys.add(identity)
            fresh.append((position, block, grown_tail(response, block)))
        if fresh and self.window.grew(key, len(fresh), RESPONSE_BLOCKS):
            self.notices.append(RESPONSES_OVER.format(limit=RESPONSE_BLOCKS))
        return response.first_line, fresh


# -- the tool calls answered ------------------------------------------------------------------------------


class Answers:
    """The tool_use ids a result answered, with the tool name it gave, in a Window (``notices`` as EntryTree's).

    The calls themselves are in a ``call_budget.BoundedLedger``; this is the
    answered side, which that ledger does not hold.
    """

    def __init__(self) -> None:
        self.window = Window(_one)
        self.notices: list[str] = []

    def known(self, call_id: str) -> bool:
        """Whether a result for this id was recorded (and is still held)."""
        return held_key(call_id) in self.window.values

    def name(self, call_id: str) -> str:
        """The tool name recorded with this id's result ('' if none is held)."""
        name = self.window.get(held_key(call_id))
        return name if isinstance(name, str) else ""

    def record(self, call_id: str, tool_name: str) -> None:
        """A result for this id was seen (the last result's tool name is kept); no id, no record."""
        if not call_id:
            return
        key = held_key(call_id)
        if key in self.window.values:
            self.window.values[key] = tool_name
        elif self.window.put(key, tool_name, ANSWERED_IDS):
            self.notices.append(ANSWERS_OVER.format(limit=ANSWERED_IDS))
