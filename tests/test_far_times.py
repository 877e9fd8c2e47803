"""Every fixture with its ISO times moved to the 24th century: the same rows, each stamped, none crashed.

The sort key once packed ns + 2**63 into 64 bits, so a record timed after
2262-04-11 stopped the parse of its whole file (``parser: crashed ... int too
large to convert``) in every agent. Here every ``20YY-`` ISO date of every
text file of every fixture case becomes ``23YY-`` (SQLite files and
compressed rollouts are left as they are), and each agent must give as many
rows as its goldens, with no ``parser: crashed`` row.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.test_merged_homes import AGENT, ROUNDS, analyzed, golden_rows, merged_home, rows_of

ISO_DATE = re.compile(rb"\b20(\d\d-\d\d-\d\dT\d\d:\d\d)")
BINARY_SUFFIXES = (".sqlite", ".db", ".vscdb", ".backup", ".zst", "-wal", "-shm", "-journal")


def moved_to_the_future(home: Path) -> int:
    """Rewrite every text file's ISO dates 20YY -> 23YY in place; the number of dates moved."""
    moved = 0
    for path in home.rglob("*"):
        if (path.is_file() and not path.is_symlink() and not path.name.endswith(BINARY_SUFFIXES)
                and not (path.parent / "CURRENT").is_file()):  # a LevelDB directory's files are checksummed
            data = path.read_bytes()
            if data.startswith(b"SQLite format 3"):
                continue
            changed, count = ISO_DATE.subn(rb"23\1", data)
            if count:
                stat = path.stat()
                path.write_bytes(changed)
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
                moved += count
    return moved


def _finding(row: list[str]) -> bool:
    # an audit chain's verdict (a verified chain, a break at line N, or none verifying) rests on the bytes this
    # test rewrites: moved dates break every HMAC, so the verdict row is a finding like the time comparisons
    return row[8].startswith(("integrity: ", "audit chain: "))


@pytest.mark.parametrize("number", range(len(ROUNDS)))
def test_times_past_2262_are_stamped_sorted_and_stop_no_file(cli, number: int, tmp_path: Path):
    members = ROUNDS[number]
    home = merged_home(members, tmp_path / "home")
    assert moved_to_the_future(home) > 0
    produced = rows_of(analyzed(cli, [home], tmp_path))
    assert not [row for row in produced if "parser: crashed" in row[8]]
    # integrity findings compare times (records with their file's time, lines with lines): moving the records'
    # times moves them, so every other row is counted
    expected = Counter(row[AGENT] for case in members for row in golden_rows(case) if not _finding(row))
    assert Counter(row[AGENT] for row in produced if not _finding(row)) == expected
    assert any(row[0].startswith("23") for row in produced)
