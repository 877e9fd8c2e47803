"""The call ledger: tool calls seen, the ones answered, and one row for each call never answered.

Every agent that records tool calls keeps the same book: a ``tool_use`` draft is
*called*, its result *takes* it (by id where the format has one, by position
where it has none), and whatever is still open when the transcript ends gets the
single ``parser: no result recorded for tool call <id> (<tool>)`` row of
docs/contributing/adding-an-agent.md, at the call's own locator and time.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Iterator

from aitrail.analyzer.view.rows import Draft

# Text of the open calls a ledger holds (the Draft of every call not answered yet). Past it the
# oldest open calls are kept without their text (their "no result recorded" row needs none): a
# file of a million calls, never answered, with large arguments, held them all.
OPEN_TEXT_BUDGET = 64 * 1024 * 1024

# the call's columns the "no result recorded" row repeats (so it sorts and filters with its call)
ROW_COLUMNS = ("timestamp_ns", "timestamp_source", "session_id", "project_path", "git_branch", "model")


def no_result_row(call: Draft, columns: Iterable[str] = ROW_COLUMNS) -> Draft:
    """The ``parser: no result recorded ...`` row for ``call``, carrying the call's ``columns``.

    Args:
        call: the ``tool_use`` draft that was never answered.
        columns: which of the call's columns (ROW_COLUMNS) the row repeats; tool name
            and tool_use_id always.
    """
    copied = {name: getattr(call, name) for name in columns}
    return Draft("system", f"parser: no result recorded for tool call {call.tool_use_id} ({call.tool_name})",
                 call.locator, tool_name=call.tool_name, tool_use_id=call.tool_use_id, **copied)


class CallLedger:
    """Open tool calls by join key, the ids already answered, and the rows for the calls left open.

    Args:
        columns: the call columns the orphan row repeats (default ROW_COLUMNS); an agent
            whose calls carry a column its orphan rows have never shown passes fewer.
        results_recorded: False for a store format that never records tool results: a
            call left open there is the format, not damage, and gets no row.
    """

    def __init__(self, columns: Iterable[str] = ROW_COLUMNS, results_recorded: bool = True) -> None:
        self.columns = tuple(columns)
        self.results_recorded = results_recorded
        self.open: dict[str, Draft] = {}
        self._by_name: dict[str, dict[str, None]] = {}  # tool name -> its open keys, oldest first
        self._held = 0  # characters of text the open calls hold
        self._with_text: deque[str] = deque()  # keys of open calls that still hold their text, oldest first
        self._called: dict[str, str] = {}  # every id called -> its tool name
        self._answered: dict[str, str] = {}  # every id answered -> the tool name its result gave

    def called(self, call: Draft, key: str | None = None) -> None:
        """Record a call as open, joined by ``key`` (default: its tool_use_id; no key, no record)."""
        key = call.tool_use_id if key is None else key
        if key:
            replaced = self.open.get(key)
            if replaced is not None:  # a call with a key already open replaces it, in its place
                self._held -= len(replaced.text)
                self._by_name.get(replaced.tool_name, {}).pop(key, None)
            self.open[key] = call
            self._by_name.setdefault(call.tool_name, {})[key] = None
            self._called[key] = call.tool_name
            if call.text:
                self._held += len(call.text)
                self._with_text.append(key)
                if self._held > OPEN_TEXT_BUDGET:
                    self._drop_oldest_texts()

    def _drop_oldest_texts(self) -> None:
        """Keep the oldest open calls without their text until the open calls hold half the budget."""
        while self._held > OPEN_TEXT_BUDGET // 2 and self._with_text:
            key = self._with_text.popleft()
            call = self.open.get(key)
            if call is not None and call.text:
                self._held -= len(call.text)
                self.open[key] = dataclasses.replace(call, text="")

    def take(self, key: str) -> Draft | None:
        """The open call with this key, no longer open; None if there is none."""
        call = self.open.pop(key, None) if key else None
        if call is not None:
            self._held -= len(call.text)
            names = self._by_name.get(call.tool_name)
            if names is not None:
                names.pop(key, None)
        return call

    def take_named(self, tool_name: str) -> Draft | None:
        """The first open call of this tool, else the first open call (formats without call ids); O(1)."""
        names = self._by_name.get(tool_name)
        if names:
            return self.take(next(iter(names)))
        return self.take(next(iter(self.open))) if self.open else None

    def take_last(self) -> Draft | None:
        """The most recent open call (a result that answers whatever was asked last)."""
        return self.take(next(reversed(self.open))) if self.open else None

    def was_called(self, call_id: str) -> bool:
        """Whether a call with this id was recorded, answered or not."""
        return call_id in self._called

    def called_name(self, call_id: str) -> str:
        """The tool name of the call recorded with this id ('' if none)."""
        return self._called.get(call_id, "")

    def answered(self, call_id: str, tool_name: str = "") -> None:
        """Record that a result for this id was seen (whether or not its call was)."""
        if call_id:
            self._answered[call_id] = tool_name

    def is_answered(self, call_id: str) -> bool:
        """Whether a result for this id was recorded."""
        return call_id in self._answered

    def answered_name(self, call_id: str) -> str:
        """The tool name recorded with this id's result ('' if none)."""
        return self._answered.get(call_id, "")

    def forget(self) -> None:
        """Drop the open calls without a row (a format whose next turn closes them)."""
        self._clear_open()

    def _clear_open(self) -> None:
        self.open.clear()
        self._by_name.clear()
        self._with_text.clear()
        self._held = 0

    def orphans(self, skip_answered: bool = False) -> Iterator[Draft]:
        """A ``no result recorded`` row per open call, then none is open.

        Args:
            skip_answered: leave out calls whose id was answered elsewhere (a format
                that records the same call in two places keeps the copy open).

        None at all when the format records no results (``results_recorded`` False).
        """
        for key, call in self.open.items():
            if self.results_recorded and not (skip_answered and self.is_answered(key)):
                yield no_result_row(call, self.columns)
        self._clear_open()
