"""Property tests: no parser raises on any input, and every input is accounted for.

Each parser is fed random bytes, truncated copies of valid files and valid JSON
of the wrong types. The parser is called directly (not through dispatch, which
would hide a crash as a row), so an exception fails the test.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.analyzer.rows import TURN_TYPES, Draft
from tests.analyzer.fakes import REGISTRY, FakeBundle, drafts
from tests.conftest import FIXTURES

TASK = ".config/PearAI/User/globalStorage/pearai.pearai-roo-cline/tasks/1759400100000/"
LOG = ".config/PearAI/logs/20251002T101500/window1/exthost/output_logging_20251002T101502/2-PearAI.log"
# (parser id, store, path of the file under test)
TARGETS = [
    ("pearai.chat_session.v1", "pearai.chat_sessions", ".pearai/sessions/s1.json"),
    ("pearai.session_index.v1", "pearai.session_index", ".pearai/sessions/sessions.json"),
    ("pearai.agent_task.v1", "pearai.agent_tasks", TASK + "api_conversation_history.json"),
    ("pearai.agent_task.v1", "pearai.agent_tasks", TASK + "ui_messages.json"),
    ("pearai.output_log.v1", "pearai.output_logs", LOG),
    ("pearai.dev_data_chat.v1", "pearai.dev_data_chat", ".pearai/dev_data/chat.jsonl"),
    ("pearai.tokens_generated.v1", "pearai.tokens_generated", ".pearai/dev_data/tokens_generated.jsonl"),
    ("pearai.global_state.v1", "pearai.global_state", ".config/PearAI/User/globalStorage/state.vscdb"),
]
JSONL = {"pearai.dev_data_chat.v1", "pearai.tokens_generated.v1"}
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def feed(parser_id: str, store: str, path: str, data: bytes) -> list[Draft]:
    index = ".pearai/sessions/sessions.json"
    files = {(store, path): data}
    if path != index:
        files[("pearai.session_index", index)] = b'[{"sessionId":"s1","dateCreated":"1759400000000"}]'
    return drafts(FakeBundle(files), path, parser_id)


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
    assert {parser_id for parser_id, _, _ in TARGETS} == set(REGISTRY)


@pytest.mark.parametrize("parser_id, store, path", TARGETS, ids=lambda value: str(value).rsplit("/", 1)[-1])
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes_never_raise(parser_id, store, path, data):
    rows = feed(parser_id, store, path, data)
    check(rows)
    if data.strip() and not _is_json(data):
        assert rows, "input that is not a well-formed (if empty) document must give a parser: row"


@pytest.mark.parametrize("parser_id, store, path", TARGETS, ids=lambda value: str(value).rsplit("/", 1)[-1])
@FUZZ
@given(value=json_values)
def test_wrong_json_types_never_raise(parser_id, store, path, value):
    data = json.dumps(value).encode()
    if parser_id in JSONL:
        data = b"\n".join([data, json.dumps([value]).encode(), json.dumps({"x": value}).encode()])
    check(feed(parser_id, store, path, data))


@pytest.mark.parametrize("parser_id", sorted(JSONL))
@FUZZ
@given(lines=st.lists(st.one_of(st.binary(max_size=60), json_values.map(lambda v: json.dumps(v).encode())), max_size=8))
def test_every_nonblank_jsonl_line_is_accounted_for(parser_id, lines):
    store, path = next((store, path) for pid, store, path in TARGETS if pid == parser_id)
    lines = [line.replace(b"\n", b" ") for line in lines]
    rows = feed(parser_id, store, path, b"\n".join(lines) + b"\n")
    cited = {row.locator for row in rows}
    for number, line in enumerate(lines, 1):
        if line.strip():
            assert f"line:{number}" in cited, (line, [row.text for row in rows])


def fixture_files() -> list[tuple[str, str, str, bytes]]:
    found = []
    for parser_id, store, path in TARGETS:
        name = path.rsplit("/", 1)[-1]
        for candidate in sorted((FIXTURES / "pearai").glob(f"*/home/**/{name}")):
            if candidate.stat().st_size and (name != "state.vscdb" or candidate.read_bytes()[:6] == b"SQLite"):
                found.append((parser_id, store, path, candidate.read_bytes()))
                break
    return found


@pytest.mark.parametrize("parser_id, store, path, data", fixture_files(),
                         ids=lambda value: str(value)[:40] if isinstance(value, str) else "data")
@FUZZ
@given(cut=st.floats(min_value=0, max_value=1))
def test_truncated_files_never_raise(parser_id, store, path, data, cut):
    check(feed(parser_id, store, path, data[: int(len(data) * cut)]))


def test_dispatch_turns_a_crash_into_a_row_and_keeps_earlier_rows():
    from aitrail.analyzer.dispatch import parse_source

    def crashing(ctx):
        yield Draft("user", "before the crash", "line:1")
        raise RuntimeError("boom")

    bundle = FakeBundle({("pearai.chat_sessions", "x.json"): b"{}"})
    rows = [row for _, row in parse_source(bundle, bundle.source("x.json"), crashing, {})]
    assert [row[8] for row in rows][0] == "before the crash"
    assert rows[1][8].startswith("parser: crashed on this file after 1 rows (RuntimeError: boom)")
    assert rows[1][11] == "data/home/x.json"
