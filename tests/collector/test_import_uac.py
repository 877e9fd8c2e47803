"""The UAC reader: every file of a built (and, where a checkout is given, a real) UAC collection, and hostile ones.

Built containers come from container_uac.build (UAC 3.3.0's layout). The
real-UAC tests run ``uac`` from a checkout named by ``AITRAIL_UAC_DIR``
(``git archive`` of tclahr/uac 3.3.0 with its bin/ tree); CI has none, so
they are skipped there, and run locally.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from aitrail.collector.foreign.container import STREAM_ERRORS, ContainerError
from aitrail.collector.foreign.uac import UacContainer
from tests.collector import container_uac
from tests.conftest import write_tree

DEMO_HOME = Path(__file__).resolve().parents[2] / "fixtures" / "demo-home"
UAC_DIR = os.environ.get("AITRAIL_UAC_DIR")
ODD_NAME = b"caf\xe9.txt"  # not UTF-8


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "subject"
    write_tree(root, {
        "etc/hostname": "build-07\n", "etc/passwd": "alice:x:1000:1000::/home/alice:/bin/bash\n",
        "home/alice/.claude/history.jsonl": '{"display":"hi"}\n',
        "home/alice/.claude/.credentials.json": '{"token":"secret"}',
        "home/alice/.claude/projects/p1/s 1.jsonl": "x\n", "home/alice/.claude.json": "{}",
        "home/alice/.config/café/notes.txt": "utf-8 name\n",
    })
    os.symlink("../history.jsonl", root / "home/alice/.claude/projects/link")
    os.mkfifo(root / "home/alice/.claude/fifo")
    (root / "home/alice/.claude/empty").mkdir()
    with open(os.path.join(os.fsencode(root / "home/alice"), ODD_NAME), "wb") as handle:
        handle.write(b"odd")
    os.chmod(root / "home/alice/.claude/.credentials.json", 0o600)
    os.utime(root / "home/alice/.claude/history.jsonl", ns=(1_700_000_000_000_000_000, 1_704_164_645_123_456_789))
    return root


def lstat_of(root: Path, path: str) -> os.stat_result:
    return os.lstat(os.path.join(os.fsencode(root), os.fsencode(path.lstrip("/"))))


def taken(root: Path) -> set[str]:
    """The subject paths of every regular file and link below root: what UAC's file collector keeps."""
    paths = set()
    for directory, names, files in os.walk(os.fsencode(root)):
        for name in names + files:
            full = os.path.join(directory, name)
            mode = os.lstat(full).st_mode
            if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                paths.add("/" + os.fsdecode(os.path.relpath(full, os.fsencode(root))))
    return paths


def read(path: Path) -> UacContainer:
    container = UacContainer(str(path))
    container.read()
    return container


def by_path(container: UacContainer) -> dict:
    return {foreign.path: foreign for foreign in container.files}


def body_line(container: UacContainer, number: int) -> bytes:
    return container.archive.kept["bodyfile/bodyfile.txt"].split(b"\n")[number - 1]


# -- built containers --------------------------------------------------------------------

