"""Unix times written as float seconds (Python's ``time.time()`` dumped to JSON), read exactly.

``rows.ns_from_seconds`` multiplies the binary float by 1e9, which turns the
written ``1752652810.482`` into ``...10.481999872``: nanoseconds nobody wrote.
A JSON number is decoded to the nearest double; its shortest ``repr`` is the
decimal the writer printed (Python's ``json.dumps`` writes ``repr(float)``), so
reading that decimal gives the time exactly as recorded, to the microsecond or
finer digits the file holds.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

LOWEST, HIGHEST = 0, 100_000_000_000  # seconds: as rows.ns_from_seconds, after 1970 and before year 5138


def ns_from_float_seconds(value: object) -> int | None:
    """Nanoseconds since the epoch from seconds as written (int, float or numeric string); None if not a time."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        seconds = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    if not seconds.is_finite() or not LOWEST < seconds < HIGHEST:
        return None
    return int(seconds * 1_000_000_000)
