"""Glob expansion and member-name escaping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.bundle.layout import (
    escape_component,
    is_safe_member_name,
    link_name,
    payload_and_link_names,
    payload_name,
    unescape_component,
)
from aitrail.collector.catalog.globs import GlobError, expand_braces, match_path, validate_glob


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("a/b.json", ["a/b.json"]),
        ("t/*/{ui,api}.json", ["t/*/ui.json", "t/*/api.json"]),
        ("{a,b}/{c,d}", ["a/c", "a/d", "b/c", "b/d"]),
        ("x/{a,{b,c}}.y", ["x/a.y", "x/b.y", "x/c.y"]),
    ],
)
def test_brace_expansion(pattern, expected):
    assert expand_braces(pattern) == expected


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("sessions/*.json", "sessions/a.json", True),
        ("sessions/*.json", "sessions/sub/a.json", False),
        ("sessions/**/*.jsonl", "sessions/a.jsonl", True),
        ("sessions/**/*.jsonl", "sessions/x/y/a.jsonl", True),
        ("sessions/**", "sessions/x/y", True),
        ("*.json", ".hidden.json", True),
        ("a/[!b]c", "a/xc", True),
        ("a/[!b]c", "a/bc", False),
        ("a/?.md", "a/1.md", True),
        ("a/?.md", "a/12.md", False),
    ],
)
def test_match_path(pattern, path, matches):
    assert match_path(pattern, path) is matches


@pytest.mark.parametrize("pattern", ["", "/abs", "a//b", "a/./b", "a/../b", "a\\b", "a/b**", "a/[b"])
def test_invalid_globs(pattern):
    with pytest.raises(GlobError):
        validate_glob(pattern)


@pytest.mark.parametrize(
    "raw",
    [b"plain.json", b"caf\xc3\xa9.json", b"bad\xff\xfe", b"per%cent", b"back\\slash", b"new\nline", b"cr\rx",
     b"caret^x", b"tab\tx", b"\x7f", "\u2028sep".encode()],
)
def test_escape_round_trips_exact_bytes(raw):
    name = escape_component(raw)
    assert unescape_component(name) == raw
    assert "%" not in name and "\\" not in name and "\n" not in name and "\r" not in name
    assert is_safe_member_name("data/h/" + name)


def test_escaping_is_injective():
    names = [b"a^25", b"a%", b"a\xff", b"a^FF"]
    assert len({escape_component(raw) for raw in names}) == len(names)


@pytest.mark.parametrize("name", ["/abs", "../x", "a/../b", "a//b", "", "a/./b", "a\\b", "a\nb"])
def test_unsafe_member_names(name):
    assert not is_safe_member_name(name)


@settings(max_examples=300, deadline=None)
@given(label=st.sampled_from(["alice", "system", "b\u00f6b"]),
       paths=st.lists(st.lists(st.sampled_from([b"a", b".claude", b"x\xff", b"p^1", b"n%", b"caf\xc3\xa9", b"t\tb"]),
                               max_size=4), min_size=1, max_size=6))
def test_payload_and_link_names_escape_every_component(label, paths):
    for parts in map(tuple, paths):  # several paths: the escaped directories are shared between calls
        assert payload_and_link_names(label, parts) == (payload_name(label, parts), link_name(label, parts))
