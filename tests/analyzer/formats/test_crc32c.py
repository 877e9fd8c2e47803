"""CRC-32C: both loops of formats/crc32c.py give the standard values, and each other's, on any bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aitrail.analyzer.formats import crc32c as module
from tests.fixture_leveldb import crc32c as independent  # the fixtures' own bit-by-bit CRC


def test_the_check_value_and_continuation():
    assert module.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value (RFC 3720 B.4's polynomial)
    assert module.crc32c(b"") == 0
    assert module.crc32c(b"56789", module.crc32c(b"1234")) == 0xE3069283
    assert module.crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeros


@given(data=st.binary(max_size=80), start=st.integers(0, 0xFFFFFFFF))
def test_both_loops_agree_with_each_other_and_with_a_bitwise_crc(data, start):
    by_words = module._by_words(data, start ^ 0xFFFFFFFF) ^ 0xFFFFFFFF
    by_bytes = module._by_bytes(data, start ^ 0xFFFFFFFF) ^ 0xFFFFFFFF
    assert by_words == by_bytes == module.crc32c(data, start)
    if start == 0:
        assert module.crc32c(data) == independent(data)
