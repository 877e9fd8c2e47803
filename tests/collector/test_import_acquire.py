"""The acquire reader: every file of built and real acquire 3.22 containers (tar, zip, dir), and hostile ones.

Built containers come from container_acquire.build; the real ones from the
``acquire`` command installed beside this Python (PyPI acquire==3.22, a
test dependency), run against a fake root.
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from aitrail.collector.foreign.acquire import AcquireContainer
from aitrail.collector.foreign.container import ContainerError
from tests.collector import container_acquire
from tests.conftest import write_tree

DEMO_HOME = Path(__file__).resolve().parents[2] / "fixtures" / "demo-home"
ACQUIRE = Path(sys.executable).with_name("acquire")
HISTORY_NS = 1_704_164_645_123_456_789


def fake_root(tmp_path: Path, odd_name: bool = False) -> Path:
    root = tmp_path / "subject"
    write_tree(root, {
        "etc/hostname": "build-07\n", "etc/passwd": "alice:x:1000:1000::/home/alice:/bin/bash\n",
        "home/alice/.claude/history.jsonl": '{"display":"hi"}\n',
        "home/alice/.claude/.credentials.json": '{"token":"secret"}',
        "home/alice/.claude/projects/p1/s 1.jsonl": "x\n", "home/alice/.config/café/notes.txt": "utf-8 name\n",
    })
    os.symlink("../history.jsonl", root / "home/alice/.claude/projects/link")
    os.mkfifo(root / "home/alice/.claude/fifo")
    (root / "var/log").mkdir(parents=True)  # dissect's directory loader needs etc/ and var/ to take it as a root
    os.utime(root / "home/alice/.claude/history.jsonl", ns=(1_700_000_000_000_000_000, HISTORY_NS))
    if odd_name:
        with open(os.path.join(os.fsencode(root / "home/alice"), b"caf\xe9.txt"), "wb") as handle:
            handle.write(b"odd")
    return root


def read(path: Path) -> AcquireContainer:
    container = AcquireContainer(str(path))
    container.read()
    return container


def by_path(container: AcquireContainer) -> dict:
    return {foreign.path: foreign for foreign in container.files}


def taken(root: Path) -> set[str]:
    return {"/" + path.relative_to(root).as_posix() for path in root.rglob("*")
            if path.is_symlink() or path.is_file()}


# -- built containers --------------------------------------------------------------------

def test_tar_with_hashes_every_file_and_its_records(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_acquire.build(root, tmp_path, hashes=True))
    files = by_path(container)
    assert container.problems.closed() == []
    assert set(files) == taken(root)
    csv_lines = gzip.decompress(container.archive.kept["fs/$rootfs$/$metadata$/file-hashes.csv.gz"]).split(b"\r\n")
    for path, foreign in files.items():
        assert foreign.member == "fs/$rootfs$" + path
        assert abs(foreign.recorded.mtime_ns - os.lstat(root / path.lstrip("/")).st_mtime_ns) < 1000, path
        assert foreign.recorded.sources["mtime"] == "tar header (acquire: lstat st_mtime)"
        if foreign.kind == "file":
            content = (root / path.lstrip("/")).read_bytes()
            assert foreign.recorded.digests == {"md5": hashlib.md5(content).hexdigest(),
                                                "sha1": hashlib.sha1(content).hexdigest(),
                                                "sha256": hashlib.sha256(content).hexdigest()}
            line = int(foreign.recorded.sources["sha256"].rsplit(" ", 1)[1])
            assert csv_lines[line - 1].startswith(path.encode() + b",")
    link = files["/home/alice/.claude/projects/link"]
    assert (link.kind, link.link_target, link.recorded.digests) == ("symlink", "../history.jsonl", {})
    assert container.metadata["counts"]["value"] == {"hash_rows_applied": 6, "hash_rows_for_links": 1}
    assert container.hostname == "fakehost" and container.tool_version == "3.22"
    assert container.metadata["report"]["value"]["outcomes"] == {"failure": 1, "success": 8}
    assert container.metadata["log_errors"]["value"]["count"] == 1
    assert container.recorded_fields["mode"] == "not recorded (acquire writes 0644 in every tar header)"
    assert container.recorded_fields["owner"] == "not recorded (acquire writes root, uid 0, in every tar header)"
    assert container.recorded_fields["sha256"].startswith("fs/$rootfs$/$metadata$/file-hashes.csv.gz (--hashes")


def test_zip_times_in_two_second_steps_links_without_targets(tmp_path):
    root = fake_root(tmp_path, odd_name=True)
    container = read(container_acquire.build(root, tmp_path, output_type="zip", compress=True))
    files = by_path(container)
    assert container.problems.closed() == []
    assert set(files) == taken(root) - {os.fsdecode(b"/home/alice/caf\xe9.txt")}  # acquire could not name it
    history = files["/home/alice/.claude/history.jsonl"].recorded
    assert history.as_record() == {"mtime_ns": 1_704_164_644_000_000_000, "sources": {
        "mtime": "zip entry time (acquire: lstat st_mtime as UTC, 2-second steps)"}}
    link = files["/home/alice/.claude/projects/link"]
    assert (link.kind, link.link_target, link.size) == ("symlink", None, 0)
    assert container.metadata["report"]["value"]["outcomes"] == {"failure": 1, "missing": 1, "success": 7}
    assert container.recorded_fields["mode"] == ("not recorded (acquire writes 0777 with the file type in every zip "
                                                 "entry)")


def test_directory_output_has_no_times_and_the_report_restores_links(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_acquire.build(root, tmp_path, output_type="dir"))
    files = by_path(container)
    assert {path for path, foreign in files.items() if foreign.kind != "dir"} == taken(root)
    assert all(foreign.recorded.as_record() == {} for foreign in files.values())
    link = files["/home/alice/.claude/projects/link"]
    assert (link.kind, link.member) == ("symlink", None)
    assert container.problems.closed() == [
        "/home/alice/.claude/projects/link: a link (fakehost_20260102030000.report.json, cli-args); acquire's "
        "directory output wrote it as an empty file, so its target is not recorded"]
    assert container.recorded_fields["mtime"] == "not recorded (acquire's directory output keeps no times)"


def test_demo_home_as_alice(tmp_path):
    root = tmp_path / "subject"
    shutil.copytree(DEMO_HOME, root / "home/alice", symlinks=True)
    container = read(container_acquire.build(root, tmp_path, hashes=True, compress=True))
    files = by_path(container)
    assert set(files) == taken(root) and container.problems.closed() == []
    assert all(set(foreign.recorded.digests) == {"md5", "sha1", "sha256"} for foreign in files.values()
               if foreign.kind == "file")


def windows_tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_700_000_000.5
            archive.addfile(info, io.BytesIO(data))
    return path


def test_windows_drives_legacy_sysvol_and_unmapped_filesystems(tmp_path):
    rows = f"path,file-size,md5,sha1,sha256\r\nsysvol/Users/Bob/.codex/a.json,2,,{hashlib.sha1(b'{}').hexdigest()},\r\n"
    archive = windows_tar(tmp_path / "host_20260102030000.tar", [
        ("fs/C:/Users/alice/.claude/history.jsonl", b"{}\n"), ("fs/sysvol/Users/Bob/.codex/a.json", b"{}"),
        ("fs/D:/data/x.txt", b"d"), ("fs/$fs$/fs0/y.txt", b"y"), ("fs/$rootfs$/home/z", b"z"),
        ("fs/$metadata$/file-hashes.csv.gz", gzip.compress(rows.encode())), ("QueryDosDeviceA.txt", b"x")])
    container = read(archive)
    files = by_path(container)
    assert container.windows is True
    assert set(files) == {"C:/Users/alice/.claude/history.jsonl", "C:/Users/Bob/.codex/a.json", "D:/data/x.txt"}
    assert files["C:/Users/Bob/.codex/a.json"].recorded.digests == {"sha1": hashlib.sha1(b"{}").hexdigest()}
    assert files["C:/Users/alice/.claude/history.jsonl"].recorded.mtime_ns == 1_700_000_000_500_000_000
    assert container.problems.closed() == [
        "member fs/$fs$/fs0/y.txt: on a filesystem acquire found no mount point or drive for (fs/$fs$/); not mapped "
        "to a subject path, left out",
        "member fs/$rootfs$/home/z: a POSIX path in a container of the other kind; left out"]
    assert container.metadata["own_members"]["value"] == {
        "metadata": ["fs/$metadata$/file-hashes.csv.gz"], "outside_fs": {"QueryDosDeviceA.txt": 1}}
    assert container.metadata["counts"]["value"] == {"hash_rows_applied": 1, "legacy_sysvol_members": 1}


# -- hostile containers ------------------------------------------------------------------

def rebuild(archive: Path, keep=lambda info: True, extra: list | None = None, replace: dict | None = None) -> None:
    members = []
    with tarfile.open(archive) as source:
        for info in source:
            if not keep(info):
                continue
            data = source.extractfile(info).read() if info.isreg() else None
            if replace and info.name in replace:
                data = replace[info.name]
                info.size = len(data)
            members.append((info, data))
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as target:
        for info, data in members + (extra or []):
            target.addfile(info, io.BytesIO(data) if data is not None else None)


def member(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def test_truncated_tar_and_the_report_naming_what_is_gone(tmp_path):
    root = fake_root(tmp_path)
    archive = container_acquire.build(root, tmp_path)
    with tarfile.open(archive) as complete:
        infos = list(complete)
    archive.write_bytes(archive.read_bytes()[:infos[3].offset])  # acquire's truncated tar (fox-it/acquire #61)
    container = read(archive)
    gone = {info.name.removeprefix("fs/$rootfs$") for info in infos[3:]}
    assert set(by_path(container)) == {info.name.removeprefix("fs/$rootfs$") for info in infos[:3]}
    for path in gone:
        kind = "symlink" if path.endswith("/link") else "file"
        assert (f"fakehost_20260102030000.report.json: cli-args collected the {kind} {path}, but the container "
                "holds no member for it (a truncated archive?)") in container.problems


def test_bad_csv_rows_are_named_and_later_rows_read(tmp_path):
    root = fake_root(tmp_path)
    archive = container_acquire.build(root, tmp_path, hashes=True)
    digest = hashlib.sha256(b"build-07\n").hexdigest()
    rows = ("path,file-size,md5,sha1,sha256\r\n/etc/hostname,x,,,\r\n/etc/hostname,9,zz,,\r\nonly,two\r\n"
            f"/etc/passwd,3,,,{'0' * 64}\r\n/etc/hostname,9,,,{digest}\r\n/nowhere,1,,,\r\n")
    rebuild(archive, replace={"fs/$rootfs$/$metadata$/file-hashes.csv.gz": gzip.compress(rows.encode())})
    container = read(archive)
    files = by_path(container)
    assert files["/etc/hostname"].recorded.digests == {"sha256": digest}
    assert files["/etc/hostname"].recorded.sources["sha256"] == "fs/$rootfs$/$metadata$/file-hashes.csv.gz line 6"
    name = "fs/$rootfs$/$metadata$/file-hashes.csv.gz"
    assert container.problems.closed() == [
        f"{name} line 2: not path,file-size,md5,sha1,sha256; skipped",
        f"{name} line 3: md5 'zz' is not 32 hex digits; that digest skipped",
        f"{name} line 4: not path,file-size,md5,sha1,sha256; skipped",
        f"{name} line 5: /etc/passwd had 3 bytes when hashed; the container holds 41"]
    assert container.metadata["counts"]["value"]["hash_rows_not_in_container"] == 1


def test_damaged_gzip_csv_and_a_report_that_is_not_json(tmp_path):
    root = fake_root(tmp_path)
    archive = container_acquire.build(root, tmp_path, hashes=True)
    rebuild(archive, replace={"fs/$rootfs$/$metadata$/file-hashes.csv.gz": b"\x1f\x8b\x08\x00garbage"})
    archive.with_name(archive.name.replace(".tar", ".report.json")).write_text("{not json")
    container = read(archive)
    problems = container.problems.closed()
    assert problems[0].startswith("fakehost_20260102030000.report.json: not JSON (")
    assert problems[1].startswith("fs/$rootfs$/$metadata$/file-hashes.csv.gz: not a readable gzip stream (")
    assert len(problems) == 2 and container.hostname is None
    assert set(by_path(container)) == taken(root)


def test_names_that_leave_the_tree_absolute_twice_or_nul(tmp_path):
    root = fake_root(tmp_path)
    archive = container_acquire.build(root, tmp_path, report=False, log=False)
    nul = tarfile.TarInfo("x")
    nul.pax_headers = {"path": "fs/$rootfs$/a\x00b"}
    rebuild(archive, extra=[member("fs/$rootfs$/../../etc/shadow"), member("/fs/$rootfs$/etc/abs"),
                            member("fs/$rootfs$/etc/hostname", b"second"), (nul, b"")])
    container = read(archive)
    problems = container.problems.closed()
    assert ("member fs/$rootfs$/../../etc/shadow: its name could leave the subject's tree ('..', '.', a backslash, "
            "or nothing after the base); left out") in problems
    assert "member /fs/$rootfs$/etc/abs: an absolute name, which acquire never writes; left out" in problems
    assert ("member fs/$rootfs$/etc/hostname: /etc/hostname is in the container twice; the first is kept, as "
            "recorded, and this one left out") in problems
    assert any("holding NUL" in problem for problem in problems)
    assert [(name, handle.read()) for name, handle in container.stream({"fs/$rootfs$/etc/hostname"})] == [
        ("fs/$rootfs$/etc/hostname", b"build-07\n")]
    assert container.metadata["report"]["value"] is None and container.hostname is None


def test_encrypted_or_foreign_containers_are_refused(tmp_path):
    encrypted = tmp_path / "host_20260102030000.tar.enc"
    encrypted.write_bytes(b"ENCRYPTEDACQUIRE" + b"\x00" * 64)
    with pytest.raises(ContainerError, match="encrypted by acquire"):
        AcquireContainer(str(encrypted))
    plain = tmp_path / "plain.tar"
    with tarfile.open(plain, "w") as archive:
        info, data = member("[root]/home/alice/x")
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(ContainerError, match="not an acquire collection"):
        read(plain)


# -- real acquire ------------------------------------------------------------------------

def without_lines(foreign) -> dict:
    record = foreign.recorded.as_record()
    record["sources"] = {key: re.sub(r" line \d+$", "", value) for key, value in record.get("sources", {}).items()}
    return record


def run_acquire(root: Path, out: Path, *options: str) -> Path:
    out.mkdir()
    result = subprocess.run([str(ACQUIRE), str(root), "-o", str(out), "--profile", "none", "--volatile-profile",
                             "none", "--path", "/etc", "--path", "/home", *options], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (output,) = [path for path in out.iterdir() if not path.name.endswith((".log", ".report.json"))]
    return output


@pytest.mark.parametrize("options", [("--hashes", "--glob-to-hash", "**/*"), ("-ot", "zip", "--compress"),
                                     ("-ot", "dir")])
def test_real_acquire_matches_the_builder(tmp_path, options):
    assert ACQUIRE.exists(), "acquire is a test dependency: pip install acquire==3.22"
    root = fake_root(tmp_path)
    real_path = run_acquire(root, tmp_path / "real", *options)
    output_type = "zip" if "zip" in options else "dir" if "dir" in options else "tar"
    built_dir = tmp_path / "built"
    built_dir.mkdir()
    hostname, stamp = real_path.name.split(".")[0].split("_")
    built_path = container_acquire.build(root, built_dir, output_type=output_type, compress="--compress" in options,
                                         hashes="--hashes" in options, hostname=hostname,
                                         when=calendar.timegm(time.strptime(stamp, "%Y%m%d%H%M%S")))
    real, built = read(real_path), read(built_path)
    assert sorted(entry.name for entry in real.archive.entries) == sorted(entry.name for entry in built.archive.entries)
    if output_type == "tar":
        with tarfile.open(real_path) as archive:
            headers = {(info.mode, info.uid, info.gid, info.uname) for info in archive}
        assert headers == {(0o644, 0, 0, "root")}
    real_files, built_files = by_path(real), by_path(built)
    assert set(real_files) == set(built_files) == taken(root) | (
        {"/etc", "/home", "/home/alice", "/home/alice/.claude", "/home/alice/.claude/projects",
         "/home/alice/.claude/projects/p1", "/home/alice/.config", "/home/alice/.config/café"}
        if output_type == "dir" else set())
    for path, foreign in real_files.items():  # the same records; the CSV's rows may come in another order
        assert (foreign.kind, foreign.size, foreign.link_target, without_lines(foreign)) == (
            built_files[path].kind, built_files[path].size, built_files[path].link_target,
            without_lines(built_files[path])), path
    report = json.loads(real_path.with_name(real_path.name.split(".")[0] + ".report.json").read_text())
    assert report["cli-args"]["failure"][0]["artifact_value"] == "/home/alice/.claude/fifo"
    assert real.tool_version == "3.22" and real.hostname == "build-07"
    assert real.problems.closed() == built.problems.closed()


def test_a_zip_zipfile_cannot_open_is_refused_not_raised(tmp_path):
    root = fake_root(tmp_path)
    archive = container_acquire.build(root, tmp_path, output_type="zip")
    data = bytearray(archive.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 6:central + 8] = (235).to_bytes(2, "little")  # "version needed to extract": 23.5
    archive.write_bytes(bytes(data))
    with pytest.raises(ContainerError, match=r"not readable \(NotImplementedError: zip file version 23.5\)"):
        read(archive)
