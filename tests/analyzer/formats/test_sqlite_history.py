"""WAL history: the database as of each earlier commit, bounded, and never a crash on a hostile -wal."""

from __future__ import annotations

import sqlite3
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.formats import sqlite_history
from aitrail.analyzer.formats.sqlite_history import Snapshot
from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import FakeBundle


def wal_database(tmp_path, versions: list[str], checkpointed: str | None = None) -> tuple[bytes, bytes]:
    """A database whose one row was written as each of ``versions`` in turn, every write its own WAL commit.

    ``checkpointed``: a version of the row already in the main file before the first WAL commit.
    """
    path = tmp_path / "live.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)")
    if checkpointed is not None:
        connection.execute("INSERT INTO conversations VALUES ('/p', ?)", (checkpointed,))
    connection.commit()
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    main = path.read_bytes()  # the main file before any WAL commit: every later version lives in the -wal only
    connection.execute("INSERT OR REPLACE INTO conversations VALUES ('/p', ?)", (versions[0],))
    connection.commit()
    for version in versions[1:]:
        connection.execute("UPDATE conversations SET value = ? WHERE key = '/p'", (version,))
        connection.commit()
    wal = (tmp_path / "live.db-wal").read_bytes()
    connection.close()  # checkpoints into the live file; the bytes above were taken before
    return main, wal


def snapshots(main: bytes, wal: bytes | None) -> list:
    files = {("q.db", "data.sqlite3"): main}
    if wal is not None:
        files[("q.db", "data.sqlite3-wal")] = wal
    bundle = FakeBundle(files)
    ctx = ParseContext(bundle, bundle.source("data.sqlite3"), {})
    out = []
    for item in sqlite_history.earlier_snapshots(ctx):
        if isinstance(item, Snapshot):
            rows = item.connection.execute("SELECT value FROM conversations").fetchall()
            out.append((item.commit, item.commits, [row[0] for row in rows], item.locator("sqlite:conversations:1")))
        else:
            out.append(item.text)
    return out


def test_each_earlier_commit_opens_as_that_version_and_the_last_is_left_to_the_live_reader(tmp_path):
    main, wal = wal_database(tmp_path, ["one turn", "two turns", "three turns"])
    assert snapshots(main, wal) == [
        (0, 3, [], "wal:0/sqlite:conversations:1"),  # the main file alone: the table, no row yet
        (1, 3, ["one turn"], "wal:1/sqlite:conversations:1"),
        (2, 3, ["two turns"], "wal:2/sqlite:conversations:1"),
    ]


def test_the_main_file_before_its_wal_holds_the_version_the_first_commit_replaced(tmp_path):
    main, wal = wal_database(tmp_path, ["rewritten"], checkpointed="the original conversation")
    assert snapshots(main, wal) == [(0, 1, ["the original conversation"], "wal:0/sqlite:conversations:1")]
    assert Snapshot(0, 1, None).described.startswith("the database file before its -wal")  # type: ignore[arg-type]
    assert Snapshot(2, 5, None).described == "-wal commit 2 of 5"  # type: ignore[arg-type]


def test_no_wal_gives_nothing_and_a_main_file_with_no_table_gives_no_version(tmp_path):
    main, wal = wal_database(tmp_path, ["only"])
    assert snapshots(main, None) == []
    path = tmp_path / "wal-only.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)")
    connection.execute("INSERT INTO conversations VALUES ('/p', 'only')")
    connection.commit()
    main_only, wal_only = path.read_bytes(), (tmp_path / "wal-only.db-wal").read_bytes()
    connection.close()
    found = snapshots(main_only, wal_only)  # written through the -wal only: the main file holds nothing
    assert found and all(item[0] != 0 for item in found)


def test_frames_of_an_older_generation_are_not_read_as_commits(tmp_path):
    main, wal = wal_database(tmp_path, ["a", "b", "c"])
    damaged = bytearray(wal)
    page_size = struct.unpack_from(">I", wal, 8)[0]
    frames = (len(wal) - 32) // (24 + page_size)
    last = 32 + (frames - 1) * (24 + page_size)
    damaged[last + 8:last + 12] = b"\0\0\0\0"  # the last frame's salt is not the header's
    ends = sqlite_history.commit_ends(_write(tmp_path, bytes(damaged)))
    assert len(ends) == len(sqlite_history.commit_ends(_write(tmp_path, wal))) - 1


def _write(tmp_path, data: bytes) -> str:
    path = tmp_path / "copy-wal"
    path.write_bytes(data)
    return str(path)


def test_past_the_snapshot_limit_commits_are_spread_and_a_parser_row_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_history, "MAX_SNAPSHOTS", 3)
    main, wal = wal_database(tmp_path, [f"v{n}" for n in range(1, 9)])
    out = snapshots(main, wal)
    assert out[0].startswith("parser: WAL commits to reopen over the limit (3 of 7 earlier commits)")
    assert [item[0] for item in out[1:]] == [0, 1, 4, 7]  # the main file alone, then the commits spread
    assert [item[2] for item in out[1:]] == [[], ["v1"], ["v4"], ["v7"]]


def test_past_the_byte_budget_the_rest_is_named(tmp_path, monkeypatch):
    main, wal = wal_database(tmp_path, ["a", "b", "c", "d"])
    monkeypatch.setattr(sqlite_history, "MAX_COPY_BYTES", 2 * len(main) + 32 + 2 * (24 + 4096) + 10)
    out = snapshots(main, wal)
    assert out[0][2] == [] and out[1][2] == ["a"]
    assert out[-1].startswith("parser: bytes copied to reopen WAL commits over the limit")


def test_chosen_keeps_first_and_last(tmp_path):
    assert sqlite_history.chosen(5, 10) == [1, 2, 3, 4, 5]
    assert sqlite_history.chosen(100, 5) == [1, 26, 51, 75, 100]  # round half to even: 1 + round(49.5)
    assert sqlite_history.chosen(10, 1) == [10]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=5000))
def test_hostile_database_and_wal_bytes_never_raise(main, wal):
    header = struct.pack(">IIIIII", 0x377F0682, 3007000, 512, 0, 1, 2) + b"\0" * 8
    for candidate in (wal, header + wal):
        for item in snapshots(main, candidate):
            assert isinstance(item, (tuple, str))
