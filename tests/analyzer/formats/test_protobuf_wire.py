"""The schemaless protobuf wire reader: every wire type, its bounds, and hostile bytes (formats/protobuf_wire.py)."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.formats import protobuf_wire as wire
from aitrail.analyzer.formats import trajectory_summaries as summaries
from tests.parsers.protobuf_encode import data, key, number, summary, summary_map, timestamp, varint


def test_every_wire_type_is_read_in_order():
    raw = number(1, 300) + key(2, 1) + (7).to_bytes(8, "little") + data(3, "hé") + key(4, 5) + (9).to_bytes(4, "little")
    message = wire.read_message(raw)
    assert message.stop is None
    assert [(item.number, item.wire_type) for item in message.fields] == [(1, 0), (2, 1), (3, 2), (4, 5)]
    assert message.first(1).number_value() == 300 and message.first(2).number_value() == 7
    assert message.first(3).text() == "hé" and message.first(4).number_value() == 9


def test_a_varint_over_ten_bytes_a_length_past_the_end_and_a_group_stop_with_the_fields_before_kept():
    assert wire.read_message(number(1, 5) + key(2, 0) + b"\xff" * 11).stop.describe() == (
        "field 2: varint cut short or over 10 bytes at byte 3")
    cut = wire.read_message(number(1, 5) + key(2, 2) + varint(50) + b"abc")
    assert [item.number for item in cut.fields] == [1]
    assert cut.stop.describe() == "field 2: length 50 runs past the end (3 bytes left) at byte 3"
    assert wire.read_message(key(3, 3)).stop.reason == "field 3: wire type 3 is not read (groups, or not protobuf)"
    assert wire.read_message(b"\x00").stop.reason == "field number 0"


def test_the_field_budget_stops_a_million_tiny_fields():
    budget = wire.Budget(fields=10)
    message = wire.read_message(number(1, 1) * 1000, budget)
    assert len(message.fields) == 10 and message.stop.reason == "field budget spent"


def test_the_depth_budget_stops_deep_nesting_without_recursion():
    raw = b"x"
    for _ in range(5000):
        raw = data(1, raw)
    strings = list(wire.nested_strings(wire.read_message(raw), wire.Budget(depth=8)))
    assert len(strings) <= 9  # at most one text per level reached; no RecursionError


def test_a_timestamp_is_seconds_and_nanos_and_nothing_else_is_one():
    assert wire.timestamp_ns(wire.read_message(timestamp(1787040000, 5))) == 1787040000_000_000_005
    assert wire.timestamp_ns(wire.read_message(timestamp(1787040000) + data(3, "x"))) is None
    assert wire.timestamp_ns(wire.read_message(number(1, 0))) is None  # the default: no time set
    assert wire.timestamp_ns(wire.read_message(number(1, 253_402_300_800))) is None  # past year 9999
    assert wire.timestamp_ns(wire.read_message(number(1, 1) + number(2, 10**9))) is None  # nanos out of range


def test_a_wrapped_map_is_unwrapped_and_an_unwrapped_one_read_as_is():
    body = summary("Title", 3, 1787040000, 1787040100, "file:///srv/app", "MODEL_X_1")
    for wrapped in (True, False):
        found = summaries.read_map(summary_map([("id-1", body)], wrapped), wrapped)
        (item,) = found.summaries
        assert (item.conversation_id, item.title, item.steps, item.workspace_uri, item.model) == (
            "id-1", "Title", 3, "file:///srv/app", "MODEL_X_1")
        assert (item.first_ns, item.last_ns) == (1787040000 * 10**9, 1787040100_500_000_000)


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=600))
def test_hostile_bytes_never_raise(raw):
    message = wire.read_message(raw, wire.Budget(fields=500, depth=6))
    list(wire.nested_strings(message, wire.Budget(fields=500, depth=6)))
    for wrapped in (True, False):
        summaries.read_map(base64.b64encode(raw).decode(), wrapped)
