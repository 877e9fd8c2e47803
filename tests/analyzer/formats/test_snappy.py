"""The Snappy block decoder: exact on valid blocks, bounded and a SnappyError (never anything else) on the rest."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.analyzer.formats import snappy
from tests import fixture_leveldb

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMIT = 1 << 20


def test_literals_and_every_copy_kind_by_hand():
    # preamble 11; a literal "abcd" (tag 3<<2); a copy with a 1-byte offset, length 4 from 4 back; a copy
    # with a 2-byte offset, length 2 from 2 back; a copy with a 4-byte offset, length 1 from 1 back: 4+4+2+1
    block = bytes([11, 3 << 2]) + b"abcd" + bytes([1, 4]) + bytes([2 | (1 << 2), 2, 0]) + bytes([3, 1, 0, 0, 0])
    assert snappy.decompress(block, LIMIT) == b"abcdabcdcdd"


def test_an_overlapping_copy_repeats_the_last_bytes():
    block = bytes([10, 1 << 2]) + b"xy" + bytes([2 | (7 << 2), 2, 0])  # "xy", then 8 bytes from 2 back
    assert snappy.decompress(block, LIMIT) == b"xyxyxyxyxy"


def test_long_literal_lengths_take_their_extra_bytes():
    data = bytes(range(256)) * 3
    block = fixture_leveldb.varint(len(data)) + bytes([61 << 2]) + (len(data) - 1).to_bytes(2, "little") + data
    assert snappy.decompress(block, LIMIT) == data


@pytest.mark.parametrize("block, reason", [
    (bytes([5, 0]) + b"a", "ends after 1 of its 5"),
    (bytes([4, 3 << 2]) + b"ab", "runs past the input"),
    (bytes([4, 0]) + b"a" + bytes([1, 9]), "before the output's start"),
    (bytes([4, 0]) + b"a" + bytes([1, 0]), "before the output's start"),  # offset 0
    (bytes([2, 3 << 2]) + b"abcd", "past the declared length"),
    (bytes([0x80, 0x80, 0x80, 0x80, 0x80, 1]), "preamble"),
    (bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), "32-bit"),
    (bytes([2, 0]) + b"a" + bytes([1]), "cut short"),
    (bytes([1, 61 << 2, 0]), "cut short"),
])
def test_damaged_blocks_are_snappy_errors_naming_why(block, reason):
    with pytest.raises(snappy.SnappyError, match=reason):
        snappy.decompress(block, LIMIT)


def test_a_declared_length_over_the_limit_is_refused_before_anything_is_built():
    block = fixture_leveldb.varint(1 << 30) + bytes([0]) + b"a"
    with pytest.raises(snappy.SnappyError, match="over the limit"):
        snappy.decompress(block, 1 << 20)


@FUZZ
@given(data=st.binary(max_size=3000) | st.text(alphabet="ab c{}\"", max_size=3000).map(str.encode))
def test_every_block_the_fixture_encoder_writes_decodes_to_its_input(data):
    assert snappy.decompress(fixture_leveldb.compress(data), LIMIT) == data


@FUZZ
@given(data=st.binary(max_size=600), limit=st.integers(min_value=0, max_value=4096))
def test_any_bytes_give_output_within_the_limit_or_a_snappy_error(data, limit):
    try:
        out = snappy.decompress(data, limit)
    except snappy.SnappyError:
        return
    assert len(out) <= limit and len(out) == snappy.uncompressed_length(data)[0]


@FUZZ
@given(data=st.binary(min_size=1, max_size=2000), cut=st.floats(min_value=0, max_value=1))
def test_a_valid_block_cut_short_is_a_snappy_error(data, cut):
    block = fixture_leveldb.compress(data)
    end = int(len(block) * cut)
    if end == len(block):
        return
    with pytest.raises(snappy.SnappyError):
        snappy.decompress(block[:end], LIMIT)
