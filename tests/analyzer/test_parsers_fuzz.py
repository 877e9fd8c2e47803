"""Property tests: no parser raises on any input, and every input is accounted for.

Every parser is fed random bytes, truncated copies of its fixture files and
valid JSON of the wrong types. The parser is called directly (not through
dispatch, which would hide a crash as a row), so an exception fails the test.
Targets come from tests/parsers/fuzz_targets_<agent>.py.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.analyzer.view.rows import TURN_TYPES, Draft
from tests.analyzer.fakes import REGISTRY, FakeBundle, drafts
from tests.analyzer.fuzz import FuzzTarget, all_targets
from tests.conftest import FIXTURES

TARGETS = all_targets()
JSONL_TARGETS = [target for target in TARGETS if target.jsonl]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def feed(target: FuzzTarget, data: bytes) -> list[Draft]:
    files = dict(target.context)
    files[(target.store, target.path)] = data
    return drafts(FakeBundle(files), target.path, target.parser_id)


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def check(rows: list[Draft]) -> None:
    for row in rows:
        assert isinstance(row, Draft) and row.turn_type in TURN_TYPES
        assert isinstance(row.text, str) and row.locator


def test_every_registered_parser_is_fuzzed():
    assert {target.parser_id for target in TARGETS} == set(REGISTRY)


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.name)
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes_never_raise(target, data):
    rows = feed(target, data)
    check(rows)
    if data.strip() and not _is_json(data):
        assert rows, "input that is not a well-formed (if empty) document must give a parser: row"


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.name)
@FUZZ
@given(value=json_values)
def test_wrong_json_types_never_raise(target, value):
    data = json.dumps(value).encode()
    if target.jsonl:
        data = b"\n".join([data, json.dumps([value]).encode(), json.dumps({"x": value}).encode()])
    check(feed(target, data))


@pytest.mark.parametrize("target", JSONL_TARGETS, ids=lambda target: target.name)
@FUZZ
@given(lines=st.lists(st.one_of(st.binary(max_size=60), json_values.map(lambda v: json.dumps(v).encode())), max_size=8))
def test_every_nonblank_jsonl_line_is_accounted_for(target, lines):
    lines = [line.replace(b"\n", b" ") for line in lines]
    rows = feed(target, b"\n".join(lines) + b"\n")
    cited = {row.locator.split("/", 1)[0] for row in rows}
    for number, line in enumerate(lines, 1):
        if line.strip():
            assert f"line:{number}" in cited, (line, [row.text for row in rows])


def fixture_cases() -> list[tuple[FuzzTarget, bytes]]:
    """For each target, the first fixture file with the same name (valid input to cut short)."""
    found = []
    for target in TARGETS:
        agent = target.parser_id.split(".", 1)[0].replace("_", "-")
        name = target.path.rsplit("/", 1)[-1]
        pattern = name if not name.startswith(("rollout-", "session-")) else name.split("-", 1)[0] + "-*"
        for candidate in sorted(path for path in (FIXTURES / agent).glob(f"*/home/**/{pattern}") if path.is_file()):
            data = candidate.read_bytes()
            if data and (not name.endswith((".vscdb", ".sqlite", ".db")) or data[:6] == b"SQLite"):
                found.append((target, data))
                break
    return found


@pytest.mark.parametrize("target, data", fixture_cases(), ids=lambda value: getattr(value, "name", "data"))
@FUZZ
@given(cut=st.floats(min_value=0, max_value=1))
def test_truncated_files_never_raise(target, data, cut):
    check(feed(target, data[: int(len(data) * cut)]))


def test_dispatch_turns_a_crash_into_a_row_and_keeps_earlier_rows():
    from aitrail.analyzer.engine.dispatch import parse_source

    def crashing(ctx):
        yield Draft("user", "before the crash", "line:1")
        raise RuntimeError("boom")

    bundle = FakeBundle({("pearai.chat_sessions", "x.json"): b"{}"})
    rows = [row for _, row in parse_source(bundle, bundle.source("x.json"), crashing, {})]
    assert rows[0][8] == "before the crash"
    assert rows[1][8].startswith("parser: crashed on this file after 1 rows (RuntimeError: boom)")
    assert rows[1][11] == "data/home/x.json"
