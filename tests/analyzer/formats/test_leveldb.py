"""The LevelDB reader: logs and tables written from the documented formats read back exactly; damage is a Problem."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.analyzer.formats import leveldb
from tests import fixture_leveldb as ldb

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
keys = st.binary(min_size=1, max_size=24)
values = st.binary(max_size=300) | st.text(alphabet="ab{}\":,", max_size=3000).map(str.encode)


def entries(items):
    return [item for item in items if isinstance(item, leveldb.Entry)]


def problems(items):
    return [item for item in items if isinstance(item, leveldb.Problem)]


def test_crc32c_is_castagnoli_and_the_mask_is_leveldbs():
    assert leveldb.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert leveldb.crc32c(b"") == 0
    assert leveldb.crc32c(b"56789", leveldb.crc32c(b"1234")) == 0xE3069283
    assert leveldb.crc32c(bytes(range(256)) * 5) == ldb.crc32c(bytes(range(256)) * 5)
    assert leveldb.masked(0x12345678) == ldb.mask(0x12345678)


def test_a_write_batch_gives_puts_and_deletions_with_consecutive_sequence_numbers():
    log = ldb.log_file([ldb.batch(41, [(ldb.VALUE, b"a", b"1"), (ldb.DELETION, b"b", b""), (ldb.VALUE, b"c", b"")])])
    found = entries(leveldb.log_entries(log))
    assert [(item.key, item.sequence, item.deleted, item.value) for item in found] == [
        (b"a", 41, False, b"1"), (b"b", 42, True, b""), (b"c", 43, False, b"")]
    assert found[0].locator == "record:0/seq:41"


def test_a_record_spanning_blocks_is_joined_from_its_first_middle_and_last_fragments():
    big = bytes(range(256)) * 400  # 102,400 bytes: four blocks
    log = ldb.log_file([ldb.batch(1, [(ldb.VALUE, b"small", b"x")]), ldb.batch(2, [(ldb.VALUE, b"big", big)])])
    assert len(log) > 3 * ldb.BLOCK
    found = entries(leveldb.log_entries(log))
    assert [(item.key, item.value) for item in found] == [(b"small", b"x"), (b"big", big)]
    assert not problems(leveldb.log_entries(log))


def test_a_block_trailer_too_short_for_a_header_is_skipped_as_padding():
    # header 7, batch header 12, tag 1, key length 1 and key 1, value length 3: the record ends 3 bytes short
    first = ldb.batch(1, [(ldb.VALUE, b"k", b"v" * (ldb.BLOCK - 3 - 25))])
    log = ldb.log_file([first, ldb.batch(2, [(ldb.VALUE, b"next", b"v")])])
    assert log[ldb.BLOCK - 3:ldb.BLOCK] == b"\0\0\0"
    assert [item.key for item in entries(leveldb.log_entries(log))] == [b"k", b"next"]


def test_a_bad_checksum_drops_that_record_only_and_verify_false_reads_it():
    log = ldb.log_file([ldb.batch(1, [(ldb.VALUE, b"a", b"1")]), ldb.batch(2, [(ldb.VALUE, b"b", b"2")])], corrupt=0)
    items = list(leveldb.log_entries(log))
    assert [item.reason for item in problems(items)] == ["checksum mismatch: the record is not read"]
    assert [item.key for item in entries(items)] == [b"b"]
    assert [item.key for item in entries(leveldb.log_entries(log, verify=False))][-1] == b"b"


def test_a_torn_last_write_and_trailing_garbage_are_problems():
    torn = ldb.log_file([ldb.batch(1, [(ldb.VALUE, b"a", b"1")]), ldb.batch(2, [(ldb.VALUE, b"b", b"2")])], torn=True)
    items = list(leveldb.log_entries(torn))
    assert [item.key for item in entries(items)] == [b"a"]
    assert "torn write" in problems(items)[0].reason
    assert "not a record" in problems(leveldb.log_entries(ldb.log_file([ldb.batch(1, [])]) + b"xyz"))[0].reason
    assert "no log record" in problems(leveldb.log_entries(bytes(100)))[0].reason


def test_a_batch_whose_count_or_records_do_not_add_up_is_a_problem_after_what_it_holds():
    short = struct.pack("<QI", 5, 3) + b"\x01" + ldb.prefixed(b"k") + ldb.prefixed(b"v")
    items = list(leveldb.batch_entries(0, short))
    assert entries(items)[0].key == b"k" and "says 3 records and holds 1" in problems(items)[0].reason
    unknown = problems(leveldb.batch_entries(0, struct.pack("<QI", 1, 1) + b"\x07"))
    assert "unknown write batch tag 7" in unknown[0].reason
    assert "runs past" in problems(leveldb.batch_entries(0, struct.pack("<QI", 1, 1) + b"\x01\x05ab"))[0].reason


def test_a_table_gives_every_version_with_its_sequence_and_kind_from_snappy_blocks():
    versions = [(b"key%03d" % number, number + 1, ldb.VALUE, b"value %d " % number * 30) for number in range(60)]
    versions += [(b"key007", 500, ldb.DELETION, b""), (b"key008", 501, ldb.VALUE, b"newer")]
    table = ldb.table_file(versions, block_size=800)
    found = entries(leveldb.table_entries(table))
    assert not problems(leveldb.table_entries(table))
    assert sorted((item.key, item.sequence, item.kind, item.value) for item in found) == sorted(versions)
    # within a key, newest first (the table's internal key order)
    assert [item.sequence for item in found if item.key == b"key008"] == [501, 9]
    assert {item.position.split("/")[0] for item in found} != {"block:0"}  # several data blocks


def test_a_damaged_block_is_a_problem_and_the_other_blocks_are_read():
    versions = [(b"k%03d" % number, number + 1, ldb.VALUE, b"v" * 50) for number in range(40)]
    items = list(leveldb.table_entries(ldb.table_file(versions, block_size=400, damaged_block=2)))
    assert [item.reason for item in problems(items)] == ["checksum mismatch: the block is not read"]
    assert 0 < len(entries(items)) < 40


@pytest.mark.parametrize("data, reason", [
    (b"short", "too short for a table footer"),
    (bytes(100), "no table magic number"),
])
def test_a_file_that_is_no_table_is_one_problem(data, reason):
    items = list(leveldb.table_entries(data))
    assert len(items) == 1 and reason in items[0].reason


def test_an_index_naming_one_block_many_times_reads_it_once():
    out = bytearray()
    data_handle = ldb._written(out, ldb._block([(ldb.internal(b"a", 1, ldb.VALUE), b"x")], 16), False)
    metaindex = ldb._written(out, ldb._block([], 16), False)
    index = ldb._written(out, ldb._block([(b"k%03d" % number, data_handle) for number in range(50)], 1), False)
    table = bytes(out) + (metaindex + index).ljust(40, b"\0") + struct.pack("<Q", ldb.MAGIC)
    assert [item.key for item in entries(leveldb.table_entries(table))] == [b"a"]


def test_a_key_sharing_more_than_the_last_key_holds_is_a_problem():
    block = ldb.varint(5) + ldb.varint(1) + ldb.varint(0) + b"x" + struct.pack("<II", 0, 1)
    items = list(leveldb.block_entries(block, "block:0", leveldb._Budget()))
    assert isinstance(items[0], leveldb.Problem) and "runs past the block" in items[0].reason


def test_file_entries_chooses_the_reader_by_name():
    assert "not a LevelDB log or table" in next(leveldb.file_entries("MANIFEST-000001", b"")).reason
    assert entries(leveldb.file_entries("000003.log", ldb.log_file([ldb.batch(1, [(ldb.VALUE, b"a", b"")])])))


@FUZZ
@given(batches=st.lists(st.lists(st.tuples(st.sampled_from([ldb.VALUE, ldb.DELETION]), keys, values), max_size=5),
                        max_size=6))
def test_any_log_the_writer_makes_reads_back_every_version(batches):
    sequence, expected, records = 1, [], []
    for batch in batches:
        records.append(ldb.batch(sequence, batch))
        for offset, (kind, key, value) in enumerate(batch):
            expected.append((key, sequence + offset, kind, value if kind == ldb.VALUE else b""))
        sequence += len(batch)
    items = list(leveldb.log_entries(ldb.log_file(records)))
    assert [(item.key, item.sequence, item.kind, item.value) for item in entries(items)] == expected
    assert not problems(items)


@FUZZ
@given(versions=st.dictionaries(st.tuples(keys, st.integers(min_value=1, max_value=1 << 40)),
                                st.tuples(st.sampled_from([ldb.VALUE, ldb.DELETION]), values), max_size=40),
       block_size=st.integers(min_value=64, max_value=4096))
def test_any_table_the_writer_makes_reads_back_every_version(versions, block_size):
    flat = [(key, sequence, kind, value if kind == ldb.VALUE else b"")
            for (key, sequence), (kind, value) in versions.items()]
    found = entries(leveldb.table_entries(ldb.table_file(flat, block_size=block_size)))
    assert sorted((item.key, item.sequence, item.kind, item.value) for item in found) == sorted(flat)


@FUZZ
@given(data=st.binary(max_size=2000), name=st.sampled_from(["000001.log", "000002.ldb", "000003.sst"]))
def test_random_bytes_never_raise_and_every_item_is_an_entry_or_a_problem(data, name):
    for item in leveldb.file_entries(name, data):
        assert isinstance(item, (leveldb.Entry, leveldb.Problem))


@FUZZ
@given(cut=st.floats(min_value=0, max_value=1), flip=st.integers(min_value=0, max_value=10 ** 6))
def test_a_cut_or_flipped_file_never_raises(cut, flip):
    table = ldb.table_file([(b"k%02d" % number, number, ldb.VALUE, b"v" * 40) for number in range(30)], 300)
    log = ldb.log_file([ldb.batch(1, [(ldb.VALUE, b"k", b"v" * 40000)]), ldb.batch(2, [(ldb.DELETION, b"k", b"")])])
    for name, data in (("1.ldb", table), ("2.log", log)):
        changed = bytearray(data[:int(len(data) * cut)])
        if changed:
            changed[flip % len(changed)] ^= 0x5A
        for item in leveldb.file_entries(name, bytes(changed)):
            assert isinstance(item, (leveldb.Entry, leveldb.Problem))
