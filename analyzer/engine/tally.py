"""What the summary says of the rows written: the time range and the rows of each session.

Workers tally the primary rows they render, the coordinator the secondary
rows it keeps; tallies add up (one per batch, per bundle). Memory grows with
the number of sessions, not of rows.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field

from aitrail.analyzer.view.rows import format_timestamp, key_time


@dataclass
class Tally:
    """Rows per (agent, session), and the first and last time among them."""

    sessions: Counter = field(default_factory=Counter)
    first_ns: int | None = None
    last_ns: int | None = None

    def add(self, agent: str, session_id: str, key: bytes) -> None:
        """Count one written row (its sort key holds its time)."""
        self.sessions[(agent, session_id)] += 1
        ns = key_time(key)
        if ns is not None:
            self.first_ns = ns if self.first_ns is None else min(self.first_ns, ns)
            self.last_ns = ns if self.last_ns is None else max(self.last_ns, ns)

    def cover(self, items: list[tuple[bytes, bytes]]) -> None:
        """Take the first and last time of a sorted run of (sort key, line) items (its rows counted in ``sessions``).

        Timed keys sort before untimed ones (rows.sort_key): the first item's,
        and the last before the first untimed key, are the run's extremes.
        """
        untimed = bisect.bisect_left(items, (b"\x01",))
        for index in (0, untimed - 1) if untimed else ():
            ns = key_time(items[index][0])
            if ns is not None:
                self.first_ns = ns if self.first_ns is None else min(self.first_ns, ns)
                self.last_ns = ns if self.last_ns is None else max(self.last_ns, ns)

    def merge(self, other: Tally) -> None:
        """Add another tally's rows."""
        self.sessions.update(other.sessions)
        for ns in (other.first_ns, other.last_ns):
            if ns is not None:
                self.first_ns = ns if self.first_ns is None else min(self.first_ns, ns)
                self.last_ns = ns if self.last_ns is None else max(self.last_ns, ns)

    def as_record(self) -> dict:
        """The summary's ``time_range`` and ``sessions`` (sorted by agent, then session id; '' = no session)."""
        return {
            "time_range": {"first": format_timestamp(self.first_ns), "last": format_timestamp(self.last_ns)},
            "sessions": [{"agent": agent, "session_id": session, "rows": rows}
                         for (agent, session), rows in sorted(self.sessions.items())],
        }
