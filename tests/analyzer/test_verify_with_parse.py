"""analyze verifies each frame once, many of them inside the parsing workers, and finds what verify finds.

The frames that hold members to parse are checked by the batch that parses
them (collector/verify/frames.py), the others by the coordinator; the
report is then completed in frame order. On intact and damaged bundles
alike, analyze --force must name exactly verify's problems, in verify's
order, whether it runs one process or a pool.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from aitrail.analyzer.engine import coordinator as run_module
from aitrail.analyzer.engine.coordinator import AnalyzeOptions, NotVerified, analyze
from aitrail.collector import verify as verify_module
from aitrail.collector.bundle import layout
from aitrail.collector.bundle import writer as writer_module
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.verify import frames as verify_frames
from aitrail.collector.verify import sha256_of_file, verify
from aitrail.collector.verify import structure as verify_structure
from tests.collector.bundle_tools import flip_byte, rewrite, rewrite_json_index
from tests.conftest import FIXTURES, bundle_records, collect_fixture_home


@pytest.fixture(scope="module", params=[1, 16 * 1024], ids=["frame-per-member", "packed-frames"])
def bundle(request, tmp_path_factory) -> Path:
    """The demo home's bundle, rewritten with small frames: many frames, spread over many batches."""
    collected = collect_fixture_home(tmp_path_factory, FIXTURES / "demo-home", "demo")
    out = tmp_path_factory.mktemp("frames") / "frames.tar.zst"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer_module, "FRAME_TARGET", request.param)
        rewrite(collected, out)
    with BundleReader(out) as reader:
        assert len(reader.frames()) > 8, "the demo bundle should span many frames"
    return out


def parsed_members(bundle: Path) -> list[str]:
    return [record["member"] for record in bundle_records(bundle)
            if record["outcome"] == "collected" and record.get("parser") and record["member"].startswith("data/")]