def test_tar_gz_every_file_with_the_bodyfile_records(tmp_path):
    root = fake_root(tmp_path)
    before = {path: lstat_of(root, path) for path in taken(root) | {"/etc", "/home", "/home/alice",
                                                                    "/home/alice/.claude", "/home/alice/.config"}}
    archive = container_uac.build(root, tmp_path, hostname="build-07")  # reading moves atimes: lstat before
    container = read(archive)
    files = by_path(container)
    assert container.problems.closed() == []
    assert {path for path, foreign in files.items() if foreign.member} == taken(root)
    assert "/home/alice/.claude/fifo" not in files and "/home/alice/.claude/empty" not in files
    for path, foreign in files.items():
        result = before.get(path) or lstat_of(root, path)
        record = foreign.recorded
        assert (record.mtime_ns, record.atime_ns, record.ctime_ns) == tuple(
            int(value) * 1_000_000_000 for value in (result.st_mtime, result.st_atime, result.st_ctime)), path
        assert (record.mode, record.uid, record.gid, record.ino) == (
            result.st_mode, result.st_uid, result.st_gid, result.st_ino), path
        line = int(record.sources["mtime"].rsplit(" ", 1)[1])
        assert record.sources["mtime"] == f"bodyfile/bodyfile.txt line {line}"
        assert set(record.sources.values()) == {record.sources["mtime"]}
        assert body_line(container, line).split(b"|")[1].split(b" -> ")[0] == os.fsencode(str(root) + path)
        if foreign.member:
            assert foreign.member == "[root]" + path
            assert foreign.size == (result.st_size if foreign.kind == "file" else 0)
    assert files["/home/alice/.claude/projects/link"].kind == "symlink"
    assert files["/home/alice/.claude/projects/link"].link_target == "../history.jsonl"
    assert files["/home/alice/.claude/history.jsonl"].recorded.mtime_ns == 1_704_164_645_000_000_000
    assert files["/home/alice/.claude/.credentials.json"].recorded.mode == 0o100600
    assert files["/home/alice/.claude"].kind == "dir" and files["/home/alice/.claude"].member is None
    assert os.fsdecode(b"/home/alice/" + ODD_NAME) in files
    assert container.hostname == "build-07"
    assert container.hostname_source == "uac.log line 8 (given to UAC by its operator with --hostname)"
    assert container.tool_version == "3.3.0"
    assert container.metadata["container_digest_check"]["value"] == {"md5": "matches", "sha1": "matches"}
    assert container.metadata["acquisition_log"]["value"]["examiner"] == "Erin Examiner"
    assert container.metadata["mount_point"] == {"value": str(root), "source": "uac.log line 10"}
    assert container.metadata["copied_before_archiving"]["value"] == "no: the archive read the originals"
    assert container.recorded_fields["md5"] == "not recorded (UAC was run without -H)"
    assert container.recorded_fields["mtime"].startswith("bodyfile/bodyfile.txt (UAC's stat collector), whole")


def test_without_bodyfile_the_tar_header_is_the_record(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_uac.build(root, tmp_path, bodyfile=False, output_format="tar"))
    files = by_path(container)
    history = files["/home/alice/.claude/history.jsonl"].recorded
    assert history.as_record() == {"mtime_ns": 1_704_164_645_000_000_000, "mode": "100644",
                                   "uid": os.getuid(), "gid": os.getgid(),
                                   "sources": {"mode": "tar header", "mtime": "tar header", "owner": "tar header"}}
    assert {path for path in files} == taken(root)
    assert container.recorded_fields["atime"].startswith("not recorded (no bodyfile")
    assert container.recorded_fields["mtime"] == "tar header (whole seconds)"


def test_hash_collected_takes_digests_and_never_the_copy_headers(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_uac.build(root, tmp_path, bodyfile=False, hash_collected=True))
    files = by_path(container)
    assert container.problems.closed() == []
    history = files["/home/alice/.claude/history.jsonl"]
    content = (root / "home/alice/.claude/history.jsonl").read_bytes()
    assert history.recorded.digests == {"md5": hashlib.md5(content).hexdigest(),
                                        "sha1": hashlib.sha1(content).hexdigest()}
    md5_lines = container.archive.kept["hash_list.md5"].split(b"\n")
    line = md5_lines.index(f"{history.recorded.digests['md5']}  [root]/home/alice/.claude/history.jsonl".encode()) + 1
    assert history.recorded.sources == {"md5": f"hash_list.md5 line {line}", "sha1": f"hash_list.sha1 line {line}"}
    assert history.recorded.mtime_ns is None and history.recorded.uid is None  # the headers are cp -r's copy
    assert files["/home/alice/.claude/projects/link"].recorded.digests == {}  # md5sum hashed through the link
    assert container.metadata["hash_lists"]["value"]["hash_list_lines_for_links"] == 2
    assert container.metadata["copied_before_archiving"]["value"].startswith("UAC ran with -H")
    assert container.recorded_fields["mtime"].startswith("not recorded (no bodyfile")
    assert container.recorded_fields["sha1"] == "hash_list.sha1 (-H: UAC's digest of its copy of each collected file)"


