"""A live database's secondary rows (earlier WAL commits) that repeat its own primary rows are dropped."""

from __future__ import annotations

from aitrail.analyzer.engine import own_repeats
from aitrail.analyzer.view.rows import Draft


def texts(drafts) -> list[tuple[str, str]]:
    return [(draft.text, draft.origin or "primary") for draft in own_repeats.without_own_repeats(drafts)]


def test_earlier_versions_keep_only_what_the_live_rows_no_longer_hold_whatever_the_order():
    drafts = [Draft("user", "first  turn", "wal:1/a", origin="secondary"),
              Draft("user", "a turn deleted since", "wal:1/b", origin="secondary"),
              Draft("user", "first turn", "a"),
              Draft("assistant", "first turn", "wal:2/c", origin="secondary"),  # another kind: not a repeat
              Draft("user", "second turn", "b")]
    assert texts(drafts) == [("first turn", "primary"), ("second turn", "primary"),
                             ("a turn deleted since", "secondary"), ("first turn", "secondary")]


def test_a_call_id_tells_two_equal_texts_apart():
    drafts = [Draft("system", "permission decision: denied", "a", tool_use_id="c1"),
              Draft("system", "permission decision: denied", "wal:1/a", tool_use_id="c2", origin="secondary")]
    assert len(texts(drafts)) == 2


def test_past_the_held_limit_the_rest_is_written_and_a_parser_row_says_so(monkeypatch):
    monkeypatch.setattr(own_repeats, "HELD_MAX", 2)
    drafts = [Draft("user", f"old {n}", f"wal:1/{n}", origin="secondary") for n in range(4)]
    drafts.append(Draft("user", "old 3", "live"))
    out = texts(drafts)
    assert out[0][0].startswith("parser: secondary rows held to compare with the live rows over the limit (2 rows)")
    assert out[1:] == [("old 2", "secondary"), ("old 3", "secondary"), ("old 3", "primary"), ("old 0", "secondary"),
                       ("old 1", "secondary")]  # held: 0 and 1, compared at the end; 2 and 3 written as they came