def a_parsed_member(bundle: Path, reader: BundleReader):
    names = parsed_members(bundle)
    return reader.member(names[len(names) // 2])


def index_entry_changed(bundle: Path, out: Path, change) -> None:
    """A copy whose index entry of a parsed member is changed by ``change(entry)`` (the index re-sealed)."""
    with BundleReader(bundle) as reader:
        name = a_parsed_member(bundle, reader).name

    def changed(index):
        change(next(member for member in index["members"] if member["name"] == name))
    rewrite_json_index(bundle, out, changed)


def digest_changed(bundle: Path, out: Path) -> None:
    index_entry_changed(bundle, out, lambda entry: entry.update(sha256="0" * 64))


def size_changed(bundle: Path, out: Path) -> None:
    index_entry_changed(bundle, out, lambda entry: entry.update(size=entry["size"] + 1))


def frame_damaged(bundle: Path, out: Path) -> None:
    out.write_bytes(bundle.read_bytes())
    with BundleReader(bundle) as reader:
        member = a_parsed_member(bundle, reader)
    flip_byte(out, member.frame_offset + member.frame_length // 2)


def stat_changed(bundle: Path, out: Path) -> None:
    """files.jsonl says another mtime for a parsed member: its tar header, read by a worker, disagrees."""
    records = bundle_records(bundle)
    name = parsed_members(bundle)[-1]
    for record in records:
        if record.get("member") == name:
            record["stat"]["mtime_ns"] += 1_000_000_000
    rewrite(bundle, out, {layout.FILES_JSONL: "".join(json.dumps(record) + "\n" for record in records).encode()})


DAMAGES = {"intact": None, "digest": digest_changed, "frame": frame_damaged, "size": size_changed,
           "stat": stat_changed}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_analyze_finds_exactly_what_verify_finds(bundle, tmp_path, damage, jobs):
    path = bundle
    if DAMAGES[damage] is not None:
        path = tmp_path / "damaged.tar.zst"
        DAMAGES[damage](bundle, path)
    expected = verify(str(path)).problems
    assert bool(expected) == (damage != "intact")
    result = analyze(AnalyzeOptions(bundle=str(path), output=str(tmp_path / "t.jsonl"), format="jsonl", jobs=jobs,
                                    force=True, progress=False))
    assert result.problems == expected
    assert result.verified == (damage == "intact")


@pytest.mark.parametrize("damage", ["digest", "stat"])
def test_a_damage_only_a_worker_sees_still_refuses_the_bundle(bundle, tmp_path, damage):
    path = tmp_path / "damaged.tar.zst"
    DAMAGES[damage](bundle, path)
    with pytest.raises(NotVerified) as refused:
        analyze(AnalyzeOptions(bundle=str(path), output=str(tmp_path / "t.csv"), jobs=2, progress=False))
    assert refused.value.problems == verify(str(path)).problems
    assert not (tmp_path / "t.csv").exists()


def test_each_frame_is_checked_once(bundle, tmp_path, monkeypatch):
    checked: list[int] = []
    original = verify_frames.check_frame

    def spy(frame, chunks):
        checked.append(frame[0].frame_offset)
        return original(frame, chunks)

    monkeypatch.setattr(verify_frames, "check_frame", spy)
    for jobs in (1, 2):  # in a pool, the workers' checks are made in other processes: fewer here, none twice
        checked.clear()
        analyze(AnalyzeOptions(bundle=str(bundle), output=str(tmp_path / f"t{jobs}.csv"), jobs=jobs, progress=False))
        with BundleReader(bundle) as reader:
            offsets = [frame[0].frame_offset for frame in reader.frames()]
        assert len(checked) == len(set(checked))
        assert (sorted(checked) == sorted(offsets)) if jobs == 1 else set(checked) < set(offsets)


def test_verification_decompresses_no_payload_frame_the_parse_decompressed(bundle, tmp_path, monkeypatch):
    """Each payload frame: as often as the parse alone decompresses it, or once if the parse never does."""
    original = BundleReader.iter_decompressed

    def decompressions(**extra) -> Counter:
        counts: Counter = Counter()

        def counted(self, member):
            counts[member.frame_offset] += 1
            return original(self, member)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(BundleReader, "iter_decompressed", counted)
            out = tmp_path / f"t{len(extra)}.csv"
            analyze(AnalyzeOptions(bundle=str(bundle), output=str(out), jobs=1, progress=False, **extra))
        return counts

    parse_only = decompressions(verified_sha256=sha256_of_file(str(bundle)))  # as after aitrail report's verify
    both = decompressions()
    with BundleReader(bundle) as reader:
        # (the test's rewrite packs metadata beside payload, which verify reads for its other checks too)
        payload = {frame[0].frame_offset for frame in reader.frames()
                   if all(member.name.startswith(layout.PAYLOAD_DIR) for member in frame)}
    assert parse_only.keys() & payload, "the parse reads payload frames"
    for offset in payload:
        assert both[offset] == (parse_only[offset] or 1), offset


def tag_file_changed(bundle: Path, out: Path) -> None:
    """bagit.txt no longer has the digest the tag manifest gives: a structural problem."""
    rewrite(bundle, out, {"bagit.txt": b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n# edited\n"},
            recompute_manifests=False)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("damage", ["intact", "tag file"])
def test_the_structure_is_checked_once_and_reported_as_verify_reports_it(bundle, tmp_path, monkeypatch, damage,
                                                                         jobs):
    path = bundle
    if damage != "intact":
        path = tmp_path / "damaged.tar.zst"
        tag_file_changed(bundle, path)
    expected = verify(str(path))
    assert bool(expected.problems) == (damage != "intact")
    calls = []
    original = verify_structure.check_structure

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(run_module, "check_structure", counted)
    monkeypatch.setattr(verify_module, "check_structure", counted)
    result = analyze(AnalyzeOptions(bundle=str(path), output=str(tmp_path / "t.jsonl"), format="jsonl", jobs=jobs,
                                    force=True, progress=False))
    assert len(calls) == 1, "checked before the parse, and that check is the verification's"
    assert result.problems == expected.problems
    assert result.signature == expected.signature