def test_zip_names_extra_fields_and_followed_links(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_uac.build(root, tmp_path, output_format="zip", bodyfile=False))
    files = by_path(container)
    odd = os.fsdecode(b"/home/alice/" + ODD_NAME)
    assert {"/home/alice/.config/café/notes.txt", odd} <= set(files)
    assert files[odd].member == (b"[root]/home/alice/" + ODD_NAME).decode("cp437")  # zipfile's reading of it
    notes = files["/home/alice/.config/café/notes.txt"].recorded
    result = lstat_of(root, "/home/alice/.config/café/notes.txt")
    assert notes.as_record() == {"mtime_ns": int(result.st_mtime) * 1_000_000_000, "uid": result.st_uid,
                                 "gid": result.st_gid, "mode": f"{result.st_mode:o}",
                                 "sources": {"mode": "zip external attributes", "mtime": "zip UT extra field (UTC)",
                                             "owner": "zip ux extra field"}}
    link = files["/home/alice/.claude/projects/link"]
    assert (link.kind, link.size) == ("file", len(b'{"display":"hi"}\n'))  # zip followed it; no bodyfile says so


def test_zip_with_bodyfile_makes_a_followed_link_a_link_again(tmp_path):
    root = fake_root(tmp_path)
    container = read(container_uac.build(root, tmp_path, output_format="zip"))
    link = by_path(container)["/home/alice/.claude/projects/link"]
    assert (link.kind, link.member, link.link_target, link.size) == ("symlink", None, "../history.jsonl", 0)
    assert link.recorded.sources["mtime"].startswith("bodyfile/bodyfile.txt line ")
    assert [problem for problem in container.problems if "link" in problem] == [
        f"/home/alice/.claude/projects/link: a link to ../history.jsonl ({link.recorded.sources['mtime']}); UAC's "
        "zip followed it and holds the target's bytes under its name, which are not read"]


def test_output_format_none_records_only_the_bodyfile(tmp_path):
    root = fake_root(tmp_path)
    directory = container_uac.build(root, tmp_path, output_format="none")
    container = read(directory)
    files = by_path(container)
    assert container.archive.kind == "dir" and container.problems.closed() == []
    history = files["/home/alice/.claude/history.jsonl"]
    assert history.recorded.mtime_ns == 1_704_164_645_000_000_000
    assert set(history.recorded.sources) - {"btime"} == {"mtime", "atime", "ctime", "mode", "owner", "inode"}
    assert files["/home/alice/.claude/projects/link"].kind == "symlink"
    assert container.metadata["copied_before_archiving"]["value"].startswith("a directory")
    assert "container_digest_check" not in container.metadata


def test_bodyfile_names_with_slash_mount_double_slashes_and_stat_quoting(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="tar", mount_point="/")
    lines = [
        b"0|/home/alice/.claude/history.jsonl|11|-rw-r-----|1000|1000|17|100|200|300|400",
        b"0|//home//alice/.claude.json|12|-rw-r--r--|1000|1000|2|1|2|3|0",
        b"0|/home/alice/caf'$'\\351''.txt|13|-rw-r--r--|1000|1000|3|5|6|7|0",
        b"0|/home/alice/.claude/projects/p1/s 1.jsonl|14|-rwsr-x--T|0|0|2|5|6|7|0",
    ]
    replace_member(archive, "bodyfile/bodyfile.txt", b"\n".join(lines) + b"\n")
    container = read(archive)
    files = by_path(container)
    assert files["/home/alice/.claude/history.jsonl"].recorded.as_record()["mode"] == "100640"
    assert files["/home/alice/.claude/history.jsonl"].recorded.btime_ns == 400_000_000_000
    claude_json = files["/home/alice/.claude.json"].recorded
    assert (claude_json.ino, claude_json.btime_ns) == (12, None)
    assert files[os.fsdecode(b"/home/alice/" + ODD_NAME)].recorded.ino == 13
    assert files["/home/alice/.claude/projects/p1/s 1.jsonl"].recorded.mode == 0o105750  # rws r-x --T
    assert container.metadata["bodyfile"]["value"] == {"applied": 4}


