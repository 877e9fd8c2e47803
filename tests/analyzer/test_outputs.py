"""aitrail export bodyfile and aitrail extract, used the way an examiner would (docs/outputs.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.collector.bundle_tools import rewrite
from tests.conftest import FIXTURES, bundle_records, write_tree

PIPE_NAME = "notes|draft.jsonl"


def odd_home(tmp_path: Path) -> Path:
    """A Claude Code home with a link, a file whose name holds '|', and one whose name is not UTF-8."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "demo-home", home, symlinks=True)
    projects = home / ".claude" / "projects" / "-home-alice-src-acme-api"
    write_tree(projects, {PIPE_NAME: '{"type":"user"}\n'})
    os.symlink("4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl", projects / "latest.jsonl")
    (projects.parent / os.fsdecode(b"-home-alice-caf\xe9")).mkdir()
    (projects.parent / os.fsdecode(b"-home-alice-caf\xe9") / "s.jsonl").write_text('{"type":"user"}\n')
    os.utime(projects / PIPE_NAME, ns=(1_700_000_000_123_456_789, 1_700_000_100_987_654_321))
    return home


@pytest.fixture
def bundle(cli, tmp_path) -> Path:
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", odd_home(tmp_path), "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    return out


def test_the_bodyfile_has_eleven_fields_per_record_and_the_times_of_files_jsonl(cli, bundle, tmp_path):
    body = tmp_path / "body.txt"
    result = cli("export", "bodyfile", bundle, "-o", body)
    assert result.exit_code == 0, result.output
    lines = body.read_text().splitlines()
    with_stat = [record for record in bundle_records(bundle) if record.get("stat")]
    assert len(lines) == len(with_stat)
    for line, record in zip(lines, with_stat, strict=True):
        fields = line.split("|")
        assert len(fields) == 11, line
        stat = record["stat"]
        assert fields[2] == str(stat["ino"]) and fields[6] == str(stat["size"])
        assert fields[7:10] == [str(stat[key] // 10**9) for key in ("atime_ns", "mtime_ns", "ctime_ns")]
        assert fields[0] == "0"  # TSK's MD5 field: 0 by default, which plaso reads without a warning
    piped = next(line for line in lines if "notes" in line)
    assert "notes\\x7cdraft.jsonl" in piped and piped.split("|")[8] == "1700000100"
    assert any("caf\\xe9" in line for line in lines), "a byte that is not UTF-8 is written as \\xNN"
    assert any(line.split("|")[3].startswith("l") and " -> 4f9d2c1e" in line for line in lines)


@pytest.mark.skipif(shutil.which("mactime") is None, reason="sleuthkit's mactime is not installed")
def test_mactime_reads_the_bodyfile(cli, bundle, tmp_path):
    body = tmp_path / "body.txt"
    assert cli("export", "bodyfile", bundle, "-o", body).exit_code == 0
    out = subprocess.run(["mactime", "-b", str(body), "-z", "UTC", "-d"], capture_output=True, text=True, check=True)
    rows = [row.split(",") for row in out.stdout.splitlines()[1:]]
    piped = [row for row in rows if row[-1].strip('"').endswith("notes\\x7cdraft.jsonl")]
    # mactime prints one line per distinct time of the file: here atime, mtime, ctime (and birth)
    assert {row[0] for row in piped} >= {"Tue Nov 14 2023 22:13:20", "Tue Nov 14 2023 22:15:00"}


def test_extract_writes_every_collected_file_with_its_bytes_mode_and_times(cli, bundle, tmp_path):
    target = tmp_path / "out"
    result = cli("extract", bundle, target)
    assert result.exit_code == 0, result.output
    seen = set()
    for record in bundle_records(bundle):
        if record["source_path_b64"] in seen:
            continue  # one file matched by several stores (reading a link again would change its atime)
        seen.add(record["source_path_b64"])
        path = os.fsencode(target) + b"/" + base64.b64decode(record["source_path_b64"]).lstrip(b"/")
        if record["outcome"] not in ("collected", "changed_during_read", "symlink"):
            assert not os.path.lexists(path), f"{record['path']} ({record['outcome']}) must not be written"
            continue
        info = os.lstat(path)
        assert info.st_mtime_ns == record["stat"]["mtime_ns"] and info.st_atime_ns == record["stat"]["atime_ns"]
        if record["type"] == "symlink":
            assert os.readlink(path) == base64.b64decode(record["link_target_b64"])
            continue
        assert oct(info.st_mode & 0o777)[2:] == record["stat"]["mode"][-3:]
        with open(path, "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == record["sha256"]


def test_extract_refuses_an_existing_directory(cli, bundle, tmp_path):
    result = cli("extract", bundle, tmp_path)
    assert result.exit_code == 2 and "exists" in result.output + result.stderr


def test_extract_refuses_a_path_that_climbs_and_writes_the_rest(cli, bundle, tmp_path):
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        lines = reader.read_data("aitrail/files.jsonl").decode().splitlines()
    records = [json.loads(line) for line in lines]
    victim = next(record for record in records if record["outcome"] == "collected")
    victim["source_path_b64"] = base64.b64encode(b"/home/alice/../../../../tmp/aitrail-escape").decode()
    victim["source_path"] = "/home/alice/../../../../tmp/aitrail-escape"
    forged = tmp_path / "forged.tar.zst"
    files = "".join(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
    rewrite(bundle, forged, {"aitrail/files.jsonl": files.encode()})
    result = cli("extract", forged, tmp_path / "out")
    assert result.exit_code == 1, result.output + result.stderr
    assert "REFUSED  /home/alice/../../../../tmp/aitrail-escape: an empty, '.' or '..' component" in result.stderr
    assert not os.path.lexists("/tmp/aitrail-escape")
    written = sum(len(files) for _, _, files in os.walk(tmp_path / "out"))  # files and links
    kept = {record["source_path_b64"] for record in records if record["outcome"] in ("collected", "symlink")}
    assert written == len(kept) - 1


def test_extract_never_writes_through_a_link_already_in_the_tree(tmp_path):
    from aitrail.analyzer.outputs.extract import Extractor

    root = tmp_path / "out"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "home")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        extractor = Extractor(reader=None, root_fd=fd)
        with pytest.raises(OSError):
            extractor.directory([b"home", b"alice"])
    finally:
        os.close(fd)
    assert not list((tmp_path / "elsewhere").iterdir())


def test_export_and_extract_refuse_a_bundle_that_fails_verification(cli, bundle, tmp_path):
    from tests.collector.bundle_tools import flip_byte

    damaged = tmp_path / "damaged.tar.zst"
    shutil.copy(bundle, damaged)
    flip_byte(damaged, 200)
    assert cli("export", "bodyfile", damaged, "-o", tmp_path / "body").exit_code == 1
    assert cli("extract", damaged, tmp_path / "out").exit_code == 1
    assert not os.path.lexists(tmp_path / "body") and not os.path.lexists(tmp_path / "out")


def test_an_agent_name_a_forged_files_jsonl_gives_stays_in_its_column(cli, bundle, tmp_path):
    """files.jsonl names each record's agent: a comma or quote there once shifted the row's columns."""
    import csv
    import io

    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        records = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").decode().splitlines()]
    forged_agent = 'claude-code,"2020-01-01T00:00:00.000Z'
    for record in records:
        if record["outcome"] == "collected" and record.get("parser"):
            record["agent"] = forged_agent
    forged = tmp_path / "forged.tar.zst"
    files = "".join(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
    rewrite(bundle, forged, {"aitrail/files.jsonl": files.encode()})
    timeline = tmp_path / "timeline.csv"
    result = cli("analyze", forged, "-o", timeline, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    rows = list(csv.reader(io.StringIO(timeline.read_text(encoding="utf-8"), newline="")))
    assert {len(row) for row in rows} == {20}
    agents = {row[rows[0].index("agent")] for row in rows[1:]}
    assert forged_agent in agents


def forged_records(bundle: Path, tmp_path: Path, change) -> Path:
    """The bundle re-sealed (unsigned) after ``change(records)`` edited its files.jsonl."""
    from aitrail.collector.bundle.reader import BundleReader

    with BundleReader(bundle) as reader:
        records = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").decode().splitlines()]
    change(records)
    forged = tmp_path / "forged.tar.zst"
    files = "".join(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
    rewrite(bundle, forged, {"aitrail/files.jsonl": files.encode()})
    return forged


@pytest.mark.parametrize("field, value", [("atime_ns", [1]), ("mtime_ns", 10**30), ("mode", {"a": 1}),
                                          ("mtime_ns", "soon"), ("mode", "9" * 40)])
def test_extract_names_a_file_whose_resealed_stat_it_cannot_use_and_writes_the_rest(cli, bundle, tmp_path,
                                                                                     field, value):
    def change(records):
        victim = next(record for record in records if record["outcome"] == "collected")
        victim["stat"][field] = value

    forged = forged_records(bundle, tmp_path, change)
    assert f"stat: {field}" in cli("verify", forged).stderr  # verify names the field it cannot use
    result = cli("extract", forged, tmp_path / "out")
    assert result.exit_code == 1 and "Traceback" not in result.stderr + result.output
    assert "nothing written" in result.stderr


def test_extract_prints_a_forged_path_as_one_escaped_line(cli, bundle, tmp_path):
    def change(records):
        victim = next(record for record in records if record["outcome"] == "collected")
        path = b"/home/alice/../x\nOK  everything verified\x1b[2J"
        victim["source_path_b64"], victim["source_path"] = base64.b64encode(path).decode(), path.decode()

    result = cli("extract", forged_records(bundle, tmp_path, change), tmp_path / "out")
    refused = [line for line in result.stderr.splitlines() if line.startswith("REFUSED")]
    assert len(refused) == 1 and "\\n" in refused[0] and "\\x1b" in refused[0]
    assert not [line for line in result.stderr.splitlines() if line.startswith("OK  everything")]


def test_a_sparse_database_is_copied_and_extracted_sparse(cli, tmp_path):
    """A 1 GiB file of holes: the analyzer's working copy and extract's copy take the disk its data takes."""
    import sqlite3

    home = tmp_path / "home"
    database = home / ".codex" / "state_5.sqlite"
    database.parent.mkdir(parents=True)
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT)")
    connection.close()
    with open(database, "r+b") as handle:
        handle.truncate(1 << 30)  # a hole of nearly 1 GiB after the real pages
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", out, "--quiet").exit_code == 0
    assert out.stat().st_size < 1 << 22  # the zeros compress
    extracted = tmp_path / "x"
    assert cli("extract", out, extracted).exit_code == 0
    copy = next(extracted.rglob("state_5.sqlite"))
    assert copy.stat().st_size == 1 << 30 and copy.stat().st_blocks * 512 < 1 << 24
    from aitrail.analyzer.view import sparse

    written = []
    real = sparse.write_all
    monkey = pytest.MonkeyPatch()
    monkey.setattr(sparse, "write_all", lambda fd, data: (written.append(len(data)), real(fd, data)))
    try:
        assert cli("analyze", out, "-o", tmp_path / "t.csv", "--quiet", "--jobs", "1").exit_code == 0
    finally:
        monkey.undo()
    assert 0 < sum(written) < 1 << 20  # the working copy wrote the pages, not the hole


@pytest.mark.parametrize("digest", ["0|/etc/passwd|1|r|0|0|0|0|0|0|0\nx", "ABC", "g" * 64, None, 5])
def test_the_bodyfile_hash_field_is_a_digest_or_zero(digest):
    from aitrail.analyzer.outputs.bodyfile import bodyfile_line

    record = {"sha256": digest, "source_path": "/home/a/x", "stat": {"mode": "100644", "mtime_ns": 0}}
    line = bodyfile_line(record, "sha256")
    assert line.count("\n") == 1 and line.split("|")[0] == "0" and line.count("|") == 10
    record["sha256"] = "a" * 64
    assert bodyfile_line(record, "sha256").startswith("a" * 64 + "|")
    assert bodyfile_line(record).startswith("0|")  # the default: 0, never the SHA-256 in the MD5 field


def test_export_bodyfile_hash_sha256_puts_the_collected_files_digest_first(cli, bundle, tmp_path):
    body = tmp_path / "body.txt"
    assert cli("export", "bodyfile", bundle, "-o", body, "--hash", "sha256").exit_code == 0
    with_stat = [record for record in bundle_records(bundle) if record.get("stat")]
    assert [line.split("|")[0] for line in body.read_text().splitlines()] == \
        [record["sha256"] or "0" for record in with_stat]
    assert any(record["sha256"] for record in with_stat)
