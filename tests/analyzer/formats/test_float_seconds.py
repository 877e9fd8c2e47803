"""Float seconds (time.time() in JSON) are read as the decimal written, not as the binary float's expansion."""

from __future__ import annotations

from aitrail.analyzer.formats.float_seconds import ns_from_float_seconds
from aitrail.analyzer.view.rows import format_timestamp


def test_the_written_decimal_is_the_time():
    assert ns_from_float_seconds(1752652810.482) == 1_752_652_810_482_000_000
    assert format_timestamp(ns_from_float_seconds(1752652810.482)) == "2025-07-16T08:00:10.482Z"


def test_microseconds_of_time_time_are_kept():
    assert format_timestamp(ns_from_float_seconds(1777811149.330016)) == "2026-05-03T12:25:49.330016000Z"


def test_integers_and_numeric_strings_are_seconds():
    assert ns_from_float_seconds(1700000000) == 1_700_000_000_000_000_000
    assert ns_from_float_seconds(" 1700000000.5 ") == 1_700_000_000_500_000_000


def test_what_is_not_a_time_is_none():
    for value in (None, True, "soon", float("nan"), float("inf"), -5.0, 0, 1e12, [], {}, "1e400"):
        assert ns_from_float_seconds(value) is None, value
