"""The direct header reader agrees with tarfile wherever it answers, and answers for what aitrail writes."""

from __future__ import annotations

import random
import tarfile

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.bundle.tarread import read_header
from aitrail.collector.bundle.writer import TarMeta, tar_header
from aitrail.collector.verify import tarfile_header
from tests.conftest import FIXTURES, collect_fixture_home

FIELDS = ("name", "mode", "uid", "gid", "size", "linkname", "type")


def agrees(head: bytes) -> bool:
    """read_header's answer (if any) is tarfile's, field by field, pax records included."""
    fast = read_header(head)
    if fast is None:
        return True
    slow = tarfile_header(head)
    assert slow is not None, head[:200]
    for name in FIELDS:
        assert getattr(fast, name) == getattr(slow, name), (name, getattr(fast, name), getattr(slow, name))
    assert fast.pax_headers == slow.pax_headers
    assert (fast.issym(), fast.isreg()) == (slow.issym(), slow.isreg())
    return True


names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1, max_size=160)
ids = st.integers(min_value=0, max_value=2**40)
times = st.integers(min_value=-2**40, max_value=2**62)


@settings(max_examples=300, deadline=None)
@given(names, st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=0o7777), ids, ids,
       times, st.none() | times, st.none() | times)
def test_every_regular_file_header_the_collector_writes_is_read_directly(name, size, mode, uid, gid, mtime, atime,
                                                                      ctime):
    head = tar_header("data/home/" + name, size, TarMeta(mode, uid, gid, mtime, atime, ctime))
    assert read_header(head) is not None
    assert agrees(head)


@settings(max_examples=200, deadline=None)
@given(names, names, st.integers(min_value=0, max_value=0o7777), ids, ids, times)
def test_every_link_header_the_collector_writes_is_read_directly(name, target, mode, uid, gid, mtime):
    head = tar_header("links/home/" + name, 0, TarMeta(mode, uid, gid, mtime, None, None), tarfile.SYMTYPE, target)
    assert read_header(head) is not None
    assert agrees(head)


def test_a_link_to_bytes_that_are_not_utf8_goes_to_tarfile():
    head = tar_header("links/home/x", 0, TarMeta(0o777, 1, 1, 0, None, None), tarfile.SYMTYPE, "caf\udce9")
    assert read_header(head) is None  # surrogate-escaped bytes: tarfile decides
    assert tarfile_header(head).linkname == "caf\udce9"


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_damaged_header_is_read_as_tarfile_reads_it_or_left_to_it(data):
    head = bytearray(tar_header("data/home/.claude/projects/p/s.jsonl", 1234, TarMeta(0o600, 1000, 1000, 10**18,
                                                                                        10**18, None)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        position = data.draw(st.integers(min_value=0, max_value=len(head) - 1))
        head[position] = data.draw(st.sampled_from([0, 0x20, 0x30, 0x37, 0x38, 0x0A, 0x3D, 0x2F, 0x78, 0xFF]))
    assert agrees(bytes(head))


def test_random_bytes_never_pass_for_a_header():
    rng = random.Random(5)
    for _ in range(2000):
        length = rng.choice([512, 1024, 1536])
        assert read_header(bytes(rng.getrandbits(8) for _ in range(length))) is None


def test_every_member_of_collected_bundles_reads_as_tarfile_reads_it(tmp_path_factory):
    homes = [FIXTURES / "demo-home", FIXTURES / "claude-code" / "damaged" / "home",
             FIXTURES / "cursor-ide" / "wal-newest-bubbles" / "home"]
    direct = 0
    for number, home in enumerate(homes):
        bundle = collect_fixture_home(tmp_path_factory, home, f"t{number}")
        with BundleReader(bundle) as reader:
            for member in reader.members:
                frame = b"".join(reader.iter_decompressed(member))  # offsets are within the member's frame
                head = frame[member.member_offset:member.data_offset]
                assert tarfile_header(head) is not None and agrees(head)
                direct += read_header(head) is not None
        assert direct
    assert direct >= 50
