"""What the global state.vscdb's walk holds while it reads cursorDiskKV, each within a budget.

* ``KnownComposers``: the ids that have a ``composerData:`` row, for the pass that
  finds bubbles without a composer and for the headers without composerData. Held
  within KNOWN_BUDGET; past it an id not held is looked up by key through the
  index, so the rows are the same, only slower.
* the ids among them that hold a ``:`` (a bubble key ``bubbleId:a:b:c`` then
  reads two ways), as a trie of their ``:``-separated parts, so a key is tested
  in one walk of its own parts; it was a ``startswith`` over every such id, for
  every bubble key (100,000 such ids and as many bubbles: 10^10 comparisons).
  Real ids are UUIDs and hold none; past COLON_BUDGET one ``parser:`` row.
* ``ComposerBubbles``: one composer's ``bubbleId:`` keys in key order, their
  values within the caller's held-bytes budget, the keys within KEYS_BUDGET;
  the keys after those are read again, in order, when they are rendered, so a
  composer of ten million bubbles holds its first keys only and gives the same rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, KeyRow
from aitrail.analyzer.view.rows import Draft, over_limit

COMPOSER_PREFIX = "composerData:"
# composer ids held, each costing its characters plus ID_COST (its string and set slot): 32 MiB holds
# 250,000 UUIDs, where a heavy user has thousands of composers
KNOWN_BUDGET = 32 * 1024 * 1024
ID_COST = 100
# ids that hold ':' kept as a trie, each costing its characters plus PART_COST per part (a dict per part)
COLON_BUDGET = 4 * 1024 * 1024
PART_COST = 300
# keys of one composer's bubbles held, each costing its characters plus KEY_COST (its string, dict slot
# and KeyRow): 32 MiB holds about 100,000 bubbles, where a long real conversation has a few thousand
KEYS_BUDGET = 32 * 1024 * 1024
KEY_COST = 256
_END = None  # the trie's mark for "an id ends here" (never a part: parts are strings)
TAKEN = object()  # a held bubble a header already rendered


class KnownComposers:
    """The composer ids with a composerData row, held within KNOWN_BUDGET and looked up by key past it."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.ids: set[str] = set()
        self.held = 0
        self.over = False  # an id was not held: ask the database for the ids not in ``ids``
        self._trie: dict = {}  # the ids that hold ':', by their parts
        self._colon_held = 0
        self.colon_over_at = ""  # the locator of the first such id not held

    def add(self, composer: str, locator: str) -> None:
        """Record a composer read from its composerData row at ``locator``."""
        cost = len(composer) + ID_COST
        if not self.over and self.held + cost <= KNOWN_BUDGET:
            self.ids.add(composer)
            self.held += cost
        else:
            self.over = True
        if ":" in composer:
            self._add_colon(composer, locator)

    def _add_colon(self, composer: str, locator: str) -> None:
        parts = composer.split(":")
        cost = len(composer) + PART_COST * len(parts)
        if self.colon_over_at or self._colon_held + cost > COLON_BUDGET:
            self.colon_over_at = self.colon_over_at or locator
            return
        self._colon_held += cost
        node = self._trie
        for part in parts:
            node = node.setdefault(part, {})
        node[_END] = True

    def __contains__(self, composer: object) -> bool:
        if composer in self.ids:
            return True
        if not self.over or not isinstance(composer, str):
            return False
        key = COMPOSER_PREFIX + composer
        return vscode_db.row_at_key(self.connection, key, CURSOR_TABLE, keys_only=True) is not None

    def covers(self, rest: str) -> bool:
        """Whether the bubble key ``bubbleId:<rest>`` belongs to a held id holding ':' (read with that composer).

        One walk of the key's own parts: linear in the key, whatever the number of such ids.
        """
        if not self._trie:
            return False
        node = self._trie
        for part in rest.split(":")[:-1]:  # the last part is the bubble's own id
            node = node.get(part)
            if node is None:
                return False
            if _END in node:
                return True
        return False

    def colon_row(self) -> Draft | None:
        """The ``parser:`` row of ids holding ':' over COLON_BUDGET (None within it)."""
        if not self.colon_over_at:
            return None
        return over_limit("composer ids holding ':'", f"{COLON_BUDGET} bytes held, each id costing {PART_COST} more "
                          "per part", "from this composer on, the bubbles of such a composer may be shown a second "
                          "time, under the id before its first ':'", self.colon_over_at)


class ComposerBubbles:
    """One composer's bubbleId rows in key order: the first held, the rest read again in order when rendered.

    Args:
        connection: the database.
        prefix: ``bubbleId:<composer>:``.
        held_bytes: the values held at most (past it a held key has None and is fetched by key).
    """

    def __init__(self, connection: sqlite3.Connection, prefix: str, held_bytes: int) -> None:
        self.connection = connection
        self.prefix = prefix
        self.rows: dict[str, object] = {}  # key -> KeyRow, None (value not held) or TAKEN
        self.after: str | None = None  # the last key held when keys follow it that are not
        self._later: set[str] = set()  # keys past ``after`` a header rendered (at most the headers)
        values = keys = 0
        last = ""
        for row in vscode_db.scan_prefix(connection, prefix, CURSOR_TABLE):
            keys += len(row.key) + KEY_COST
            if keys > KEYS_BUDGET and self.rows:
                self.after = last  # the rest of the range is read again from here, in unlisted()
                break
            last = row.key
            size = len(row.value) if isinstance(row.value, bytes) else 0
            keep = values + size <= held_bytes
            values += size if keep else 0
            self.rows[row.key] = row if keep else None

    def take(self, key: str) -> tuple[bool, KeyRow | None]:
        """A listed bubble: (found, its row or None when it must be fetched by key); each key found once."""
        held = self.rows.get(key, TAKEN)
        if held is not TAKEN:
            self.rows[key] = TAKEN
            return True, held  # type: ignore[return-value]
        if key in self.rows or self.after is None or key in self._later:
            return False, None  # taken already, or absent from a range held whole
        row = vscode_db.row_at_key(self.connection, key, CURSOR_TABLE)
        if row is None:
            return False, None
        self._later.add(key)
        return True, row

    def unlisted(self) -> Iterator[tuple[str, KeyRow | None]]:
        """The bubbles no header took, in key order: the held ones, then the rest of the range, read again."""
        for key, held in self.rows.items():
            if held is not TAKEN:
                yield key, held  # type: ignore[misc]
        if self.after is None:
            return
        for row in vscode_db.scan_prefix(self.connection, self.prefix, CURSOR_TABLE, after=self.after):
            if row.key not in self._later:
                yield row.key, row
