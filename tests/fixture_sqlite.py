"""SQLite fixtures are committed as databases and as the SQL that builds them.

The SQL sits with the case it serves: ``fixtures/<agent>/<case>/sql/<name>.sql``
(the demo home's in ``fixtures/demo-home/sql/``). Each file starts with a line
``-- target: <path under fixtures/>`` naming the database it builds. ``python -m tests.fixture_sqlite``
rebuilds every one; tests/test_fixtures.py checks that each committed
database holds exactly what its SQL says.

A line ``-- include: <path under fixtures/>`` is replaced by that file's SQL
(a schema that several cases of one agent share, kept once under
``fixtures/<agent>/schema/``, outside any case's ``sql/`` folder).

A line that is exactly ``-- wal`` splits a file in two. The statements above
it build the database file (VACUUMed, then switched to WAL mode); those below
are committed into ``<name>-wal`` and never checkpointed, the way a running
agent leaves its newest rows. SQLite draws the WAL salts at random, so the
builder rewrites them to fixed values and recomputes every frame checksum:
the committed bytes depend only on the SQL (and the SQLite version). No -shm
is committed; a reader rebuilds the WAL index from the -wal.
"""

from __future__ import annotations

import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WAL_MARKER = "-- wal"
WAL_HEADER = 32
FRAME_HEADER = 24
FIXED_SALTS = (0x61697472, 0x61696C21)  # "aitr", "ail!"


def sources() -> list[Path]:
    """Every fixture SQL file: each case's ``sql/`` folder and the demo home's."""
    return sorted([*FIXTURES.glob("*/*/sql/*.sql"), *(FIXTURES / "demo-home" / "sql").glob("*.sql")])


def targets() -> dict[Path, Path]:
    """SQL source -> the database it builds, from each file's ``-- target:`` line."""
    found = {}
    for sql in sources():
        first = sql.read_text().split("\n", 1)[0]
        if not first.startswith("-- target: "):
            raise ValueError(f"{sql.name}: the first line must be '-- target: <path under fixtures/>'")
        found[sql] = FIXTURES / first.removeprefix("-- target: ").strip()
    return found


def split_wal(text: str) -> tuple[str, str | None]:
    """The SQL of the database file and, after a ``-- wal`` line, the SQL left in its -wal (or None)."""
    lines = text.split("\n")
    if WAL_MARKER not in lines:
        return text, None
    cut = lines.index(WAL_MARKER)
    return "\n".join(lines[:cut]), "\n".join(lines[cut + 1:])


def wal_path(database: Path) -> Path:
    """The -wal file beside ``database``."""
    return database.with_name(database.name + "-wal")


INCLUDE = "-- include: "


def sql_text(sql: Path) -> str:
    """The SQL of a fixture file with its ``-- include:`` lines replaced by the files they name."""
    return "\n".join((FIXTURES / line.removeprefix(INCLUDE).strip()).read_text().rstrip("\n")
                     if line.startswith(INCLUDE) else line for line in sql.read_text().split("\n"))


def build(sql: Path, database: Path) -> None:
    """Build ``database`` (and its -wal when the SQL has a ``-- wal`` part) afresh from ``sql``."""
    base, in_wal = split_wal(sql_text(sql))
    database.parent.mkdir(parents=True, exist_ok=True)
    for stale in (database, wal_path(database), database.with_name(database.name + "-shm")):
        stale.unlink(missing_ok=True)
    connection = sqlite3.connect(database)
    connection.executescript(base)
    connection.commit()
    connection.execute("VACUUM")
    if in_wal is None:
        connection.close()
        return
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.executescript(in_wal)
    connection.commit()
    # Closing the last connection checkpoints the WAL into the file and deletes it:
    # take both files while the connection is still open.
    main_bytes, wal_bytes = database.read_bytes(), wal_path(database).read_bytes()
    connection.close()
    database.write_bytes(main_bytes)
    wal_path(database).write_bytes(fixed_salts(wal_bytes))
    database.with_name(database.name + "-shm").unlink(missing_ok=True)


def wal_checksum(data: bytes, big_endian: bool, seed: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """SQLite's WAL checksum over ``data`` (a multiple of 8 bytes), continuing from ``seed``."""
    s0, s1 = seed
    words = struct.unpack((">" if big_endian else "<") + f"{len(data) // 4}I", data)
    for x0, x1 in zip(words[0::2], words[1::2], strict=True):
        s0 = (s0 + x0 + s1) & 0xFFFFFFFF
        s1 = (s1 + x1 + s0) & 0xFFFFFFFF
    return s0, s1


def fixed_salts(wal: bytes) -> bytes:
    """``wal`` with its header salts set to FIXED_SALTS and every checksum recomputed to match."""
    magic, version, page_size, sequence = struct.unpack(">4I", wal[:16])
    big_endian = bool(magic & 1)
    header = struct.pack(">6I", magic, version, page_size, sequence, *FIXED_SALTS)
    checksum = wal_checksum(header, big_endian)
    out = bytearray(header + struct.pack(">2I", *checksum))
    offset = WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal):
        page_number, commit_size = struct.unpack(">2I", wal[offset:offset + 8])
        page = wal[offset + FRAME_HEADER:offset + FRAME_HEADER + page_size]
        checksum = wal_checksum(wal[offset:offset + 8] + page, big_endian, checksum)
        out += struct.pack(">6I", page_number, commit_size, *FIXED_SALTS, *checksum) + page
        offset += FRAME_HEADER + page_size
    return bytes(out)


def sqlite_bytes(sql: str) -> bytes:
    """The bytes of a database built from ``sql`` in a scratch file (tests feed them to parsers)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "db.sqlite"
        connection = sqlite3.connect(path)
        connection.executescript(sql)
        connection.commit()
        connection.close()
        return path.read_bytes()


def rowids_without_wal(database: Path, table: str) -> list[int]:
    """The ids of ``table`` in the database file alone (its -wal left out): what a WAL-only row is missing from."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / database.name
        copy.write_bytes(database.read_bytes())
        connection = sqlite3.connect(copy)
        try:
            return [rowid for (rowid,) in connection.execute(f"SELECT id FROM {table} ORDER BY id")]  # noqa: S608
        finally:
            connection.close()


def dump(database: Path, with_wal: bool = True) -> list[str]:
    """The database's content as SQL statements, plus its user_version.

    It is read from a scratch copy (with its -wal, unless ``with_wal`` is
    false), so reading never checkpoints or changes the committed files.
    """
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / database.name
        copy.write_bytes(database.read_bytes())
        if with_wal and wal_path(database).exists():
            wal_path(copy).write_bytes(wal_path(database).read_bytes())
        connection = sqlite3.connect(copy)
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            return list(connection.iterdump()) + [f"user_version={version}"]
        finally:
            connection.close()


if __name__ == "__main__":
    for sql, database in targets().items():
        build(sql, database)
        print(f"built {database.relative_to(FIXTURES)}", file=sys.stderr)
