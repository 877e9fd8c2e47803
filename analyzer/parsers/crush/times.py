"""Crush's times: Unix seconds, whatever the schema comments say.

The DDL comments of ``sessions``, ``files`` and ``messages`` say "Unix timestamp
in milliseconds" (internal/db/migrations/20250424200609_initial.sql:11-12,
30-31, 52-54), but every writer stores ``strftime('%s', 'now')``, seconds
(internal/db/sql/sessions.sql:22-23, messages.sql:24,33, files.sql:35,
read_files.sql:9), and the ``finish`` part's ``time`` and the reasoning
``started_at`` are Go's ``time.Now().Unix()``, seconds too
(internal/message/content.go:313,372,497). A value below 10^11 is read as
seconds; a value from 10^11 to 10^14 (what milliseconds of these years are,
and what the comments promise) as milliseconds; 0 (a part's unset time) and
anything else is no time.
"""

from __future__ import annotations

from aitrail.analyzer.view.rows import ns_from_ms, ns_from_seconds

SECONDS_BELOW = 1e11


def crush_ns(value) -> int | None:
    """Nanoseconds from a Crush time (seconds; milliseconds past 10^11); None for 0, NULL or no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (bytes, str)):
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or value != value or value <= 0:
        return None
    return ns_from_seconds(value) if value < SECONDS_BELOW else ns_from_ms(value)
