"""The per-member checks of index, files.jsonl and manifests: patterns that accept exactly what the rules say.

They once looped over characters in Python; a bundle of many members paid
that once per member on every open and verify. The patterns must accept
exactly the strings the rules describe, no more: the loops are kept here as
the definition.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aitrail.collector.bundle.metadata import stat_problem
from aitrail.collector.bundle.reader import _is_sha256
from aitrail.collector.verify.structure import parse_manifest_line

HEX = "0123456789abcdef"
# near misses matter most: hex-like texts of about the right length, with the odd foreign character
NEAR_HEX = st.text(alphabet=HEX + "ABCDEFgx \n\t\u0660\uff10", min_size=60, max_size=68)
ANY_TEXT = st.one_of(NEAR_HEX, st.text(max_size=80))


def _is_sha256_by_rule(text: str) -> bool:
    return len(text) == 64 and all(char in HEX for char in text)


def _mode_ok_by_rule(mode: str) -> bool:
    return bool(mode) and len(mode) <= 12 and all(char in "01234567" for char in mode)


@given(ANY_TEXT)
def test_index_digest_check_is_the_rule(text):
    assert _is_sha256(text) is _is_sha256_by_rule(text)


def test_index_digest_check_examples():
    assert _is_sha256("a" * 64)
    assert not _is_sha256("a" * 63) and not _is_sha256("a" * 65) and not _is_sha256("A" * 64)
    assert not _is_sha256("a" * 64 + "\n")  # a pattern's $ would take this: fullmatch does not
    assert not _is_sha256("\u0660" * 64)  # Arabic-Indic digits are digits, not hex


@given(st.one_of(st.text(alphabet="01234567 89\n\u0660", max_size=14), st.text(max_size=14)))
def test_stat_mode_check_is_the_rule(mode):
    stat = {"mode": mode, "uid": 0, "gid": 0, "size": 0, "mtime_ns": 0, "ctime_ns": 0, "atime_ns": 0, "ino": 0,
            "dev": 0, "nlink": 1}
    problem = stat_problem(stat)
    assert (problem is None or not problem.startswith("mode")) is _mode_ok_by_rule(mode)


@given(ANY_TEXT, st.text(max_size=20))
def test_manifest_line_check_is_the_rule(digest, member):
    line = f"{digest}  {member}".encode("utf-8", "surrogatepass")
    text = line.decode("utf-8", "replace")
    expected_digest, _, expected_member = text.partition("  ")
    by_rule = len(expected_digest) == 64 and bool(expected_member) and all(
        char in HEX + "ABCDEF" for char in expected_digest)
    parsed = parse_manifest_line(line)
    assert (parsed is not None) is by_rule
    if parsed is not None:
        assert parsed == (expected_digest.lower(), expected_member)


def test_stat_mode_check_examples():
    def mode_ok(mode):
        problem = stat_problem({"mode": mode, "uid": 0, "gid": 0, "mtime_ns": 0})
        return problem is None or not problem.startswith("mode")
    assert mode_ok("100644") and mode_ok("7" * 12)
    assert not mode_ok("") and not mode_ok("7" * 13) and not mode_ok("100648") and not mode_ok("100644\n")