def test_demo_home_as_alice(tmp_path):
    root = tmp_path / "subject"
    shutil.copytree(DEMO_HOME, root / "home/alice", symlinks=True)
    container = read(container_uac.build(root, tmp_path))
    files = by_path(container)
    expected = taken(root)
    assert {path for path, foreign in files.items() if foreign.member} == expected
    assert len(expected) == sum(1 for path in DEMO_HOME.rglob("*") if path.is_file() or path.is_symlink())
    for path in expected:
        assert files[path].recorded.ino == lstat_of(root, path).st_ino
        assert files[path].recorded.sources["inode"].startswith("bodyfile/bodyfile.txt line ")
    assert container.problems.closed() == []


# -- hostile containers ------------------------------------------------------------------

def replace_member(archive: Path, name: str, content: bytes | None, extra: list | None = None) -> None:
    """Rewrite a tar (gz or plain) with member ``name``'s bytes replaced (None: left out), plus ``extra`` members."""
    compressed = archive.name.endswith(".gz")
    members = []
    with tarfile.open(archive) as source:
        for info in source:
            data = source.extractfile(info).read() if info.isreg() else None
            if info.name == name:
                if content is None:
                    continue
                data, info.size = content, len(content)
            members.append((info, data))
    members += extra or []
    with tarfile.open(archive, "w:gz" if compressed else "w", format=tarfile.PAX_FORMAT) as target:
        for info, data in members:
            target.addfile(info, io.BytesIO(data) if data is not None else None)


def member(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), 1_700_000_000
    return info, data


def read_each(container, members: set) -> tuple[dict, list]:
    """Each chosen member's bytes, and the members whose bytes broke off (raised as the importer meets them)."""
    streamed, failed = {}, []
    for name, handle in container.stream(members):
        try:
            streamed[name] = handle.read()
        except STREAM_ERRORS:
            failed.append(name)
    return streamed, failed


def test_truncated_archive_reads_the_members_before_the_damage(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="tar", acquisition_log=False)
    data = archive.read_bytes()
    with tarfile.open(archive) as complete:
        offsets = {info.name: info.offset_data for info in complete}
    names = [name for name in offsets if name.startswith("[root]/")]
    archive.write_bytes(data[:offsets[names[3]] + 5])  # damage inside the fourth file, after its whole header
    container = read(archive)
    members = {foreign.member for foreign in container.files if foreign.member}
    assert members == set(names[:4])  # the fourth is listed from its header; its bytes are short when streamed
    streamed, failed = read_each(container, set(names[:4]))
    assert failed == [names[3]] and all(streamed[name] for name in names[:3])
    assert any(problem.startswith(f"{archive.name}: the archive ends in damage after ")
               for problem in container.problems)


