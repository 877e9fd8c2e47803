"""Fixtures are what their sources say, and the demo home collects cleanly."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from aitrail.collector.verify import verify
from tests.conftest import FIXTURES, all_decompressed, bundle_records
from tests.fixture_sqlite import build, dump, split_wal, sql_text, targets, wal_path


def sql_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def test_every_sql_source_sits_in_its_case_and_builds_a_database_of_that_case():
    assert not (FIXTURES / "sql").exists(), "SQL sources live in fixtures/<agent>/<case>/sql/"
    found = targets()
    assert len(found) >= 4
    for sql, database in found.items():
        case = sql.parent.parent
        assert sql.parent.name == "sql" and case in database.parents, f"{sql_id(sql)} builds {sql_id(database)}"
        stem = sql.name.removesuffix(".sql")
        # <database>.sql; two databases of one name in a case (a VS Code global and workspace state.vscdb)
        # are told apart by a prefix: <folder>.<database>.sql
        assert stem == database.name or stem.endswith("." + database.name), "the SQL file is named after its database"


@pytest.mark.parametrize("sql, database", sorted(targets().items()), ids=sql_id)
def test_committed_sqlite_matches_its_sql(sql: Path, database: Path):
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "fresh.db"
        build(sql, fresh)
        assert dump(database) == dump(fresh), "rebuild with: python -m tests.fixture_sqlite"


WAL_SQL = """-- target: scratch
CREATE TABLE message(id INTEGER PRIMARY KEY, text TEXT);
INSERT INTO message VALUES (1, 'checkpointed');
-- wal
INSERT INTO message VALUES (2, 'only in the wal');
UPDATE message SET text = 'edited in the wal' WHERE id = 1;
"""


def test_a_wal_fixture_keeps_its_newest_rows_in_the_wal_with_the_same_bytes_every_build(tmp_path):
    sql = tmp_path / "chat.db.sql"
    sql.write_text(WAL_SQL)
    built = []
    for attempt in ("first", "second"):
        database = tmp_path / attempt / "chat.db"
        build(sql, database)
        assert not database.with_name("chat.db-shm").exists()
        built.append((database.read_bytes(), wal_path(database).read_bytes()))
        assert "INSERT INTO \"message\" VALUES(2,'only in the wal');" in dump(database)
        assert "INSERT INTO \"message\" VALUES(1,'edited in the wal');" in dump(database)
        assert dump(database, with_wal=False)[2] == "INSERT INTO \"message\" VALUES(1,'checkpointed');"
        assert len(dump(database, with_wal=False)) == len(dump(database)) - 1
    assert built[0] == built[1], "fixed salts: the same SQL gives the same database and -wal bytes"


WAL_SOURCES = sorted(sql for sql in targets() if split_wal(sql_text(sql))[1] is not None)


@pytest.mark.parametrize("sql", WAL_SOURCES, ids=sql_id)
def test_a_committed_wal_fixture_has_its_wal_and_the_database_file_alone_holds_only_the_part_above(sql, tmp_path):
    database = targets()[sql]
    assert wal_path(database).is_file(), "commit the -wal beside the database"
    base_only = tmp_path / "base.sql"
    base_only.write_text(split_wal(sql_text(sql))[0])
    build(base_only, tmp_path / "base.db")
    assert dump(database, with_wal=False) == dump(tmp_path / "base.db")
    assert dump(database) != dump(database, with_wal=False), "the -wal part must change what a reader sees"


def test_demo_home_collects_verifies_and_accounts(cli, tmp_path):
    out = tmp_path / "demo.tar.zst"
    result = cli("collect", "--home", FIXTURES / "demo-home", "-o", out, "--quiet", "--case", "DEMO")
    assert result.exit_code == 0, result.output + result.stderr
    assert verify(str(out)).ok
    records = bundle_records(out)
    by_agent: dict[str, int] = {}
    for record in records:
        if record["outcome"] == "collected":
            by_agent[record["agent"]] = by_agent.get(record["agent"], 0) + 1
    assert {"pearai", "claude-code", "codex", "gemini-cli"} <= set(by_agent)
    never = {record["path"] for record in records if record["outcome"] == "never_collect"}
    assert {".pearai/config.json", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json"} <= never
    payload = all_decompressed(out)
    for secret in (b"sk-DEMO-FAKE-KEY", b"sk-ant-oat01-DEMO-FAKE", b"sk-DEMO-FAKE-codex", b"ya29.DEMO-FAKE"):
        assert secret not in payload
    assert not [record for record in records if record["path"].startswith(("projects/", "Documents/", ".cache/"))]


def fixture_homes() -> list[Path]:
    """The demo home and every fixtures/<agent>/<case>/home tree."""
    return [FIXTURES / "demo-home", *sorted(FIXTURES.glob("*/*/home"))]


@pytest.mark.parametrize("home", fixture_homes(), ids=lambda path: str(path.relative_to(FIXTURES)))
def test_accounting_holds_on_every_fixture_home(cli, tmp_path, home):
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", out, "--quiet")
    assert result.exit_code == 0, result.stderr
    records = bundle_records(out)
    classes = {"collected": 0, "skipped": 0, "failed": 0}
    for record in records:
        classes[record["class"]] += 1
    assert sum(classes.values()) == len(records) > 0
    assert classes["failed"] == 0
    assert verify(str(out)).ok
