"""SQLite fixtures are committed as databases and as the SQL that builds them.

The SQL sits with the case it serves: ``fixtures/<agent>/<case>/sql/<name>.sql``
(the demo home's in ``fixtures/demo-home/sql/``). Each file starts with a line
``-- target: <path under fixtures/>`` naming the database it builds. ``python -m tests.fixture_sqlite``
rebuilds every one; tests/test_fixtures.py checks that each committed
database holds exactly what its SQL says.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


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


def build(sql: Path, database: Path) -> None:
    """Build ``database`` afresh from ``sql`` (VACUUMed, so the bytes depend only on the SQL)."""
    database.parent.mkdir(parents=True, exist_ok=True)
    if database.exists():
        database.unlink()
    connection = sqlite3.connect(database)
    connection.executescript(sql.read_text())
    connection.commit()
    connection.execute("VACUUM")
    connection.close()


def dump(database: Path) -> list[str]:
    """The database's content as SQL statements, plus its user_version."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return list(connection.iterdump()) + [f"user_version={connection.execute('PRAGMA user_version').fetchone()[0]}"]
    finally:
        connection.close()


if __name__ == "__main__":
    for sql, database in targets().items():
        build(sql, database)
        print(f"built {database.relative_to(FIXTURES)}", file=sys.stderr)