def test_bad_bodyfile_and_hash_list_lines_are_named_and_later_lines_read(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="tar", hash_collected=True, mount_point="/")
    body = [b"not a bodyfile line", b"0|/etc/hostname|x|-rw-r--r--|0|0|9|1|2|3|0",
            b"0|/etc/passwd|5|?rw-r--r--|0|0|9|1|2|3|0", b"0|/etc/hostname|77|-rw-r--r--|0|0|9|1|2|3|0"]
    replace_member(archive, "bodyfile/bodyfile.txt", b"\n".join(body) + b"\n")
    md5 = hashlib.md5(b"build-07\n").hexdigest()
    replace_member(archive, "hash_list.md5", b"garbage\n" + b"abc  [root]/etc/hostname\n"
                   + f"{md5}  [root]/etc/gone\n{md5}  [root]/etc/hostname\n".encode())
    container = read(archive)
    hostname = by_path(container)["/etc/hostname"]
    assert hostname.recorded.ino == 77 and hostname.recorded.sources["inode"] == "bodyfile/bodyfile.txt line 4"
    assert hostname.recorded.digests["md5"] == md5
    assert hostname.recorded.sources["md5"] == "hash_list.md5 line 4"
    problems = container.problems.closed()
    assert "bodyfile/bodyfile.txt line 1: not a bodyfile line (11 fields separated by |); skipped" in problems
    assert ("bodyfile/bodyfile.txt line 2: a field is not a number, or the mode '-rw-r--r--' is not ls-style; "
            "skipped") in problems
    assert ("bodyfile/bodyfile.txt line 3: a field is not a number, or the mode '?rw-r--r--' is not ls-style; "
            "skipped") in problems
    assert "hash_list.md5 line 1: not a '<digest>  <name>' line; skipped" in problems
    assert "hash_list.md5 line 2: 3 hex digits, not 32 for md5; skipped" in problems
    assert "hash_list.md5 line 3: names [root]/etc/gone, which is not in the container" in problems
    assert container.metadata["own_record_digests"]["value"] == {  # the bodyfile was rewritten
        "bodyfile/bodyfile.txt sha1": "differs (hash_list.sha1 line 1)"}


def test_names_that_leave_the_tree_absolute_or_nul_or_twice(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="tar", bodyfile=False)
    nul = tarfile.TarInfo("x")
    nul.pax_headers = {"path": "[root]/etc/a\x00b"}
    replace_member(archive, "none", None, extra=[
        member("[root]/../../etc/shadow"), member("/[root]/etc/abs"), member("[root]/etc/hostname", b"second"),
        member("[root]/"), (nul, None)])
    container = read(archive)
    files = by_path(container)
    assert files["/etc/hostname"].size == len("build-07\n")
    problems = container.problems.closed()
    assert ("member [root]/../../etc/shadow: its name could leave the subject's tree ('..', '.', a backslash, or "
            "nothing after [root]/); left out") in problems
    assert "member /[root]/etc/abs: an absolute name, which UAC never writes; left out" in problems
    assert ("member [root]/etc/hostname: /etc/hostname is in the archive twice; the first is kept, as recorded, and "
            "this one left out (tar would extract this one over it)") in problems
    assert any("holding NUL" in problem for problem in problems)
    assert not any(path.endswith("shadow") or path.endswith("abs") for path in files)
    streamed = [(name, handle.read()) for name, handle in container.stream({"[root]/etc/hostname"})]
    assert streamed == [("[root]/etc/hostname", b"build-07\n")]


def test_sizes_that_disagree_and_a_changed_archive(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="tar", mount_point="/")
    result = lstat_of(root, "/etc/hostname")
    line = (f"0|/etc/hostname|{result.st_ino}|-rw-r--r--|{result.st_uid}|{result.st_gid}|999|1|"
            f"{int(result.st_mtime) + 60}|3|0\n").encode()
    replace_member(archive, "bodyfile/bodyfile.txt", line)
    container = read(archive)
    hostname = by_path(container)["/etc/hostname"]
    assert hostname.size == len("build-07\n") and hostname.recorded.mtime_ns == (int(result.st_mtime) + 60) * 10**9
    assert (f"/etc/hostname: bodyfile/bodyfile.txt line 1 and the tar header differ (mtime {int(result.st_mtime) + 60} "
            f"vs {int(result.st_mtime)}, size 999 vs 9: bodyfile vs archive); the file changed between UAC's stat and "
            "its archiving: times, mode and owner are the bodyfile's, the bytes the archive's") in container.problems
    assert container.metadata["container_digest_check"]["value"] == {"md5": "differs", "sha1": "differs"}
    assert any(problem.startswith(archive.name.removesuffix(".tar") + ".log line 25: the container's md5 is ")
               for problem in container.problems)


def test_not_a_uac_collection_is_refused(tmp_path):
    plain = tmp_path / "plain.tar"
    with tarfile.open(plain, "w") as archive:
        info, data = member("home/alice/x")
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(ContainerError, match="no \\[root\\]/ member and no uac.log"):
        read(plain)
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(gzip.compress(b"\x00" * 10) + b"junk")
    with pytest.raises(ContainerError):
        read(garbage)


