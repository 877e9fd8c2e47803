"""The hand-built pax header reads back, through tarfile and GNU tar, as what it says."""

from __future__ import annotations

import hashlib
import io
import random
import shutil
import subprocess
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.bundle.tarheader import ns_text, regular_file_header

CASES = [
    ("data/h/a.json", 5, 0o100644, 1000, 1000,
     1_650_000_000_987_654_321, 1_600_000_000_000_000_001, 1_650_000_001_000_000_000),
    ("data/h/" + "long-" * 40 + ".jsonl", 0, 0o100600, 0, 0, 0, None, None),
    ("data/h/caf\u00e9/\u65e5\u672c.txt", 3, 0o100444, 4_294_967_294, 3_000_000, 1_700_000_000_000_000_000, None, None),
    ("data/h/old", 1, 0o104755, 1, 2, -1_500_000_000, -1, 0),
    ("data/h/huge.bin", 9 * 1024**3, 0o100644, 5, 5, 1_000_000_000, None, None),
]


@pytest.mark.parametrize("name, size, mode, uid, gid, mtime, atime, ctime", CASES)
def test_header_reads_back_through_tarfile(name, size, mode, uid, gid, mtime, atime, ctime):
    header = regular_file_header(name, size, mode, uid, gid, mtime, atime, ctime)
    assert len(header) % 512 == 0
    with tarfile.open(fileobj=io.BytesIO(header + b"\0" * 1024), mode="r:") as archive:
        info = archive.next()
    assert (info.name, info.size, info.mode, info.uid, info.gid) == (name, size, mode & 0o7777, uid, gid)
    assert info.isreg()
    assert info.pax_headers["mtime"] == ns_text(mtime)
    assert info.pax_headers.get("atime") == (ns_text(atime) if atime is not None else None)
    assert info.pax_headers.get("ctime") == (ns_text(ctime) if ctime is not None else None)


def test_ns_text_handles_negative_times():
    assert ns_text(-1_500_000_000) == "-1.500000000"
    assert ns_text(1_500_000_000) == "1.500000000"


@pytest.mark.skipif(not shutil.which("tar"), reason="GNU tar is needed")
def test_gnu_tar_lists_the_header(tmp_path):
    data = b"hello"
    header = regular_file_header("data/h/caf\u00e9.json", len(data), 0o100640, 1234, 5678,
                                 1_650_000_000_500_000_000, None, None)
    archive = tmp_path / "a.tar"
    archive.write_bytes(header + data + b"\0" * (512 - len(data)) + b"\0" * 1024)
    listing = subprocess.run(["tar", "--numeric-owner", "--full-time", "-tvf", archive], capture_output=True,
                             text=True, check=True, env={"TZ": "UTC", "LC_ALL": "C.UTF-8"})
    assert "-rw-r----- 1234/5678" in listing.stdout and "2022-04-15 05:20:00" in listing.stdout
    assert "data/h/caf\u00e9.json" in listing.stdout
    assert listing.stderr == ""


def _pax_records(header: bytes) -> list[bytes]:
    length = int(header[124:136].rstrip(b"\0"), 8)
    extended, records = header[512:512 + length], []
    while extended:
        size = int(extended.split(b" ", 1)[0])
        records.append(extended[:size])
        extended = extended[size:]
    return records


@settings(max_examples=300, deadline=None)
@given(name=st.text(alphabet=st.sampled_from(["a", "/", "\u00e9", "\u65e5", "-"]), min_size=1,
                    max_size=140).filter(lambda text: not text.endswith("/")),  # tarfile drops a trailing /
       size=st.integers(min_value=0, max_value=2**40), mode=st.integers(min_value=0, max_value=0o177777),
       uid=st.integers(min_value=0, max_value=2**32), gid=st.integers(min_value=0, max_value=2**32),
       mtime=st.integers(min_value=-(10**19), max_value=10**20),
       atime=st.one_of(st.none(), st.integers(min_value=-(10**19), max_value=10**20)),
       ctime=st.one_of(st.none(), st.integers(min_value=-(10**19), max_value=10**20)))
def test_any_header_reads_back_with_its_pax_records_sorted(name, size, mode, uid, gid, mtime, atime, ctime):
    header = regular_file_header("data/" + name, size, mode, uid, gid, mtime, atime, ctime)
    with tarfile.open(fileobj=io.BytesIO(header + b"\0" * 1024), mode="r:") as archive:
        info = archive.next()
    assert (info.name, info.size, info.mode, info.uid, info.gid) == ("data/" + name, size, mode & 0o7777, uid, gid)
    assert info.pax_headers["mtime"] == ns_text(mtime)
    assert info.pax_headers.get("atime") == (ns_text(atime) if atime is not None else None)
    assert info.pax_headers.get("ctime") == (ns_text(ctime) if ctime is not None else None)
    records = _pax_records(header)
    assert records == sorted(records, key=lambda record: record.split(b" ", 1)[1])  # the order tarfile writes


def _pinned_inputs():
    """3,000 header inputs around every limit: names about the 100-byte field, sizes, ids and times about theirs."""
    rng = random.Random(20261202)
    alphabet = ["a", "/", "-", ".", "\u00e9", "\u65e5", "Z", "0"]
    for _ in range(3000):
        name = "data/h/" + "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 5, 40, 93, 94, 95, 120, 300])))
        yield (name, rng.choice([0, 1, 511, 512, 12345, 9 * 1024**3, 0o77777777777, 0o77777777777 + 1]),
               rng.choice([0o100644, 0o100600, 0o104755, 0o177777]),
               rng.choice([0, 1000, 0o7777777, 0o7777777 + 1, 2**32]), rng.choice([0, 1000, 0o7777777 + 1]),
               rng.choice([0, 1, -1, -1_500_000_000, 1_780_000_000_123_456_789, 10**20, -(10**19)]),
               rng.choice([None, 0, 1_780_000_001_000_000_001, -5]),
               rng.choice([None, 999_999_999, 1_780_000_002_000_000_000]))


def test_headers_are_the_bytes_they_have_always_been():
    """The builder is tuned for speed; its bytes are pinned (digest taken before the tuning, 2026-12-02)."""
    digest = hashlib.sha256()
    for args in _pinned_inputs():
        digest.update(regular_file_header(*args))
    assert digest.hexdigest() == "4607df42c26b0fe9fb6d65353cfce9707f2dcf1a23e89fedc0f00598de5b186e"
