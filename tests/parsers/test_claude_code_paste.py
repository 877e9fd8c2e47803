"""Claude Code paste cache (docs/agents/claude-code.md): each paste file a row, dated by the prompt that named it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analyzer.fakes import FakeBundle, drafts

HISTORY = ".claude/history.jsonl"
PASTE = ".claude/paste-cache/ab12cd34.txt"


def history(*records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def prompt(number: int, content_hash: str, ms: int, session: str = "s-1") -> dict:
    return {"display": f"look [Pasted text #{number} +3 lines]", "timestamp": ms, "project": "/home/dev/app",
            "sessionId": session,
            "pastedContents": {str(number): {"id": number, "type": "text", "contentHash": content_hash}}}


def paste_rows(files: dict):
    return drafts(FakeBundle(files), PASTE, "claude_code.paste_cache.v1")


def test_a_paste_named_by_a_prompt_takes_its_time_session_and_project():
    rows = paste_rows({
        ("claude-code.history", HISTORY): history({"display": "x", "timestamp": 1},
                                                 prompt(2, "ab12cd34", 1783249320000),
                                                 prompt(1, "ab12cd34", 1783249999000, "s-2")),
        ("claude-code.paste_cache", PASTE): b"line one\nline two\n",
    })
    assert len(rows) == 1
    row = rows[0]
    assert row.turn_type == "user" and row.locator == "file"
    assert row.text == "pasted text (#2 of history.jsonl line 2, and 1 later prompt(s)): line one\nline two\n"
    assert (row.timestamp_ns, row.timestamp_source) == (1783249320000 * 1_000_000, "index")
    assert (row.session_id, row.project_path) == ("s-1", "/home/dev/app")


def test_a_paste_no_prompt_names_is_dated_by_its_file_and_says_so():
    rows = paste_rows({
        ("claude-code.history", HISTORY): history(prompt(1, "other", 1783249320000), {"x": 1}),
        ("claude-code.paste_cache", PASTE): b"orphan text",
    })
    assert [row.text for row in rows] == ["pasted text (no prompt in history.jsonl names it): orphan text"]
    assert rows[0].timestamp_source in ("file-mtime", "none") and rows[0].session_id == ""


def test_a_damaged_or_missing_history_leaves_the_paste_row_whole():
    for files in ({("claude-code.history", HISTORY): b'{"pastedContents": {"1": {"contentHash": "ab12cd34"\n\xff\n'},
                  {}):
        rows = paste_rows({**files, ("claude-code.paste_cache", PASTE): b"text \xff here"})
        assert len(rows) == 1 and rows[0].text.startswith("pasted text (no prompt in history.jsonl names it): text ")


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400) | st.lists(st.dictionaries(
    st.sampled_from(["display", "timestamp", "sessionId", "project", "pastedContents"]),
    st.none() | st.integers() | st.text(max_size=8) | st.dictionaries(
        st.text(max_size=3), st.none() | st.dictionaries(st.sampled_from(["contentHash", "id"]),
                                                         st.sampled_from(["ab12cd34", 7, None]))), max_size=5),
    max_size=4).map(lambda records: history(*records)))
def test_any_history_never_stops_the_paste_row(data: bytes):
    rows = paste_rows({("claude-code.history", HISTORY): data, ("claude-code.paste_cache", PASTE): b"x"})
    assert len(rows) == 1 and rows[0].text.startswith("pasted text (") and rows[0].text.endswith("): x")
