"""JSONC loading: comments, trailing commas, strings respected, linear time, bounded decoding."""

from __future__ import annotations

import time

import pytest

from aitrail.analyzer.formats.jsonc import load_jsonc, strip_jsonc
from aitrail.analyzer.view.decode import MAX_NESTING


def test_line_and_block_comments_are_whitespace():
    text = b'// head\n{\n  "a": 1, // tail\n  /* block\n spanning */ "b": [2, 3]\n}\n'
    assert load_jsonc(text) == {"a": 1, "b": [2, 3]}


def test_comment_markers_inside_strings_are_text():
    assert load_jsonc('{"url": "http://x/*y*/", "q": "a \\" // b"}') == {"url": "http://x/*y*/", "q": 'a " // b'}


def test_trailing_commas_are_dropped_even_before_a_comment():
    assert load_jsonc('{"a": [1, 2, /* c */ ], "b": {"c": 1,\n // x\n },}') == {"a": [1, 2], "b": {"c": 1}}


def test_a_comma_between_values_is_kept():
    assert load_jsonc("[1, /* two */ 2]") == [1, 2]


def test_a_double_comma_stays_invalid():
    with pytest.raises(ValueError):
        load_jsonc("[1,,]")


def test_bom_is_skipped():
    assert load_jsonc('\ufeff{"a": 1}'.encode()) == {"a": 1}


def test_an_unclosed_block_comment_comments_out_the_rest():
    assert load_jsonc('{"a": 1} /* never closed') == {"a": 1}
    with pytest.raises(ValueError):
        load_jsonc('{"a": 1, /* never closed }')


def test_line_numbers_survive_stripping():
    text = '{\n/* one\ntwo\n*/\n"a": }'
    assert strip_jsonc(text).count("\n") == text.count("\n")
    with pytest.raises(ValueError, match="line 5"):
        load_jsonc(text)


def test_unterminated_string_is_a_value_error():
    with pytest.raises(ValueError):
        load_jsonc('{"a": "never ends')


def test_not_utf8_is_a_value_error():
    with pytest.raises(ValueError, match="not UTF-8"):
        load_jsonc(b'{"a": "\xff"}')


def test_deep_nesting_is_refused_through_decode():
    with pytest.raises(ValueError):
        load_jsonc("[" * (MAX_NESTING + 50) + "]" * (MAX_NESTING + 50))


@pytest.mark.parametrize("hostile", ["/*" * 200_000, '"' + "\\" * 400_001, "//\n" * 200_000, ",]" * 200_000,
                                     "/" * 400_000])
def test_hostile_text_is_linear(hostile):
    started = time.perf_counter()
    with pytest.raises(ValueError):
        load_jsonc(hostile)
    assert time.perf_counter() - started < 2


def test_trailing_commas_can_be_refused_as_agents_that_only_strip_comments_do():
    text = '{"a": [1, 2,], // note\n "b": 3,}'
    assert load_jsonc(text) == {"a": [1, 2], "b": 3}
    with pytest.raises(ValueError):
        load_jsonc(text, trailing_commas=False)
    assert load_jsonc('{"a": 1 /* c */}', trailing_commas=False) == {"a": 1}