# -- real UAC ----------------------------------------------------------------------------

ARTIFACT = """version: 1.0
artifacts:
  -
    description: Collect the fake home (aitrail test artifact).
    supported_os: [all]
    collector: file
    path: /home/alice
"""


def run_uac(root: Path, out: Path, *options: str) -> Path:
    artifact = out / "aitrail_test.yaml"
    artifact.write_text(ARTIFACT)
    result = subprocess.run(["./uac", "-a", f"{artifact},bodyfile/bodyfile.yaml", "-m", str(root), "-s", "linux",
                             "--hostname", "build-07", *options, str(out)], cwd=UAC_DIR, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (output,) = [path for path in out.iterdir() if path.name.startswith("uac-") and not path.name.endswith(".log")]
    return output


needs_uac = pytest.mark.skipif(not UAC_DIR, reason="AITRAIL_UAC_DIR names no UAC checkout (none in CI)")


@needs_uac
@pytest.mark.parametrize("options", [(), ("-H",), ("-f", "zip")])
def test_real_uac_matches_the_builder(tmp_path, options):
    root = fake_root(tmp_path)
    real_dir, built_dir = tmp_path / "real", tmp_path / "built"
    real_dir.mkdir()
    built_dir.mkdir()
    real = read(run_uac(root, real_dir, *options))
    built = read(container_uac.build(root, built_dir, output_format="zip" if "zip" in options else "tar.gz",
                                     hash_collected="-H" in options))
    real_names = [entry.name for entry in real.archive.entries]
    built_names = [entry.name for entry in built.archive.entries]
    own = [name for name in real_names if not name.startswith("[root]/")]
    assert own == [name for name in built_names if not name.startswith("[root]/")]
    assert set(real_names) - set(own) <= set(built_names)  # the builder takes the whole root, UAC the artifact's
    real_files, built_files = by_path(real), by_path(built)
    for path, foreign in real_files.items():  # the same records, but atime (UAC's own run read the files)
        real_record, built_record = foreign.recorded.as_record(), built_files[path].recorded.as_record()
        for record in (real_record, built_record):
            record.pop("atime_ns", None)
            record["sources"] = sorted(record.get("sources", {}))
        assert (foreign.kind, foreign.size, real_record) == (built_files[path].kind, built_files[path].size,
                                                            built_record), path
    followed = ("/home/alice/.claude/projects/link: a link to ../history.jsonl (bodyfile/bodyfile.txt line {}); "
                "UAC's zip followed it and holds the target's bytes under its name, which are not read")
    link_line = real_files["/home/alice/.claude/projects/link"].recorded.sources["inode"].rsplit(" ", 1)[1]
    assert real.problems.closed() == ([followed.format(link_line)] if "zip" in options else [])
    assert real.hostname == "build-07" and real.tool_version == "3.3.0"
    assert real.metadata["container_digest_check"]["value"] == {"md5": "matches", "sha1": "matches"}


def test_damage_met_while_streaming_is_named_not_raised(tmp_path):
    root = fake_root(tmp_path)
    archive = container_uac.build(root, tmp_path, output_format="zip", bodyfile=False, acquisition_log=False)
    with zipfile.ZipFile(archive) as opened:
        info = opened.getinfo("[root]/etc/passwd")
    data = bytearray(archive.read_bytes())
    local_extra = int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    data[info.header_offset + 30 + len(info.filename.encode()) + local_extra] ^= 0xFF  # its first deflated byte
    archive.write_bytes(bytes(data))
    container = read(archive)
    members = {foreign.member for foreign in container.files}
    streamed, failed = read_each(container, members)
    assert streamed["[root]/etc/hostname"] == b"build-07\n"
    assert failed == ["[root]/etc/passwd"]  # the importer leaves it unfilled: not_in_container (test_import.py)
    assert set(streamed) == members - {"[root]/etc/passwd"} - {None}  # the members after it are still given
