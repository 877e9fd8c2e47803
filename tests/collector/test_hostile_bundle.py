"""Issue 8, part B: a hostile bundle's structure and metadata give named problems, in bounded memory.

Every attack is made the way an attacker would: the metadata member is
changed and every digest re-hashed (manifests, index, trailer), so that only
the schema and limit checks can catch it. verify and analyze are both run,
in-process and through the CLI; neither may print a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector.bundle import layout
from aitrail.collector.cli import main
from tests.collector.bundle_tools import drop_members, read_index, replace_index, rewrite, rewrite_json_index
from tests.collector.test_robustness import run_measured
from tests.conftest import FIXTURES, bundle_json, bundle_records, collect_fixture_home

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A small real bundle with parsed stores (PearAI fixture home, the installed catalog)."""
    return collect_fixture_home(tmp_path_factory, FIXTURES / "pearai" / "agent-task" / "home", "hostile")


def run(*args) -> tuple[int, str]:
    """The CLI in-process; exceptions are caught so that a traceback fails the assertion, not the runner."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args[0]} raised {result.exception!r}") from result.exception
    return result.exit_code, result.output + result.stderr


def both_refuse(path: Path, tmp_path: Path, expected: str) -> None:
    """Verify and analyze (with and without --force) name ``expected`` and exit 1; analyze --force never crashes."""
    code, output = run("verify", path)
    assert code == 1 and expected in output and "Traceback" not in output, output
    code, output = run("analyze", path, "-o", tmp_path / "t.csv", "--quiet")
    assert code == 1 and expected in output and "Traceback" not in output, output
    assert not (tmp_path / "t.csv").exists()
    code, output = run("analyze", path, "-o", tmp_path / "forced.csv", "--quiet", "--force")
    assert code in (0, 1) and "Traceback" not in output, output


def with_record(bundle: Path, tmp_path: Path, change) -> Path:
    """A copy whose first collected files.jsonl record is changed by ``change(record)``, every digest re-hashed."""
    records = bundle_records(bundle)
    target = next(record for record in records if record["outcome"] == "collected")
    change(target)
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    out = tmp_path / "changed.tar.zst"
    rewrite(bundle, out, {layout.FILES_JSONL: data})
    return out


def with_collection(bundle: Path, tmp_path: Path, value) -> Path:
    out = tmp_path / "changed.tar.zst"
    rewrite(bundle, out, {layout.COLLECTION_JSON: json.dumps(value).encode()})
    return out


# -- not a bundle, data after the end --------------------------------------------------------


def test_a_file_that_is_not_a_bundle_is_said_to_be_so(tmp_path):
    path = tmp_path / "notes.tar.zst"
    path.write_bytes(b"just some text, not a bundle at all\n" * 10)
    both_refuse(path, tmp_path, "not an aitrail bundle")


def test_data_after_the_trailer_is_named(bundle, tmp_path):
    path = tmp_path / "appended.tar.zst"
    shutil.copyfile(bundle, path)
    with open(path, "ab") as handle:
        handle.write(b"garbage" * 100)
    both_refuse(path, tmp_path, "data after the end of the bundle: 700 byte(s)")


def test_a_cut_bundle_is_still_cut_short(bundle, tmp_path):
    path = tmp_path / "cut.tar.zst"
    path.write_bytes(bundle.read_bytes()[:-100])
    both_refuse(path, tmp_path, "cut short")


# -- the index --------------------------------------------------------------------------------


@pytest.mark.parametrize("change, expected", [
    (lambda index: index["members"], "not an aitrail bundle index"),  # the index is a JSON list
    (lambda index: index["members"][0].update(name=7), "unsafe member name 7"),
    (lambda index: index["members"][0].update(frame_offset=-5), "not an offset or length"),
    (lambda index: index["members"][0].update(size=2**70), "not an offset or length"),
    (lambda index: index["members"][0].update(size=1.5), "cannot be decoded: unexpected number '1.5'"),
    (lambda index: index["members"][0].pop("header_length") and None, "'members' is not a list of member records"),
    (lambda index: index.update(members={"a": 1}), "'members' is not a list of member records"),
    (lambda index: index.update(end=[1, 2]), "'end' is not"),
    (lambda index: index["end"].update(frame_offset="0"), "'end' is not"),
    (lambda index: index["members"][1].update(frame_offset=10**15), "is not where the previous one ended"),
    (lambda index: index["members"][0].update(header_length=layout.TAR_HEADER_MAX + 512), "-byte tar header, over"),
])
def test_index_type_confusion_is_named(bundle, tmp_path, change, expected):
    path = tmp_path / "index.tar.zst"
    rewrite_json_index(bundle, path, change)
    both_refuse(path, tmp_path, expected)


def test_index_over_its_decompressed_limit_is_refused_in_bounded_memory(bundle, tmp_path):
    """An index padded with whitespace: verify used 6.3 GB and said VALID; now refused while decompressing."""
    index = json.dumps(read_index(bundle)).encode()
    path = tmp_path / "padded.tar.zst"
    replace_index(bundle, path, _padded(index, 4 * layout.INDEX_MAX), compressed=True)
    for command in ("verify", "analyze"):
        extra = ("-o", tmp_path / "t.csv", "--quiet") if command == "analyze" else ()
        code, rss_kib, output = run_measured(command, path, *extra)
        assert code == 1 and "index: decompresses to more than the limit" in output, output
        # holding up to INDEX_MAX is allowed (a legitimate index may be that large); holding it all is not
        assert rss_kib < 2 * layout.INDEX_MAX // 1024, f"{command} peak RSS {rss_kib / 1024:.0f} MiB"


def _padded(index: bytes, padding: int) -> bytes:
    """Zstd of the index JSON with ``padding`` spaces before its last brace, compressed without holding them."""
    import io

    import zstandard

    block = b" " * (16 * MIB)
    blocks = padding // len(block)
    out = io.BytesIO()
    # size=: the frame header records the content size, as a one-shot compress() would write it
    with zstandard.ZstdCompressor(level=3).stream_writer(out, size=len(index) + blocks * len(block),
                                                         closefd=False) as writer:
        writer.write(index[:-1])
        for _ in range(blocks):
            writer.write(block)
        writer.write(b"}")
    return out.getvalue()


def test_index_with_too_many_values_is_refused_before_decoding(bundle, tmp_path, monkeypatch):
    path = tmp_path / "many.tar.zst"
    rewrite_json_index(bundle, path, lambda index: index.update(pad=[[]] * 200))
    monkeypatch.setattr(layout, "MAX_MEMBERS", 10)
    code, output = run("verify", path)
    assert code == 1 and "JSON values, more than 10 members can have" in output


def test_compressed_index_over_its_limit_is_refused(bundle, tmp_path, monkeypatch):
    monkeypatch.setattr(layout, "INDEX_COMPRESSED_MAX", 100)
    code, output = run("verify", bundle)
    assert code == 1 and "compressed, over the limit of 100" in output


# -- files.jsonl -----------------------------------------------------------------------------


@pytest.mark.parametrize("change, expected", [
    (lambda record: record.update(stat=[1, 2]), "stat: a list, not an object"),
    (lambda record: record["stat"].update(mode="rwxr-xr-x"), "is not an octal string"),
    (lambda record: record["stat"].pop("mtime_ns"), "mtime_ns is missing"),
    (lambda record: record["stat"].update(mtime_ns="1"), "mtime_ns '1' is not an integer"),
    (lambda record: record.update(member=12), "member 12 is not a member name"),
    (lambda record: record.update(member="../../etc/passwd"), "is not a member name"),
    (lambda record: record.update(outcome="stolen"), "unknown outcome 'stolen'"),
    (lambda record: record.update(agent=None), "agent is not a string"),
    (lambda record: record.update(stored_size="big"), "stored_size 'big' is not a size"),
    (lambda record: record.update(link_target_b64="@@@"), "link_target_b64 is not base64"),
])
def test_files_jsonl_type_confusion_is_named(bundle, tmp_path, change, expected):
    both_refuse(with_record(bundle, tmp_path, change), tmp_path, expected)


def test_files_jsonl_that_is_not_json_lines_is_named(bundle, tmp_path):
    out = tmp_path / "changed.tar.zst"
    rewrite(bundle, out, {layout.FILES_JSONL: b'[' * 100_000 + b"\n" + b"[1, 2]\n"})
    both_refuse(out, tmp_path, "line 1 is not JSON")
    code, output = run("verify", out)
    assert "line 2 is not a valid record (a list, not an object)" in output


def test_files_jsonl_line_over_its_limit_is_named(bundle, tmp_path):
    records = bundle_records(bundle)
    records[0]["notes"] = ["x" * (layout.FILES_JSONL_LINE_MAX + 10)]
    out = tmp_path / "changed.tar.zst"
    rewrite(bundle, out, {layout.FILES_JSONL: "".join(json.dumps(r) + "\n" for r in records).encode()})
    both_refuse(out, tmp_path, f"line 1 is longer than {layout.FILES_JSONL_LINE_MAX} bytes")


def test_files_jsonl_is_streamed_in_bounded_memory(bundle, tmp_path):
    """A 300 MB files.jsonl (its own frame) is read line by line by verify and analyze: memory stays small."""
    records = bundle_records(bundle)
    filler = json.dumps({"agent": "pearai", "store": "pearai.x", "outcome": "excluded", "notes": ["y" * 3000]}) + "\n"
    data = "".join(json.dumps(r) + "\n" for r in records).encode() + filler.encode() * 100_000
    out = tmp_path / "big.tar.zst"
    rewrite(bundle, out, {layout.FILES_JSONL: data})
    del data
    code, rss_kib, output = run_measured("verify", out, "--quiet")
    assert code == 1 and "counts differ" in output, output  # the filler is not in collection.json's counts
    assert rss_kib < 150 * 1024, f"verify peak RSS {rss_kib / 1024:.0f} MiB"
    code, rss_kib, output = run_measured("analyze", out, "-o", tmp_path / "t.csv", "--quiet", "--force", "--jobs", "1")
    assert code == 0, output
    assert rss_kib < 150 * 1024, f"analyze peak RSS {rss_kib / 1024:.0f} MiB"


# -- collection.json and the other tag files ------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    ([1, 2, 3], "collection.json: a list, not an object"),
    ({"counts": [1, 2]}, "counts is not an object of integers"),
    ({"counts": {"matched": "1", "collected": 1, "skipped": 0, "failed": 0}}, "counts is not an object of integers"),
    ({"counts": {"matched": 1, "collected": 1, "skipped": 0, "failed": 0}, "signer": "me"},
     "signer is neither null nor an object"),
])
def test_collection_json_type_confusion_is_named(bundle, tmp_path, value, expected):
    both_refuse(with_collection(bundle, tmp_path, value), tmp_path, expected)


def test_collection_json_nested_too_deep_is_named(bundle, tmp_path):
    out = tmp_path / "deep.tar.zst"
    rewrite(bundle, out, {layout.COLLECTION_JSON: b"[" * 100_000 + b"]" * 100_000})
    both_refuse(out, tmp_path, "collection.json: not valid JSON")


def test_collection_json_over_its_limit_is_named(bundle, tmp_path):
    value = bundle_json(bundle, layout.COLLECTION_JSON)
    value["padding"] = "z" * layout.COLLECTION_JSON_MAX
    both_refuse(with_collection(bundle, tmp_path, value), tmp_path,
                f"over the limit of {layout.COLLECTION_JSON_MAX}")


def test_catalog_member_over_its_limit_is_named(bundle, tmp_path):
    out = tmp_path / "catalog.tar.zst"
    rewrite(bundle, out, {"aitrail/catalog/pearai.yaml": b"#" * (layout.CATALOG_MEMBER_MAX + 1)})
    both_refuse(out, tmp_path, f"aitrail/catalog/pearai.yaml: {layout.CATALOG_MEMBER_MAX + 1} bytes, over the limit")


def test_tag_manifest_line_mismatch_is_caught_by_the_structural_check(bundle, tmp_path):
    """collection.json changed and only the index re-hashed (not the tag manifest): refused before any parser."""
    out = tmp_path / "changed.tar.zst"
    value = bundle_json(bundle, layout.COLLECTION_JSON)
    value["host"] = {"hostname": "elsewhere"}
    rewrite(bundle, out, {layout.COLLECTION_JSON: json.dumps(value).encode()}, recompute_manifests=False)
    both_refuse(out, tmp_path, "aitrail/collection.json: SHA-256 does not match tagmanifest-sha256.txt")


def test_unknown_member_and_bagit_text_are_named(bundle, tmp_path):
    out = tmp_path / "bagit.tar.zst"
    rewrite(bundle, out, {layout.BAGIT_TXT: b"BagIt-Version: 0.9\n"})
    both_refuse(out, tmp_path, "bagit.txt: not the BagIt 1.0 declaration")


def test_a_stripped_metadata_member_is_named(bundle, tmp_path):
    out = tmp_path / "stripped.tar.zst"
    drop_members(bundle, out, {layout.COLLECTION_JSON})
    both_refuse(out, tmp_path, "aitrail/collection.json: missing from the bundle")


def test_every_limit_is_documented():
    from tests.conftest import REPO

    text = (REPO / "docs" / "bundle-format.md").read_text()
    limits = text[text.index("## 7. Limits"):]
    for name in ("MAX_MEMBERS", "INDEX_COMPRESSED_MAX", "INDEX_MAX", "INDEX_VALUES_PER_MEMBER", "FILES_JSONL_MAX",
                 "FILES_JSONL_LINE_MAX", "FILES_JSONL_RECORDS_MAX", "COLLECTION_JSON_MAX", "CATALOG_MEMBER_MAX",
                 "CATALOG_MEMBERS_MAX", "MANIFEST_MAX", "TAG_MANIFEST_MAX", "MANIFEST_LINE_MAX", "BAG_INFO_MAX",
                 "BAGIT_TXT_MAX", "SIGNATURE_SIZE", "TAR_HEADER_MAX", "TAIL_WINDOW"):
        value = getattr(layout, name)
        shown = f"{value // MIB} MiB" if value >= MIB and value % MIB == 0 and name.endswith(("_MAX", "WINDOW")) \
            else f"{value:,}"
        if value % 1024 == 0 and value < MIB and name.endswith("_MAX") and value > 4096:
            shown = f"{value // 1024} KiB"
        assert f"`{name}`" in limits, f"{name} is not in docs/bundle-format.md section 7"
        row = next(line for line in limits.splitlines() if f"`{name}`" in line)
        assert shown in row or f"{value} bytes" in row, f"{name}: docs say {row!r}, code says {value}"



def test_a_plain_tar_zstd_archive_is_named_not_an_aitrail_bundle(bundle, tmp_path):
    import subprocess

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "notes.txt").write_text("hello\n")
    plain = tmp_path / "plain.tar.zst"
    subprocess.run(["tar", "--zstd", "-cf", str(plain), "-C", str(tmp_path), "x"], check=True)
    both_refuse(plain, tmp_path, "not an aitrail bundle: a zstd stream")
    cut = tmp_path / "cut-early.tar.zst"
    cut.write_bytes(bundle.read_bytes()[:2000])  # the first frame alone, cut: still a bundle cut short
    both_refuse(cut, tmp_path, "cut short")


@pytest.mark.parametrize("value", ["yesterday", "2026-13-45T99:00:00Z", 20261203, "2026-12-03T08:00:00Z\n"])
def test_a_resealed_collection_time_that_is_not_one_fails_verification(bundle, tmp_path, value):
    import json

    collection = bundle_json(bundle, layout.COLLECTION_JSON)
    collection["started_utc"] = value
    forged = tmp_path / "forged.tar.zst"
    rewrite(bundle, forged, {layout.COLLECTION_JSON: json.dumps(collection).encode()})
    both_refuse(forged, tmp_path, "started_utc")
