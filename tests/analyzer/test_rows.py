"""Time parsing and formatting: exact to the nanosecond, never a guessed zone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aitrail.analyzer.rows import format_timestamp, ns_from_iso, ns_from_ms


@pytest.mark.parametrize("text, expected", [
    ("2026-07-02T09:14:05.112Z", 1_782_983_645_112_000_000),
    ("2026-07-02T09:14:05Z", 1_782_983_645_000_000_000),
    ("2026-07-02T11:14:05.112+02:00", 1_782_983_645_112_000_000),
    ("2026-07-02T09:14:05.112345678Z", 1_782_983_645_112_345_678),  # Grok's nanoseconds
    ("2026-07-02T09:14:05.112", None),  # no zone: not a time
    ("2026-07-02", None),
    ("yesterday", None),
    (1_782_983_645, None),
])
def test_ns_from_iso(text, expected):
    assert ns_from_iso(text) == expected


@given(ns=st.integers(min_value=0, max_value=4_102_444_800_000_000_000))
def test_format_then_parse_round_trips(ns):
    assert ns_from_iso(format_timestamp(ns)) == ns


def test_formatting_keeps_milliseconds_or_all_nine_digits():
    assert format_timestamp(1_782_983_645_112_000_000) == "2026-07-02T09:14:05.112Z"
    assert format_timestamp(1_782_983_645_112_345_678) == "2026-07-02T09:14:05.112345678Z"
    assert format_timestamp(None) == ""


@pytest.mark.parametrize("value, expected", [(1759400000000, 1_759_400_000_000_000_000),
                                             ("1759400000000", 1_759_400_000_000_000_000),
                                             (True, None), ("soon", None), (-5, None)])
def test_ns_from_ms(value, expected):
    assert ns_from_ms(value) == expected
