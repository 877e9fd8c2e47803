"""ObjectMutationLog replay: kinds 0-3, array-index paths, truncating pushes, every bad line a row, origins."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.mutation_log import Origins, replay_lines, split_lines
from aitrail.analyzer.view.context import RawLine
from aitrail.analyzer.view.decode import MAX_NESTING
from aitrail.analyzer.view.rows import Draft


def log(*entries, tail: bytes = b"") -> bytes:
    return b"".join(json.dumps(entry).encode() + b"\n" for entry in entries) + tail


def replay(data: bytes):
    return replay_lines(split_lines(data))


BASE = {"kind": 0, "v": {"requests": [], "title": "a"}}


def test_initial_set_push_delete():
    result = replay(log(BASE,
                        {"kind": 2, "k": ["requests"], "v": [{"id": "r1", "response": []}]},
                        {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "Hel"}]},
                        {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "Hello"}], "i": 0},
                        {"kind": 2, "k": ["requests", 0, "response"], "v": [{"kind": "tool"}]},
                        {"kind": 1, "k": ["requests", "0", "state"], "v": 1},
                        {"kind": 3, "k": ["title"]},
                        {"kind": 1, "k": ["custom"], "v": "T"}))
    assert result.problems == []
    assert result.value == {"requests": [{"id": "r1", "response": [{"value": "Hello"}, {"kind": "tool"}],
                                          "state": 1}], "custom": "T"}
    assert result.lines == 8
    assert result.locator("requests", 0, "response", 0) == "line:4"
    assert result.locator("requests", 0, "response", 1) == "line:5"
    assert result.locator("requests", 0, "response") == "line:5"
    assert result.locator("requests", 0) == "line:6"
    assert result.locator("requests", 0, "id") == "line:2"
    assert result.locator("custom") == "line:8"


def test_truncate_alone_and_push_alone():
    result = replay(log({"kind": 0, "v": {"a": [1, 2, 3]}}, {"kind": 2, "k": ["a"], "i": 1},
                        {"kind": 2, "k": ["a"], "v": [9]}))
    assert result.value == {"a": [1, 9]} and result.problems == []


def test_a_set_replaces_older_origins_below_it():
    result = replay(log(BASE, {"kind": 2, "k": ["requests"], "v": [{"m": {"t": "x"}}]},
                        {"kind": 1, "k": ["requests", 0, "m", "t"], "v": "y"},
                        {"kind": 1, "k": ["requests", 0], "v": {"m": {"t": "z"}}}))
    assert result.locator("requests", 0, "m", "t") == "line:4"


def test_every_bad_line_is_a_row_and_replay_continues():
    data = log(BASE,
               {"kind": 1, "k": ["nope", "deeper"], "v": 1},
               {"kind": 2, "k": ["title"], "v": [1]},
               {"kind": 2, "k": ["requests"], "v": "not a list"},
               {"kind": 7, "k": []},
               {"kind": True, "k": ["x"], "v": 1},
               {"kind": 1, "k": "requests", "v": 1},
               {"kind": 1, "k": ["requests", 5], "v": 1},
               {"kind": 2, "k": ["requests"], "i": -1},
               [1, 2]) + b"{not json\n" + log({"kind": 1, "k": ["ok"], "v": True}, tail=b'{"kind":1,"k":["torn"')
    result = replay(data)
    assert result.value == {"requests": [], "title": "a", "ok": True}
    assert [draft.locator for draft in result.problems] == [f"line:{n}" for n in range(2, 12)] + ["line:13"]
    assert all(isinstance(draft, Draft) and draft.text.startswith("parser: unparseable line")
               for draft in result.problems)
    assert "torn last line" in result.problems[-1].text
    assert "mutation not applied" in result.problems[0].text


def test_mutations_before_any_initial_are_rows_then_a_later_initial_starts_the_object():
    result = replay(log({"kind": 1, "k": ["a"], "v": 1}, {"kind": 0, "v": {"b": 2}}, {"kind": 1, "k": ["c"], "v": 3}))
    assert result.value == {"b": 2, "c": 3}
    assert [draft.locator for draft in result.problems] == ["line:1"]
    assert "no initial entry" in result.problems[0].text
    assert result.locator("b") == "line:2"


def test_nesting_through_paths_is_bounded():
    chain: object = {}
    for _ in range(40):
        chain = {"a": chain}
    value: object = 1
    for _ in range(MAX_NESTING - 30):
        value = [value]
    result = replay(log({"kind": 0, "v": chain}, {"kind": 1, "k": ["a"] * 40 + ["x"], "v": value},
                        {"kind": 2, "k": ["a"] * 39 + ["l"], "v": [value]}, {"kind": 1, "k": ["k"] * 65, "v": 1},
                        {"kind": 1, "k": ["a"] * 40 + ["x"], "v": [[1]]}))
    assert [draft.locator for draft in result.problems] == ["line:2", "line:3", "line:4"]
    assert result.locator(*["a"] * 40, "x") == "line:5"
    assert "deeper than" in result.problems[0].text and "limit 64" in result.problems[2].text


def test_length_limit_drafts_pass_through():
    too_long = Draft("system", "parser: line too long (99 bytes)", "line:2", timestamp_source="none")
    result = replay_lines([RawLine(1, 0, json.dumps(BASE).encode(), True), too_long])
    assert result.problems == [too_long] and result.value == BASE["v"]


def test_split_lines_marks_the_unterminated_tail():
    assert [(line.number, line.terminated) for line in split_lines(b"a\nb\nc")] == [(1, True), (2, True), (3, False)]
    assert [line.number for line in split_lines(b"a\n")] == [1]


def test_origins_of_unrecorded_paths():
    origins = Origins()
    assert origins.line_of(("a",)) == 0
    origins.changed(("a",), 3)
    assert origins.line_of(("a", 0)) == 0 and origins.line_of(("a",)) == 3


def test_push_onto_a_missing_key_creates_the_array_as_upstream_does():
    result = replay(log(BASE, {"kind": 2, "k": ["pending"], "v": [1]}, {"kind": 2, "k": ["requests"], "i": 3},
                        {"kind": 2, "k": [], "v": [1]}))
    assert result.value["pending"] == [1] and result.locator("pending", 0) == "line:2"
    assert [draft.locator for draft in result.problems] == ["line:3", "line:4"]
    assert "not a length up to" in result.problems[0].text


def test_a_member_that_ends_early_keeps_what_was_replayed():
    from aitrail.analyzer.view.bundle import MemberUnreadable

    def cut():
        yield from split_lines(log(BASE, {"kind": 1, "k": ["title"], "v": "b"}))
        raise MemberUnreadable("the zstd stream ends in the middle of a frame")

    result = replay_lines(cut())
    assert result.value == {"requests": [], "title": "b"}
    assert isinstance(result.failure, MemberUnreadable) and result.problems == []
    assert replay(log(BASE)).failure is None


def test_the_replayed_object_has_a_budget_and_lines_past_it_are_counted(monkeypatch):
    """Many push lines, each under the per-text limit, cannot make the object grow without bound."""
    from aitrail.analyzer.formats import mutation_log

    monkeypatch.setattr(mutation_log, "MAX_REPLAY_COST", 250_000)
    push = json.dumps({"kind": 2, "k": ["requests"], "v": [{}] * 100}).encode()
    data = b"\n".join([json.dumps({"kind": 0, "v": {"requests": []}}).encode(), *([push] * 40)]) + b"\n"
    replay = mutation_log.replay_lines(mutation_log.split_lines(data))
    held = len(replay.value["requests"])
    assert 0 < held < 4000 and held % 100 == 0
    [row] = [problem for problem in replay.problems if "replay limit" in problem.text]
    applied = held // 100
    assert row.locator == f"line:{applied + 2}" and f"{40 - applied} lines from line {applied + 2}" in row.text
