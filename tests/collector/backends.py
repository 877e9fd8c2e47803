"""What the run's platform backend protects, for tests that hold under both (AITRAIL_PLATFORM=posix in CI)."""

from __future__ import annotations

from aitrail.collector.fs import platform


def protects_atime() -> bool:
    """True when reads are opened with O_NOATIME (the Linux backend); the POSIX backend has no such protection."""
    return platform.current().atime_protection == "o_noatime"


def expected_atime_protection() -> str:
    """What files.jsonl's ``atime_protection`` says of a file read by this run's backend (the files are ours)."""
    return "o_noatime" if protects_atime() else "none"


def settle_access_times(collect) -> None:
    """Without O_NOATIME the first read of a fresh file moves its access time; after it, they stay.

    A fresh file's atime is not after its mtime and ctime, so a read moves
    it (relatime on Linux; APFS does the same): a run over a tree, then, is
    not over a frozen tree. The atime a read set is after both, so later
    reads leave it (within the day relatime allows): ``collect`` is run
    once, and the runs the test compares come after it. Under O_NOATIME no
    read moves anything and nothing is run.
    """
    if not protects_atime():
        collect()
