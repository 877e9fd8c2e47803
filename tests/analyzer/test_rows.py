"""Time parsing and formatting: exact to the nanosecond, never a guessed zone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aitrail.analyzer.view import rows
from aitrail.analyzer.view.rows import format_timestamp, ns_from_iso, ns_from_ms


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


def test_the_common_iso_shape_reads_as_every_other_shape_does():
    """ns_from_iso's shortcut for 'YYYY-MM-DDTHH:MM:SS.mmmZ' gives what the general reading gives, damaged or not."""
    import random

    rng = random.Random(3)
    for _ in range(50_000):
        text = list("2026-07-02T09:14:05.201Z")
        for _ in range(rng.randint(0, 3)):
            text[rng.randrange(24)] = rng.choice("0123456789-T:.Z +\u0662x")
        text = "".join(text)
        assert rows.ns_from_iso(text) == rows._ns_from_iso_any(text), text
    assert rows.ns_from_iso("2026-07-02T09:14:05.201Z") == 1782983645201000000
    assert rows.ns_from_iso("2026-07-02T24:00:00.000Z") is None


def _formatted_afresh(ns: int) -> str:
    rows._LAST_ISO[:] = (None, "")
    return format_timestamp(ns)


def test_a_time_read_is_formatted_as_it_was_written_only_when_that_is_its_format():
    """The text ns_from_iso keeps for format_timestamp is the text format_timestamp would write."""
    import random

    rng = random.Random(7)
    kept = 0
    for _ in range(50_000):
        text = list("2026-07-02T09:14:05.201Z")
        for _ in range(rng.randint(0, 3)):
            text[rng.randrange(24)] = rng.choice("0123456789-T:.Z +W\u0662x")
        text = "".join(text)
        rows._LAST_ISO[:] = (None, "")
        ns = ns_from_iso(text)
        if rows._LAST_ISO[0] is not None:
            kept += 1
            assert rows._LAST_ISO == [ns, text] and _formatted_afresh(ns) == text, text
    assert kept > 10_000
    for week_date in ("2026-W27-4T09:14:05.201Z", "2026-183T09:14:05.2010Z"):
        ns = ns_from_iso(week_date)
        assert ns is None or format_timestamp(ns) == _formatted_afresh(ns) != week_date


@given(st.integers(min_value=-2**62, max_value=2**62), st.integers(min_value=-2**62, max_value=2**62))
def test_a_kept_text_is_given_for_its_own_time_only(read, other):
    text = _formatted_afresh(read - read % 1_000_000)
    ns = ns_from_iso(text)
    if ns is not None:  # years 1-9999 only
        assert format_timestamp(ns) == text
        assert format_timestamp(other) == _formatted_afresh(other)


@given(st.lists(st.tuples(st.none() | st.integers(min_value=-2**62, max_value=2**62), st.text(max_size=5),
                          st.sampled_from(rows.TURN_TYPES), st.none() | st.sampled_from(rows.ORIGINS)),
                max_size=12))
def test_a_files_stamper_stamps_each_column_by_its_definition(drafts):
    """One Stamper over a file's drafts gives each column by its own definition.

    Shared parts are rendered once and the last time's text and key head kept;
    the key is still sort_key's, the time format_timestamp's, the id event_id's.
    """
    provenance = rows.Provenance("codex", "codex.rollouts", "data/home/.codex/s/r.jsonl", "ab" * 32, "primary")
    stamper = rows.Stamper(provenance)
    for ordinal, (ns, text, turn, origin) in enumerate(drafts):
        locator = f"line:{ordinal}"
        draft = rows.Draft(turn, text, locator, timestamp_ns=ns, origin=origin, session_id=text)
        key, row = stamper.stamp(draft, ordinal)
        assert key == rows.sort_key(ns, provenance.agent, provenance.source, ordinal)
        assert row == (format_timestamp(ns), text, "", "", turn, "", "", "", text, "codex", "codex.rollouts",
                       provenance.source, "ab" * 32, locator, "record" if ns is not None else "none",
                       origin or "primary", rows.event_id("ab" * 32, locator, turn, ordinal))


# -- times of every year a parser accepts (0001-9999) ----------------------------------------------

ANY_YEAR_NS = st.integers(min_value=rows.MIN_NS, max_value=rows.MAX_NS)


@given(st.lists(ANY_YEAR_NS, min_size=2, max_size=8))
def test_sort_keys_order_every_accepted_time_and_give_it_back(times):
    keys = [rows.sort_key(ns, "a", "s", 0) for ns in times]
    assert [rows.key_time(key) for key in keys] == times
    assert sorted(keys) == [rows.sort_key(ns, "a", "s", 0) for ns in sorted(times)]
    assert all(key < rows.sort_key(None, "a", "s", 0) for key in keys)  # untimed rows last


@given(ANY_YEAR_NS)
def test_every_accepted_time_is_formatted_and_read_back(ns):
    text = format_timestamp(ns)
    assert len(text.split("-", 1)[0]) == 4 and ns_from_iso(text) == ns


@pytest.mark.parametrize("text", ["2300-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z"])
def test_a_time_past_2262_or_before_1677_is_stamped(text):
    ns = ns_from_iso(text)
    key, row = rows.stamp(rows.Draft("user", "x", "line:1", timestamp_ns=ns),
                          rows.Provenance("a", "a.s", "data/h/f", "0" * 64, "primary"), 0)
    assert row[0].startswith(text[:19]) and rows.key_time(key) == ns and row[14] == "record"


@pytest.mark.parametrize("ns", [rows.MAX_NS + 1, rows.MIN_NS - 1, 10**30, -(10**30)])
def test_a_time_no_year_can_say_makes_the_row_untimed_never_a_crash(ns):
    key, row = rows.stamp(rows.Draft("user", "x", "line:1", timestamp_ns=ns),
                          rows.Provenance("a", "a.s", "data/h/f", "0" * 64, "primary"), 0)
    assert row[0] == "" and row[14] == "none" and rows.key_time(key) is None
