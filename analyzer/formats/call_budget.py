"""A call ledger with a budget on the ids it holds: past it the calls of one file are counted, not held.

``CallLedger`` (formats/calls.py) keeps every id it was given for as long as the
file is read (``was_called``, ``called_name``) and the Draft of every open call
until its result: about 380 bytes an open call without its text, 170 an answered
one. A document within the size limits can still name millions of calls (a 60 MiB
text block of ``<read_file></read_file>`` is 2.6 million XML calls, and a database
has no size limit at all), so ``BoundedLedger`` holds at most MAX_CALL_IDS
distinct ids. A call past the limit is still written as its row; it is only not
held: a result that answers it reads as having no call before it, and no row says
it was never answered. A result is never given to another call instead: a format
that answers the newest open call (``take_last``), or the first open call of a
tool (``take_named``), gets none while a call not held may be the one it answers.
One ``parser:`` row (``over_limit_rows``) names the limit and counts those calls.

It wraps a CallLedger rather than subclassing it: calls.py is compiled by mypyc
(ADR 0006), and an interpreted class cannot inherit from a compiled one.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.view.rows import Draft, over_limit

# Distinct call ids one ledger holds (one file, or one OpenCode session). Real transcripts
# hold hundreds of calls, the longest a few tens of thousands; at the limit the ledger
# holds about 50 MB with no call answered (plus the open calls' text, OPEN_TEXT_BUDGET).
MAX_CALL_IDS = 131_072


class BoundedLedger:
    """A CallLedger that holds at most MAX_CALL_IDS call ids; the calls past it are counted.

    Args:
        ledger: the ledger to hold the calls in (default: a new CallLedger).
    """

    def __init__(self, ledger: CallLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else CallLedger()
        self.held = 0  # distinct ids given to the ledger
        self.first_over: Draft | None = None  # the first call not held
        self.not_held = 0
        self._unheld_open = 0  # calls not held since the open calls were last closed
        self._open_names: dict[str, int] = {}  # tool name -> open calls held (would take_named fall back?)
        self._reported = False

    @property
    def open(self) -> dict[str, Draft]:
        """The open calls held, by key."""
        return self.ledger.open

    @property
    def open_count(self) -> int:
        """How many calls were made since the open calls were last closed, those not held included.

        A format that numbers the calls of a message by it (Cline's XML ids) numbers them
        the same past the limit.
        """
        return len(self.ledger.open) + self._unheld_open

    def called(self, call: Draft, key: str | None = None) -> None:
        """As CallLedger.called, except that a new id past MAX_CALL_IDS is counted and not held."""
        key = call.tool_use_id if key is None else key
        if key and not self.ledger.was_called(key):
            if self.held >= MAX_CALL_IDS:
                self.first_over = self.first_over or call
                self.not_held += 1
                self._unheld_open += 1
                return
            self.held += 1
        if not key:
            return  # the ledger records no call without a key
        replaced = self.ledger.open.get(key)
        if replaced is not None:
            self._count(replaced.tool_name, -1)
        self.ledger.called(call, key)
        self._count(call.tool_name, 1)

    def _count(self, tool_name: str, change: int) -> None:
        left = self._open_names.get(tool_name, 0) + change
        if left > 0:
            self._open_names[tool_name] = left
        else:
            self._open_names.pop(tool_name, None)

    def _taken(self, call: Draft | None) -> Draft | None:
        if call is not None:
            self._count(call.tool_name, -1)
        return call

    def take(self, key: str) -> Draft | None:
        """The open call with this key, no longer open; None if there is none (or it was not held)."""
        return self._taken(self.ledger.take(key))

    def take_named(self, tool_name: str) -> Draft | None:
        """The first open call of this tool, else the first open call (formats without call ids).

        While calls not held are open, a tool with no open call held gets none: the call it
        answers may be one of those (the ones held are older, so a held one of the tool is first).
        """
        if self._unheld_open and tool_name not in self._open_names:
            self._unheld_open -= 1
            return None
        return self._taken(self.ledger.take_named(tool_name))

    def take_last(self) -> Draft | None:
        """The most recent open call; none while the most recent calls were not held (they are newer)."""
        if self._unheld_open:
            self._unheld_open -= 1
            return None
        return self._taken(self.ledger.take_last())

    def was_called(self, call_id: str) -> bool:
        """Whether a call with this id was held, answered or not."""
        return self.ledger.was_called(call_id)

    def called_name(self, call_id: str) -> str:
        """The tool name of the call held with this id ('' if none)."""
        return self.ledger.called_name(call_id)

    def orphans(self, skip_answered: bool = False) -> Iterator[Draft]:
        """A ``no result recorded`` row per open call held, then none is open."""
        self._unheld_open = 0
        self._open_names.clear()
        yield from self.ledger.orphans(skip_answered)

    def over_limit_rows(self) -> Iterator[Draft]:
        """The one ``parser:`` row of a ledger that reached its limit (at the first call not held), once."""
        if self.first_over is None or self._reported:
            return
        self._reported = True
        call = self.first_over
        yield over_limit("tool calls", f"{MAX_CALL_IDS} call ids held to pair calls with results", "the calls from "
                         f"here on were written without being held ({self.not_held} in all): a result of one reads "
                         "as having no call before it, and one never answered has no row saying so", call.locator,
                         session_id=call.session_id, project_path=call.project_path)
