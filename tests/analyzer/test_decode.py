"""The fast JSON path gives exactly what the standard path gives: the same values, the same refusals."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.view import decode
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(decode._FAST is None, reason="msgspec is not installed")


def outcome(decoder, value, errors=(ValueError, UnicodeDecodeError)) -> tuple[str, object]:
    """("ok", the decoded value), or (the exception's type name, its message)."""
    try:
        return "ok", decoder(value)
    except errors as exc:
        return type(exc).__name__, str(exc)


def assert_same_outcome(got: tuple[str, object], expected: tuple[str, object]) -> None:
    assert got[0] == expected[0] and (same(got[1], expected[1]) if got[0] == "ok" else got == expected)


def standard(text: str | bytes) -> tuple[str, object]:
    """What decode_json gives without the fast path: ('ok', value) or ('error', message)."""
    try:
        return "ok", decode._standard_decode(text, json.loads)
    except (ValueError, UnicodeDecodeError) as exc:
        return "error", str(exc)


def both(text: str | bytes) -> tuple[tuple[str, object], tuple[str, object]]:
    try:
        fast = "ok", decode.decode_json(text)
    except (ValueError, UnicodeDecodeError) as exc:
        fast = "error", str(exc)
    return fast, standard(text)


def same(left: object, right: object) -> bool:
    """Equal and of the same types all the way down (1 and 1.0 and True differ; NaN equals NaN)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        return repr(left) == repr(right) or (math.isnan(left) and math.isnan(right))
    return left == right


EDGE_CASES = [
    '"\\ud800"', '"\\uD800\\u0041"', '{"\\ud800":1}', '"\\ud83d\\ude00"', "1e400", "-1e400", "1e-400", "NaN",
    "Infinity", "-Infinity", "1" * 4300, "1" * 4301, "-" + "1" * 5000, "1" * 5000 + ".0", "18446744073709551616",
    "-9223372036854775809", "123456789012345678901234567890", "-0", "-0.0", "1E2", "2.2250738585072011e-308",
    "[1,]", '{"a":1,}', '{"a":1,"a":2}', "\ufeff{}", " \t\n{}\r\n", '{"a":1} x', "[1,2", "", "   ", '"\\u0000"',
    '"\x00"', '"\x1f"', "\x0b{}", "{}\x0c", "tru", "true", "null", "[" * 150 + "]" * 150,
    "[" * 197 + "]" * 197, "[" * 199 + "]" * 199, "[" * 201 + "]" * 201, "[" * 990 + "]" * 990,
    "[" * 5000, '{"a":' * 300 + "1" + "}" * 300,
]


@pytest.mark.parametrize("text", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_cases_decode_as_the_standard_path_does(text):
    for given_text in (text, text.encode("utf-8", "surrogatepass")):
        (fast_kind, fast), (standard_kind, expected) = both(given_text)
        assert fast_kind == standard_kind, (given_text[:60], fast, expected)
        assert same(fast, expected) if fast_kind == "ok" else fast == expected


@pytest.mark.parametrize("data", [b"\xff{}", b'{"a":"\xed\xa0\x80"}', b'{"a":"\xc3"}', b"\xef\xbb\xbf{}",
                                  b'{"a":"caf\xc3\xa9"}', "{}".encode("utf-16")])
def test_bytes_decode_as_the_text_of_the_line_would(data):
    """decode_json_utf8(data) is decode_json(data.decode('utf-8')): a UnicodeDecodeError first, then JSON."""
    expected = outcome(lambda raw: decode._standard_decode(raw.decode("utf-8"), json.loads), data)
    assert_same_outcome(outcome(decode.decode_json_utf8, data), expected)


def test_numbers_are_the_same_floats_and_ints():
    rng = random.Random(7)
    for _ in range(20_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
        text = digits[0] + ("." + digits[1:] if len(digits) > 1 and rng.random() < 0.7 else digits[1:])
        if rng.random() < 0.5:
            text += f"e{rng.randint(-330, 310)}"
        text = ("-" if rng.random() < 0.3 else "") + text
        (fast_kind, fast), (standard_kind, expected) = both(text)
        assert fast_kind == standard_kind and (same(fast, expected) if fast_kind == "ok" else fast == expected), text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_any_json_value_decodes_the_same(value):
    text = json.dumps(value, ensure_ascii=False)
    (fast_kind, fast), (standard_kind, expected) = both(text)
    assert fast_kind == standard_kind == "ok" and same(fast, expected)
    (fast_kind, fast), _ = both(text.encode("utf-8"))
    assert fast_kind == "ok" and same(fast, expected)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40) | st.text(alphabet='[]{}",:0123456789.eE-+ tfnrulasx\\u', max_size=40))
def test_any_bytes_are_refused_or_taken_as_the_standard_path_does(data):
    (fast_kind, fast), (standard_kind, expected) = both(data)
    assert fast_kind == standard_kind, (data, fast, expected)
    assert same(fast, expected) if fast_kind == "ok" else fast == expected


def test_every_fixture_line_and_document_decodes_the_same():
    checked = 0
    for path in sorted((REPO / "fixtures").rglob("*")):
        if not path.is_file() or path.suffix not in (".jsonl", ".json"):
            continue
        data = path.read_bytes()
        for piece in [data, *data.splitlines()] if path.suffix == ".jsonl" else [data]:
            (fast_kind, fast), (standard_kind, expected) = both(piece.strip())
            assert fast_kind == standard_kind, (path, piece[:80])
            assert same(fast, expected) if fast_kind == "ok" else fast == expected
            checked += 1
    assert checked > 500  # 788 lines and documents when this was written


json_with_odd_numbers = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.sampled_from([10**30, -0.0, 0.0, 1.0, 1]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=12)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@settings(max_examples=400, deadline=None)
@given(json_with_odd_numbers, json_with_odd_numbers)
def test_canonical_json_is_equal_exactly_when_sorted_json_dumps_is(left, right):
    assert (decode.canonical_json(left) == decode.canonical_json(right)) == (_dumps(left) == _dumps(right))
    assert (decode.canonical_json(left) == decode.canonical_json(left))


@pytest.mark.parametrize("left, right", [
    ({"a": float("nan")}, {"a": None}), ([float("inf")], [None]), ([1], [1.0]), ([True], [1]), ([-0.0], [0.0]),
    ({"b": 1, "a": 2}, {"a": 2, "b": 1}), (["\ud800"], ["\ud800"]), (["\ud800"], ["\ud801"]),
])
def test_canonical_json_on_values_msgspec_spells_alike(left, right):
    assert (decode.canonical_json(left) == decode.canonical_json(right)) == (_dumps(left) == _dumps(right))


def test_without_msgspec_the_standard_path_does_everything():
    import subprocess
    import sys

    probe = ("import sys; sys.modules['msgspec'] = None; sys.modules['msgspec.json'] = None\n"
             "from aitrail.analyzer.view import decode\n"
             "assert decode._FAST is None\n"
             "print(decode.decode_json('{\"a\": [1, 2.5]}'), decode.decode_json_utf8(b'[\"x\"]'),\n"
             "      decode.canonical_json({'b': 1, 'a': float('nan')}).decode())")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "{'a': [1, 2.5]} ['x'] {\"a\": NaN, \"b\": 1}"


@pytest.mark.parametrize("text", [*EDGE_CASES, "[" * 995 + "]" * 995, "[" * 2000 + "]" * 2000])
def test_json_loads_is_json_loads(text):
    """formats.decode.json_loads (files.jsonl): json.loads's values and errors exactly, at any depth."""
    for given_text in (text, text.encode("utf-8", "surrogatepass")):
        errors = (ValueError, RecursionError)
        assert_same_outcome(outcome(decode.json_loads, given_text, errors), outcome(json.loads, given_text, errors))
