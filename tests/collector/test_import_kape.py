"""The KAPE reader (collector/foreign/kape.py) on built --tdest trees and zips, demo-home, and hostile containers."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.collector.foreign.container import MAX_SIZE, ContainerError
from aitrail.collector.foreign.kape import KapeContainer
from tests.collector import container_kape
from tests.conftest import FIXTURES, write_tree

RUN = "2026-03-01T10_20_30_1234567"
COPY_LOG = f"{RUN}_CopyLog.csv"
SKIP_LOG = f"{RUN}_SkipLog.csv.csv"
HEADER = container_kape.COPY_HEADER


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write_tree(root, {
        "Users/alice/.claude/history.jsonl": '{"display": "fix the bug"}\n',
        "Users/alice/.claude/.credentials.json": '{"token": "sk-fake"}',
        "Users/alice/.claude/projects/p/a,b.jsonl": "{}\n",
        "Users/alice/AppData/Roaming/Code/User/globalStorage/café.json": '{"k": 1}\n',
        "Users/alice/.codex/sessions/copy.jsonl": '{"display": "fix the bug"}\n',  # same bytes: deduped
        "Users/bob/.gemini/settings.json": "",
    })
    return root


def read(path: Path) -> KapeContainer:
    container = KapeContainer(str(path))
    container.read()
    return container


def by_path(container: KapeContainer) -> dict:
    return {item.path: item for item in container.files}


def kape_ns(ns: int) -> int:
    return ns // 100 * 100


def copy_line(container: KapeContainer, path: str) -> str:
    return by_path(container)[path].recorded.sources["sha1"]


def test_a_built_tdest_gives_every_file_with_its_copylog_record(tmp_path):
    root = fake_root(tmp_path)
    tdest = container_kape.build(root, tmp_path / "tdest")
    container = read(tdest)
    files = {item.path: item for item in container.files if item.kind == "file"}
    assert sorted(files) == [
        "C:/Users/alice/.claude/.credentials.json", "C:/Users/alice/.claude/history.jsonl",
        "C:/Users/alice/.claude/projects/p/a,b.jsonl", "C:/Users/alice/.codex/sessions/copy.jsonl",
        "C:/Users/alice/AppData/Roaming/Code/User/globalStorage/café.json", "C:/Users/bob/.gemini/settings.json"]
    # the CopyLog lists copied files in walk order: line 2 is the first
    order = [relative for relative, _path in container_kape.subject_files(root)]
    for line, relative in enumerate([r for r in order if not r.startswith("Users/alice/.codex")], 2):
        item = files["C:/" + relative]
        source = (root / relative).lstat()
        assert item.member == "C/" + relative
        assert item.size == source.st_size
        where = f"{COPY_LOG} line {line}"
        assert item.recorded.as_record() == {
            "mtime_ns": kape_ns(source.st_mtime_ns), "atime_ns": kape_ns(source.st_atime_ns),
            "btime_ns": kape_ns(source.st_ctime_ns),
            "digests": {"sha1": hashlib.sha1((root / relative).read_bytes()).hexdigest()},
            "sources": {"mtime": f"ModifiedOnUtc of {where}", "atime": f"LastAccessedOnUtc of {where}",
                        "btime": f"CreatedOnUtc of {where}", "sha1": f"SourceFileSha1 of {where}"}}
    deduped = files["C:/Users/alice/.codex/sessions/copy.jsonl"]
    history = files["C:/Users/alice/.claude/history.jsonl"]
    assert deduped.member == "C/Users/alice/.claude/history.jsonl"
    assert deduped.size == history.size
    assert deduped.recorded.as_record() == {
        "digests": {"sha1": history.recorded.digests["sha1"]},
        "sources": {"sha1": f"SourceFileSha1 of {SKIP_LOG} line 2 (skipped: Deduped); its bytes are those of "
                            f"C:/Users/alice/.claude/history.jsonl ({COPY_LOG} line 3), same SHA-1"}}
    dirs = sorted(item.path for item in container.files if item.kind == "dir")
    assert dirs == ["C:/Users", "C:/Users/alice", "C:/Users/alice/.claude", "C:/Users/alice/.claude/projects",
                    "C:/Users/alice/.claude/projects/p", "C:/Users/alice/AppData", "C:/Users/alice/AppData/Roaming",
                    "C:/Users/alice/AppData/Roaming/Code", "C:/Users/alice/AppData/Roaming/Code/User",
                    "C:/Users/alice/AppData/Roaming/Code/User/globalStorage", "C:/Users/bob", "C:/Users/bob/.gemini"]
    assert container.problems == []
    assert container.windows is True
    assert container.tool_version == "1.3.0.2"
    assert container.hostname == "WS-ALICE"
    assert container.hostname_source == (f"{RUN}_ConsoleLog.txt line 4, 'Machine name': the machine KAPE ran on, "
                                         "taken as the subject because --tsource was C: (its own system drive)")
    meta = container.metadata
    assert meta["tdest"] == {"value": r"D:\kape\tout",
                             "source": "the DestinationFile column, less the member's own path"}
    assert meta["command_line"] == {"value": r"--tsource C: --tdest D:\kape\tout --target AITrail --gui",
                                    "source": f"{RUN}_ConsoleLog.txt line 3"}
    assert meta["runs"]["value"] == {RUN: {"copy_log": COPY_LOG, "copied_rows": 5, "skip_log": SKIP_LOG,
                                           "console_log": f"{RUN}_ConsoleLog.txt"}}
    assert meta["skipped"]["value"] == {"Deduped": 1}
    assert container.recorded_fields["ctime"] == "not recorded (the CopyLog has no MFT change time)"
    assert container.recorded_fields["sha1"] == "SourceFileSha1 of the CopyLog (and of the SkipLog for skipped files)"
    assert container.custody()["container_kind"] == "dir"


def test_a_zip_gives_the_same_files_and_its_comment_the_version(tmp_path):
    root = fake_root(tmp_path)
    tree = read(container_kape.build(root, tmp_path / "tdest"))
    archive = container_kape.build(root, tmp_path / "zipped", zip=True)
    assert archive.name == "2026-03-01T102030_ws-alice.zip"
    container = read(archive)
    assert {(f.path, f.kind, f.size, f.member.rstrip("/")) for f in container.files} == {
        (f.path, f.kind, f.size, f.member) for f in tree.files}  # a zip names its directories with a last '/'

    assert {f.path: f.recorded.as_record() for f in container.files} == {
        f.path: f.recorded.as_record() for f in tree.files}
    assert container.tool_version == "1.3.0.2"
    assert container.metadata["zip_created"] == {"value": "2026-03-01T10:20:30.1234567Z", "source": "the zip's comment"}
    assert container.metadata["console_log"]["value"] is None  # KAPE writes it beside the zip
    assert container.hostname is None
    assert container.problems == []
    members = dict(container.stream({"C/Users/alice/.claude/history.jsonl"}))
    assert list(members) == ["C/Users/alice/.claude/history.jsonl"]


def test_the_directory_holding_kapes_zip_is_refused_with_directions(tmp_path):
    archive = container_kape.build(fake_root(tmp_path), tmp_path / "zipped", zip=True)
    with pytest.raises(ContainerError, match="is KAPE's --zip of this --tdest: pass the zip itself"):
        read(archive.parent)


def test_demo_home_as_alice_every_file_is_found(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "demo-home", root / "Users" / "alice", symlinks=True)
    container = read(container_kape.build(root, tmp_path / "tdest"))
    expected = {"C:/" + relative: path for relative, path in container_kape.subject_files(root)}
    files = {item.path: item for item in container.files if item.kind == "file"}
    assert set(files) == set(expected)
    for path, source in expected.items():
        assert files[path].recorded.digests == {"sha1": hashlib.sha1(source.read_bytes()).hexdigest()}
        assert files[path].size == source.stat().st_size
        assert files[path].member is not None
    assert container.problems == []


def test_the_machine_name_is_not_the_subject_when_tsource_was_not_drive_c(tmp_path):
    tdest = container_kape.build(fake_root(tmp_path), tmp_path / "tdest", tsource="F:", machine="EXAMINER-WS")
    container = read(tdest)
    assert container.hostname is None
    machine = container.metadata["kape_machine_name"]
    assert machine["value"] == "EXAMINER-WS"
    assert machine["note"].startswith("the machine KAPE ran on; --tsource was not its C: drive")


# -- hostile containers -------------------------------------------------------------------

def tdest_with_log(tmp_path: Path, rows: list[str], tree: dict[str, str] | None = None, log: str = COPY_LOG) -> Path:
    tdest = tmp_path / "tdest"
    write_tree(tdest, tree if tree is not None else {"C/Users/alice/.claude/a.jsonl": "aaaaa",
                                                     "C/Users/alice/.claude/b.jsonl": "bb"})
    (tdest / log).write_bytes(("\ufeff" + "\r\n".join([HEADER, *rows]) + "\r\n").encode("utf-8", "surrogateescape"))
    return tdest


def row(source: str, destination: str, size: str = "5", sha1: str = "A" * 40,
        times: tuple[str, str, str] = ("2026-01-01 00:00:00.0000001", "2026-01-02 00:00:00.5", "2026-01-03 00:00:00")
        ) -> str:
    return ",".join(["2026-03-01 10:20:31.0000000", source, destination, size, sha1, "False", *times,
                     "00:00:00.0010000"])


A = r"C:\Users\alice\.claude\a.jsonl"
B = r"C:\Users\alice\.claude\b.jsonl"
DA = r"D:\out\C\Users\alice\.claude\a.jsonl"
DB = r"D:\out\C\Users\alice\.claude\b.jsonl"


def test_a_line_that_does_not_parse_is_named_and_later_lines_are_read(tmp_path):
    tdest = tdest_with_log(tmp_path, ['2026-03-01,"C:\\Users\\alice\\x,broken', row(A, DA), "only,three,fields",
                                      row(B, DB, size="2")])
    container = read(tdest)
    assert container.problems[:2] == [f"{COPY_LOG} line 2: an unclosed quote; skipped",
                                      f"{COPY_LOG} line 4: 3 fields where the header has 10; skipped"]
    files = by_path(container)
    a = files["C:/Users/alice/.claude/a.jsonl"].recorded
    assert (a.btime_ns, a.mtime_ns, a.atime_ns) == (1767225600000000100, 1767312000500000000, 1767398400000000000)
    assert a.sources["mtime"] == f"ModifiedOnUtc of {COPY_LOG} line 3"
    assert files["C:/Users/alice/.claude/b.jsonl"].recorded.sources["sha1"] == f"SourceFileSha1 of {COPY_LOG} line 5"


def test_bad_fields_are_named_and_left_out_of_the_record(tmp_path):
    tdest = tdest_with_log(tmp_path, [row(A, DA, size="5x", sha1="NOTHEX",
                                          times=("yesterday", "2026-13-45 00:00:00", "")), row(B, DB, size="2")])
    container = read(tdest)
    assert container.problems == [
        f"{COPY_LOG} line 2: FileSize '5x' is not a size; not used",
        f"{COPY_LOG} line 2: SourceFileSha1 'NOTHEX' is not a SHA-1; not used",
        f"{COPY_LOG} line 2: modifiedonutc '2026-13-45 00:00:00' is not a KAPE time; not used",
        f"{COPY_LOG} line 2: createdonutc 'yesterday' is not a KAPE time; not used",
    ]
    a = by_path(container)["C:/Users/alice/.claude/a.jsonl"]
    assert a.recorded.as_record() == {}
    assert a.size == 5  # no recorded size: the member's


def test_a_size_that_lies_is_recorded_as_the_tool_said_and_named(tmp_path):
    container = read(tdest_with_log(tmp_path, [row(A, DA, size="999999"), row(B, DB, size="2")]))
    assert by_path(container)["C:/Users/alice/.claude/a.jsonl"].size == 999999
    assert container.problems == [f"{COPY_LOG} line 2: FileSize 999999; the member C/Users/alice/.claude/a.jsonl "
                                  "holds 5 bytes"]


def test_a_source_leaving_the_tree_is_refused_and_its_member_keeps_its_tree_path(tmp_path):
    container = read(tdest_with_log(tmp_path, [row(r"C:\Users\..\..\Windows\evil", DA), row(B, DB, size="2")]))
    assert container.problems == [
        rf"{COPY_LOG} line 2: SourceFile 'C:\\Users\\..\\..\\Windows\\evil' not used (a component is '.', '..' or "
        "holds '/' or NUL)",
        "C/Users/alice/.claude/a.jsonl: no CopyLog row names it; no times or SHA-1 recorded for it"]
    a = by_path(container)["C:/Users/alice/.claude/a.jsonl"]
    assert (a.member, a.recorded.as_record()) == ("C/Users/alice/.claude/a.jsonl", {})
    assert not any("evil" in item.path or "Windows" in item.path for item in container.files)


def test_a_record_for_a_file_not_present_is_a_file_without_member(tmp_path):
    gone = r"C:\Users\alice\.claude\gone.jsonl"
    container = read(tdest_with_log(tmp_path, [row(A, DA), row(B, DB, size="2"),
                                               row(gone, r"D:\out\C\Users\alice\.claude\gone.jsonl", size="7")]))
    item = by_path(container)["C:/Users/alice/.claude/gone.jsonl"]
    assert (item.member, item.size, item.recorded.sources["sha1"]) == (None, 7, f"SourceFileSha1 of {COPY_LOG} line 4")
    assert container.problems == [rf"{COPY_LOG} line 4: DestinationFile D:\out\C\Users\alice\.claude\gone.jsonl is "
                                  "not in the container"]


def test_the_same_source_twice_in_a_run_keeps_the_first(tmp_path):
    container = read(tdest_with_log(tmp_path, [row(A, DA), row(A.upper(), DA, size="6"), row(B, DB, size="2")]))
    assert container.problems == [rf"{COPY_LOG} line 3: {A.upper()} again (line 2); the first is kept"]
    assert by_path(container)["C:/Users/alice/.claude/a.jsonl"].size == 5


def test_a_later_run_replaces_an_earlier_runs_record(tmp_path):
    tdest = tdest_with_log(tmp_path, [row(A, DA), row(B, DB, size="2")])
    later = "2026-03-02T09_00_00_0000000_CopyLog.csv"
    (tdest / later).write_text(HEADER + "\r\n" + row(A, DA, sha1="B" * 40) + "\r\n", encoding="utf-8")
    container = read(tdest)
    assert container.problems == [f"{later} line 2: {A} copied again by run 2026-03-02T09_00_00_0000000; its record "
                                  f"replaces {COPY_LOG} line 2's (the later run wrote the same destination)"]
    assert by_path(container)["C:/Users/alice/.claude/a.jsonl"].recorded.digests == {"sha1": "b" * 40}


def test_an_old_kape_log_name_with_the_target_in_it_is_read(tmp_path):
    old = "2018-09-03T14_51_21_7565737_EvidenceOfExecution_copylog.csv"
    container = read(tdest_with_log(tmp_path, [row(A, DA), row(B, DB, size="2")], log=old))
    assert container.problems == []
    sources = by_path(container)["C:/Users/alice/.claude/a.jsonl"].recorded.sources
    assert sources["sha1"] == f"SourceFileSha1 of {old} line 2"


def test_a_renamed_copy_takes_the_source_path_and_says_so(tmp_path):
    tree = {"C/Users/alice/.claude/a.jsonl": "aaaaa", "LongFileNames/0001": "bb",
            "LongFileNames/0001.txt": r"C:\Users\alice\.claude\b.jsonl"}
    container = read(tdest_with_log(tmp_path, [row(A, DA), row(B, r"D:\out\LongFileNames\0001", size="2")], tree))
    b = by_path(container)["C:/Users/alice/.claude/b.jsonl"]
    assert (b.member, b.size) == ("LongFileNames/0001", 2)
    assert container.problems == [rf"{COPY_LOG} line 3: C:/Users/alice/.claude/b.jsonl is held as LongFileNames/0001 "
                                  "(KAPE named the copy otherwise: an alternate data stream or a long name)"]
    assert container.metadata["members_outside_drives"]["value"] == {"LongFileNames": 3}
    assert not any(item.path.endswith("0001.txt") for item in container.files)


def test_case_differences_are_one_windows_path(tmp_path):
    tree = {"C/Users/Alice/.claude/a.jsonl": "aaaaa"}
    container = read(tdest_with_log(tmp_path, [row(A, DA)], tree))
    assert [(item.path, item.member) for item in container.files if item.kind == "file"] == [
        ("C:/Users/alice/.claude/a.jsonl", "C/Users/Alice/.claude/a.jsonl")]
    assert container.problems == []


def test_shadow_copy_rows_and_folders_are_named_and_left_out(tmp_path):
    tree = {"C/Users/alice/.claude/a.jsonl": "aaaaa", "VSS1/Users/alice/.claude/a.jsonl": "old"}
    container = read(tdest_with_log(tmp_path, [row(A, DA), row(r"VSS1\Users\alice\.claude\a.jsonl",
                                                                r"D:\out\VSS1\Users\alice\.claude\a.jsonl", size="3")],
                                    tree))
    assert container.problems == [
        rf"{COPY_LOG} line 3: SourceFile 'VSS1\\Users\\alice\\.claude\\a.jsonl' not used (read from a volume shadow "
        "copy, not the live volume)",
        "VSS1: 5 members outside the drive-letter folders (not KAPE's logs, not a drive: a shadow copy or not "
        "KAPE's); left out"]
    assert [item.path for item in container.files if item.kind == "file"] == ["C:/Users/alice/.claude/a.jsonl"]


def test_excluded_skips_are_recorded_without_bytes(tmp_path):
    tdest = tdest_with_log(tmp_path, [row(A, DA), row(B, DB, size="2")])
    (tdest / SKIP_LOG).write_text("SourceFile,SourceFileSha1,Reason\r\n"
                                  rf"C:\Users\alice\.claude\secret.json,{'C' * 40},Excluded" + "\r\n"
                                  rf"C:\Users\..\x,{'C' * 40},Excluded" + "\r\n", encoding="utf-8")
    container = read(tdest)
    item = by_path(container)["C:/Users/alice/.claude/secret.json"]
    assert (item.member, item.size, item.recorded.as_record()) == (None, 0, {
        "digests": {"sha1": "c" * 40}, "sources": {"sha1": f"SourceFileSha1 of {SKIP_LOG} line 2 (skipped: Excluded)"}})
    assert container.problems == [rf"{SKIP_LOG} line 3: SourceFile 'C:\\Users\\..\\x' not used (a component is '.', "
                                  "'..' or holds '/' or NUL)"]
    assert container.metadata["skipped"]["value"] == {"Excluded": 2}


def test_a_link_in_the_tree_is_never_taken(tmp_path):
    tdest = tdest_with_log(tmp_path, [row(A, DA), row(B, DB, size="2")])
    os.symlink("/etc/passwd", tdest / "C" / "Users" / "alice" / "passwd")
    container = read(tdest)
    assert container.problems == ["C/Users/alice/passwd: a symlink, where KAPE copies files; left out"]
    assert not any(item.path.endswith("passwd") for item in container.files)


def zip_with(tmp_path: Path, members: dict[str, bytes], encrypted: bool = False) -> Path:
    archive = tmp_path / "2026-03-01T102030_x.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, data in members.items():
            out.writestr(zipfile.ZipInfo(name.split("\0dup")[0]), data)
    if encrypted:
        set_encrypted_flag(archive)
    return archive


def set_encrypted_flag(archive: Path) -> None:
    """Set bit 0 (encrypted) of every member's flags, in its local and its central header (APPNOTE 4.3.7, 4.3.12)."""
    data = bytearray(archive.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at >= 0:
            data[at + offset] |= 0x1
            at = data.find(signature, at + 4)
    archive.write_bytes(bytes(data))


def test_zip_names_that_leave_the_tree_or_repeat_are_left_out(tmp_path):
    log = ("\r\n".join([HEADER, row(A, DA), row(B, DB, size="2")]) + "\r\n").encode()
    with pytest.warns(UserWarning, match="Duplicate name"):
        archive = zip_with(tmp_path, {COPY_LOG: log, "C/Users/alice/.claude/a.jsonl": b"aaaaa",
                                      "C/Users/alice/.claude/b.jsonl": b"bb",
                                      "C/Users/alice/.claude/b.jsonl\0dup": b"XX",
                                      "C/../../etc/passwd": b"root", "/C/Users/x": b"x"})
    container = read(archive)
    assert sorted(container.problems) == sorted([
        "'/C/Users/x': an absolute name, or one with an empty, '.' or '..' component; left out",
        "'C/../../etc/passwd': an absolute name, or one with an empty, '.' or '..' component; left out",
        "C/Users/alice/.claude/b.jsonl: in the container 2 times; which copy is KAPE's cannot be told, so it is left "
        "out",
        "C/Users/alice/.claude/b.jsonl: in the container 2 times; which copy is KAPE's cannot be told, so it is left "
        "out",
        rf"{COPY_LOG} line 3: DestinationFile {DB} is not in the container"])
    assert {(item.path, item.member) for item in container.files} == {
        ("C:/Users/alice/.claude/a.jsonl", "C/Users/alice/.claude/a.jsonl"), ("C:/Users/alice/.claude/b.jsonl", None)}


def test_a_zip_written_with_backslashes_is_read(tmp_path):
    log = ("\r\n".join([HEADER, row(A, DA)]) + "\r\n").encode()
    container = read(zip_with(tmp_path, {COPY_LOG: log, "C\\Users\\alice\\.claude\\a.jsonl": b"aaaaa"}))
    assert [(item.path, item.member) for item in container.files] == [
        ("C:/Users/alice/.claude/a.jsonl", "C\\Users\\alice\\.claude\\a.jsonl")]
    assert container.problems == []


def test_encrypted_zips_disk_images_and_strangers_are_refused(tmp_path):
    (tmp_path / "e").mkdir()
    with pytest.raises(ContainerError, match="password-protected KAPE zip"):
        read(zip_with(tmp_path / "e", {COPY_LOG: b"x", "C/a": b"a"}, encrypted=True))
    image = tmp_path / "collection.bin"
    image.write_bytes(b"vhdxfile" + bytes(1024))
    for path in (image, tmp_path / "2026-03-01T102030_x.vhdx"):
        path.write_bytes(b"vhdxfile" + bytes(1024))
        with pytest.raises(ContainerError, match="mount it .* and pass the mounted directory"):
            KapeContainer(str(path))
    vhd = tmp_path / "fixed.img"
    vhd.write_bytes(bytes(4096) + b"conectix" + bytes(504))
    with pytest.raises(ContainerError, match="VHDX/VHD container"):
        KapeContainer(str(vhd))
    (tmp_path / "z").mkdir()
    with pytest.raises(ContainerError, match="KAPE's VHDX/VHD zipped by --zv: unzip it"):
        read(zip_with(tmp_path / "z", {"2026-03-01T102030_x.vhdx": b"vhdxfile"}))
    stranger = write_tree(tmp_path / "stranger", {"home/alice/.bashrc": "x"})
    with pytest.raises(ContainerError, match="not a KAPE --tdest"):
        read(stranger)


# -- property: mutated logs never give a traceback -------------------------------------------

PIECES = [*'C:\\/.,"\0 aé\r\n%$', "..", "VSS1", "D:", r"D:\kape\tout\C", "2026-01-01 00:00:00", "A" * 40]
FIELD_TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@pytest.fixture(scope="module")
def built_tdest(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("kape-property")
    return container_kape.build(fake_root(base), base / "tdest")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_logs_never_give_a_traceback(built_tdest, tmp_path, data):
    tdest = Path(tempfile.mkdtemp(dir=tmp_path)) / "tdest"
    shutil.copytree(built_tdest, tdest)
    log = tdest / data.draw(st.sampled_from([COPY_LOG, SKIP_LOG, f"{RUN}_ConsoleLog.txt"]), label="log")
    lines = log.read_text(encoding="utf-8").split("\r\n")
    position = data.draw(st.integers(0, len(lines) - 1), label="line")
    if data.draw(st.booleans(), label="one field"):
        fields = lines[position].split(",")
        fields[data.draw(st.integers(0, len(fields) - 1), label="field")] = data.draw(FIELD_TEXT, label="text")
        lines[position] = ",".join(fields)
    else:
        lines[position] = data.draw(FIELD_TEXT, label="line text")
    log.write_bytes("\r\n".join(lines).encode("utf-8", "surrogateescape"))
    try:
        container = read(tdest)
    except ContainerError:
        return
    names = {entry.name for entry in container.archive.entries}
    for item in container.files:
        drive, *parts = item.path.split("/")
        assert len(drive) == 2 and drive[1] == ":" and drive[0].isupper()
        assert parts and "" not in parts and "." not in parts and ".." not in parts
        assert not any("\\" in part or "\0" in part for part in parts)
        assert isinstance(item.size, int) and 0 <= item.size <= MAX_SIZE
        assert item.member is None or item.member in names
    json.dumps(container.custody())
