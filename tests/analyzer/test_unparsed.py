"""analyzer/engine/unparsed.py: which collected files no parser reads, and why."""

from __future__ import annotations

from aitrail.analyzer.engine.unparsed import unparsed_sources
from aitrail.analyzer.view.bundle import Source


def source(path: str, store: str, parser: str | None, companion_of: str | None = None, agent: str = "a") -> Source:
    return Source(member=f"data/home/{path}", sha256="0" * 64, agent=agent, store=f"{agent}.{store}", parser=parser,
                  origin="primary", format="", location="home", path=path, size=10, mtime_ns=None,
                  companion_of=companion_of)


class Sources:
    def __init__(self, *sources: Source):
        self.sources = list(sources)

    def at(self, location: str, path: str, store: str | None = None) -> Source | None:
        return next((item for item in self.sources if item.location == location and item.path == path
                     and (store is None or item.store == store)), None)


def test_documentary_unknown_parser_and_orphan_companions_are_listed_and_read_files_are_not():
    bundle = Sources(
        source("db.sqlite", "db", "a.db.v1"), source("db.sqlite-wal", "db", "a.db.v1", companion_of="db.sqlite"),
        source("gone.sqlite-wal", "db", "a.db.v1", companion_of="gone.sqlite"),
        source("notes.md", "memory", None), source("new.json", "future", "a.future.v9"),
        source("other.md", "memory", None, agent="b"))
    listed = {item.path: item.reason for item in unparsed_sources(bundle, {"a.db.v1"})}
    assert set(listed) == {"gone.sqlite-wal", "notes.md", "new.json", "other.md"}
    assert listed["gone.sqlite-wal"].startswith("SQLite companion of gone.sqlite")
    assert listed["notes.md"].startswith("documentary store") and listed["new.json"] == "no parser yet for a.future.v9"
    assert {item.path for item in unparsed_sources(bundle, {"a.db.v1"}, ["b"])} == {"other.md"}


def test_a_companion_of_a_database_without_parser_is_listed():
    bundle = Sources(source("db.sqlite", "db", None), source("db.sqlite-wal", "db", None, companion_of="db.sqlite"))
    assert [item.path for item in unparsed_sources(bundle, set())] == ["db.sqlite", "db.sqlite-wal"]
