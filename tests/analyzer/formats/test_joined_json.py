"""A joined JSON member is decoded, or None: a cut or foreign file never breaks the parser that joins it."""

from __future__ import annotations

from aitrail.analyzer.formats.joined_json import joined_document, joined_objects
from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import FakeBundle

FILES = {("grok.plans", "a/one.json"): b'{"x": 1}', ("grok.plans", "a/cut.json"): b'{"x": ',
         ("grok.plans", "a/list.json"): b"[1, 2]", ("grok.plans", "a/deep.json"): b"[" * 300 + b"]" * 300,
         ("grok.chat_history", "a/self.jsonl"): b""}


def context() -> ParseContext:
    bundle = FakeBundle(FILES)
    return ParseContext(bundle, bundle.source("a/self.jsonl"), {})


def test_a_readable_member_is_decoded_and_anything_else_is_none():
    ctx = context()
    assert joined_document(ctx, ctx.bundle.source("a/one.json")) == {"x": 1}
    assert joined_document(ctx, ctx.bundle.source("a/list.json")) == [1, 2]
    for path in ("a/cut.json", "a/deep.json"):
        assert joined_document(ctx, ctx.bundle.source(path)) is None
    assert joined_document(ctx, None) is None


def test_joined_objects_gives_only_the_objects_of_the_store():
    assert [(source.path, value) for source, value in joined_objects(context(), "plans")] == [("a/one.json", {"x": 1})]


def test_first_of_each_keeps_the_first_value_per_key_and_stops_at_the_limit():
    from aitrail.analyzer.formats.joined_json import first_of_each

    pairs = [("a", "1"), ("a", "2"), ("", "3"), ("b", ""), ("c", "4"), ("d", "5")]
    assert first_of_each(pairs, 10) == {"a": "1", "c": "4", "d": "5"}
    assert first_of_each(pairs, 2) == {"a": "1", "c": "4"}


def test_cached_table_builds_once_and_is_always_a_dict():
    from aitrail.analyzer.formats.joined_json import cached_table

    ctx, calls = context(), []
    assert cached_table(ctx, ("t",), lambda: calls.append(1) or {"k": "v"}) == {"k": "v"}
    assert cached_table(ctx, ("t",), lambda: calls.append(1) or {}) == {"k": "v"} and calls == [1]
    assert cached_table(ctx, ("u",), lambda: ["not", "a", "dict"]) == {}
