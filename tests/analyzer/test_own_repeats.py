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


def test_a_session_tells_two_equal_texts_apart():
    """A deleted thread's model row is kept though a live thread of the same file names the same model."""
    drafts = [Draft("system", "model: gpt-5", "sqlite:threads:1/model", session_id="live"),
              Draft("system", "model: gpt-5", "wal:0/sqlite:threads:2/model", session_id="deleted",
                    origin="secondary"),
              Draft("system", "model: gpt-5", "wal:1/sqlite:threads:1/model", session_id="live", origin="secondary")]
    assert texts(drafts) == [("model: gpt-5", "primary"), ("model: gpt-5", "secondary")]


def test_an_earlier_versions_open_call_is_no_finding_once_the_live_rows_answer_it():
    drafts = [Draft("tool_use", '{"command":"pytest"}', "h/0", tool_use_id="t1", session_id="s"),
              Draft("tool_result", "2 failed", "h/1", tool_use_id="t1", session_id="s"),
              Draft("system", "parser: no result recorded for tool call t1 (execute_bash)", "wal:0/h/0",
                    tool_use_id="t1", session_id="s", origin="secondary"),
              Draft("system", "parser: no result recorded for tool call t9 (execute_bash)", "wal:0/h/2",
                    tool_use_id="t9", session_id="s", origin="secondary")]
    drafts += [Draft("system", "parser: no result recorded for tool call t2 (fs_read)", "wal:0/h/3", tool_use_id="t2",
                     session_id="s", origin="secondary"),
               Draft("tool_result", "server.py", "wal:1/h/4", tool_use_id="t2", session_id="s", origin="secondary")]
    kept = texts(drafts)
    assert ("parser: no result recorded for tool call t1 (execute_bash)", "secondary") not in kept
    assert ("parser: no result recorded for tool call t2 (fs_read)", "secondary") not in kept  # a later version answers
    assert ("server.py", "secondary") in kept
    assert ("parser: no result recorded for tool call t9 (execute_bash)", "secondary") in kept
