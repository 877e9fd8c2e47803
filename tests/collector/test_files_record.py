"""The fast renderers write exactly what json.dumps writes: files.jsonl lines and the bundle index."""

from __future__ import annotations

import base64
import errno
import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.bundle import layout
from aitrail.collector.bundle import records as oc
from aitrail.collector.bundle.layout import IndexEntry
from aitrail.collector.bundle.tagfiles import files_jsonl
from aitrail.collector.bundle.writer import index_json
from aitrail.collector.catalog.schema import Store
from aitrail.collector.finding.plan import Location, Target
from aitrail.collector.fs.meta import Meta

# Text with what JSON must escape: quotes, backslashes, control characters, non-ASCII.
TEXT = st.text(alphabet=st.sampled_from(['a', 'Z', '/', '"', '\\', '\n', '\t', '\x00', '\x1f', '\x7f', 'é', '日',
                                         '\u2028', ' ', '^', '%']), max_size=12)
NAME = st.binary(min_size=1, max_size=8).filter(lambda raw: b"/" not in raw and raw not in (b".", b".."))
INT = st.one_of(st.integers(min_value=0, max_value=2**64), st.integers(min_value=-(2**63), max_value=-1))


def metas():
    return st.builds(lambda values, btime: Meta.of((*values, btime)), st.tuples(*[INT] * 10),
                     st.one_of(st.none(), INT))


@st.composite
def targets(draw) -> Target:
    store = Store(id=draw(TEXT), root="~", include=("x",), role=draw(TEXT), format=draw(st.sampled_from(["jsonl",
                  "sqlite", "json"])), description="", parser=draw(st.one_of(st.none(), TEXT)),
                  origin=draw(st.sampled_from(["primary", "secondary"])))
    location = Location(label=draw(TEXT), base=draw(st.sampled_from(["/home/alice", "/", "/h\u00e9/b\"q", "",
                                                                     "/home/bob/", "rel/x"])),
                        kind="home")
    return Target(location=location, agent=draw(TEXT), store=store.id, segments=("x",), glob=draw(TEXT), excludes=(),
                  refines=(), never=False, store_def=store)


@st.composite
def entries(draw, target: Target) -> oc.Entry:
    entry = oc.Entry(target, tuple(name.decode("utf-8", "surrogateescape") for name in draw(st.lists(NAME, min_size=1,
                     max_size=3))), draw(st.sampled_from(["file", "symlink", "fifo", "dir"])),
                     draw(st.one_of(st.none(), metas())))
    entry.outcome = draw(st.sampled_from(sorted(oc.OUTCOME_CLASS)))
    entry.member = draw(st.one_of(st.none(), TEXT))
    entry.sha256 = draw(st.one_of(st.none(), st.just("ab" * 32)))
    entry.stored_size = draw(st.one_of(st.none(), INT))
    entry.reason = draw(TEXT)
    entry.error = draw(st.sampled_from([None, OSError(errno.ENOENT, "gone"), OSError("no errno"),
                                        FileNotFoundError(errno.ENOENT, "vanished during the walk")]))
    entry.after = draw(st.one_of(st.none(), st.just(entry.meta), metas()))
    entry.atime_protection = draw(st.sampled_from([None, "o_noatime", "none"]))
    entry.attempts = draw(st.integers(min_value=0, max_value=3))
    entry.notes = draw(st.lists(TEXT, max_size=3))
    entry.link_target = draw(st.one_of(st.none(), st.binary(max_size=8)))
    entry.companion_of = draw(st.one_of(st.none(), TEXT))
    entry.duplicate_of = draw(st.one_of(st.none(), TEXT))
    hole = st.lists(st.integers(min_value=0, max_value=1 << 62), min_size=2, max_size=2)
    entry.holes = draw(st.one_of(st.none(), st.lists(hole, max_size=3)))
    return entry


def reference(entries_: list[oc.Entry]) -> bytes:
    return b"".join((json.dumps(entry.as_record(), sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
                    for entry in entries_)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_rendered_lines_equal_json_dumps_of_the_record(data):
    shared = data.draw(targets())  # several entries of one target: the renderer's cache is exercised
    batch = data.draw(st.lists(entries(shared), min_size=1, max_size=4))
    batch += data.draw(st.lists(targets().flatmap(entries), max_size=2))
    assert files_jsonl(batch) == reference(batch)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_paths_and_base64_are_the_standard_library_s(data):
    entry = data.draw(targets().flatmap(entries))
    assert entry.raw_relpath == b"/".join(os.fsencode(part) for part in entry.parts)
    assert entry.raw_abspath == os.path.join(os.fsencode(entry.target.location.base), entry.raw_relpath)
    assert oc.b64(entry.raw_abspath) == base64.b64encode(entry.raw_abspath).decode("ascii")


def test_no_entries_is_an_empty_member():
    assert files_jsonl([]) == b""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(IndexEntry, name=TEXT, type=st.sampled_from(["file", "symlink"]), frame_offset=INT,
                          frame_length=INT, member_offset=INT, header_length=INT, size=INT,
                          sha256=st.one_of(st.none(), st.just("cd" * 32), TEXT)), max_size=5),
       st.fixed_dictionaries({"frame_offset": INT, "frame_length": INT}))
def test_index_json_equals_json_dumps_of_the_index(members, end):
    index = {"format": layout.FORMAT_NAME, "version": layout.FORMAT_VERSION,
             "members": [member.as_record() for member in members], "end": end}
    assert index_json(members, end) == json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
