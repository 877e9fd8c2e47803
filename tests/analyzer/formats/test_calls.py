"""The call ledger, on drafts written in the test."""

from __future__ import annotations

from aitrail.analyzer.formats.calls import ROW_COLUMNS, CallLedger, no_result_row
from aitrail.analyzer.view.rows import Draft


def call(call_id: str, tool: str = "shell", **columns) -> Draft:
    return Draft("tool_use", "{}", f"line:{call_id or 0}", tool_name=tool, tool_use_id=call_id, **columns)


def test_an_unanswered_call_gets_one_row_with_its_columns():
    ledger = CallLedger()
    ledger.called(call("c1", timestamp_ns=5, session_id="s", project_path="/p", git_branch="main", model="m"))
    (row,) = ledger.orphans()
    assert row.text == "parser: no result recorded for tool call c1 (shell)"
    assert (row.turn_type, row.locator, row.tool_use_id, row.tool_name) == ("system", "line:c1", "c1", "shell")
    columns = (row.timestamp_ns, row.session_id, row.project_path, row.git_branch, row.model)
    assert columns == (5, "s", "/p", "main", "m")
    assert list(ledger.orphans()) == []


def test_fewer_columns_leave_the_others_empty():
    ledger = CallLedger(columns=[name for name in ROW_COLUMNS if name != "model"])
    ledger.called(call("c1", model="m", git_branch="b"))
    (row,) = ledger.orphans()
    assert (row.model, row.git_branch) == ("", "b")


def test_a_taken_call_is_no_orphan_and_its_name_is_remembered():
    ledger = CallLedger()
    ledger.called(call("c1", "read"))
    assert ledger.take("c1").tool_name == "read"
    assert ledger.take("c1") is None and ledger.take("") is None
    assert ledger.was_called("c1") and ledger.called_name("c1") == "read"
    assert not ledger.was_called("c2")
    assert list(ledger.orphans()) == []


def test_a_call_without_an_id_is_not_recorded():
    ledger = CallLedger()
    ledger.called(call(""))
    assert ledger.open == {} and list(ledger.orphans()) == []


def test_answered_ids_are_kept_apart_and_can_be_skipped():
    ledger = CallLedger()
    ledger.answered("c1", "grep")
    assert ledger.is_answered("c1") and ledger.answered_name("c1") == "grep"
    ledger.answered("")
    assert not ledger.is_answered("")
    ledger.called(call("c1"))
    assert list(ledger.orphans(skip_answered=True)) == []
    ledger.called(call("c1"))
    assert len(list(ledger.orphans())) == 1


def test_position_joins_take_by_tool_name_or_the_oldest_or_the_newest():
    ledger = CallLedger()
    for key, tool in (("0", "read"), ("0.2", "write"), ("0.3", "read")):
        ledger.called(call(key, tool))
    assert ledger.take_named("write").tool_use_id == "0.2"
    assert ledger.take_named("list").tool_use_id == "0"
    assert ledger.take_last().tool_use_id == "0.3"
    assert ledger.take_named("read") is None and ledger.take_last() is None


def test_a_key_other_than_the_id_keeps_calls_that_share_an_id():
    ledger = CallLedger()
    ledger.called(call("1759400100000"), key="json:/1")
    ledger.called(call("1759400100000"), key="json:/2")
    assert [row.tool_use_id for row in ledger.orphans()] == ["1759400100000", "1759400100000"]


def test_forget_drops_open_calls_without_rows():
    ledger = CallLedger()
    ledger.called(call("c1"))
    ledger.forget()
    assert list(ledger.orphans()) == []


def test_no_result_row_alone():
    row = no_result_row(call("x", "t", timestamp_ns=1, timestamp_source="index"), ("timestamp_ns",))
    assert (row.timestamp_ns, row.timestamp_source) == (1, "record")


def test_open_calls_past_the_text_budget_keep_their_rows_but_not_their_text(monkeypatch):
    """A million unanswered calls with large arguments no longer hold every argument (OPEN_TEXT_BUDGET)."""
    from aitrail.analyzer.formats import calls

    monkeypatch.setattr(calls, "OPEN_TEXT_BUDGET", 10_000)
    ledger = calls.CallLedger()
    for number in range(100):
        ledger.called(Draft("tool_use", "x" * 1000, f"line:{number}", tool_name="Bash", tool_use_id=f"c{number}"))
    assert ledger._held <= 10_000
    assert sum(len(call.text) for call in ledger.open.values()) == ledger._held
    assert ledger.take("c0").text == "" and ledger.take("c99").text == "x" * 1000
    rows = list(ledger.orphans())
    assert [row.tool_use_id for row in rows] == [f"c{number}" for number in range(1, 99)]
    assert all(row.text.startswith("parser: no result recorded") for row in rows) and ledger._held == 0


def test_take_named_takes_the_oldest_open_call_of_the_tool_then_the_oldest_of_any():
    from aitrail.analyzer.formats import calls

    ledger = calls.CallLedger()
    for number in range(50_000):
        ledger.called(Draft("tool_use", "", f"line:{number}", tool_name="Read", tool_use_id=f"r{number}"))
    ledger.called(Draft("tool_use", "", "line:x", tool_name="Bash", tool_use_id="b0"))
    taken = [ledger.take_named("Bash")] + [ledger.take_named("Bash") for _ in range(3)]  # then the oldest of any
    assert [call.tool_use_id for call in taken] == ["b0", "r0", "r1", "r2"]
    assert ledger.take_named("Read").tool_use_id == "r3" and ledger.take_last().tool_use_id == "r49999"
