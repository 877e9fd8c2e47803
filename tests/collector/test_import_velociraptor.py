"""The Velociraptor reader (collector/foreign/velociraptor.py) on built collections, demo-home, and hostile ones."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aitrail.collector.foreign import velociraptor_records as vr
from aitrail.collector.foreign.container import MAX_SIZE, ContainerError
from aitrail.collector.foreign.velociraptor import VelociraptorContainer
from tests.collector import container_velociraptor as builder
from tests.conftest import FIXTURES, write_tree

META = "results/Generic.Collectors.File%2FAll Matches Metadata.json"
UPLOADS = "results/Generic.Collectors.File%2FUploads.json"


def linux_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "root", {
        "home/alice/.claude/history.jsonl": '{"display": "fix the bug"}\n',
        "home/alice/.claude/.credentials.json": '{"token": "sk-fake"}',
        "home/alice/.claude/projects/-home-alice-a:b/100%.jsonl": "{}\n",
        "home/alice/.config/Code/User/globalStorage/café.json": '{"k": 1}\n',
        "home/alice/.gemini/tmp/trailing. ": "x",
        "etc/hostname": "alice-laptop\n",
    })


def windows_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "wroot", {
        "Users/alice/.claude/history.jsonl": '{"display": "fix the bug"}\n',
        "Users/alice/AppData/Roaming/Code/User/globalStorage/state.json": '{"k": 1}\n',
        "Users/alice/.codex/auth.json": '{"token": "sk-fake"}',
    })


def read(path: Path) -> VelociraptorContainer:
    container = VelociraptorContainer(str(path))
    container.read()
    return container


def by_path(container) -> dict:
    return {item.path: item for item in container.files}


def lines_of(archive: Path, member: str) -> dict[str, int]:
    """SourceFile -> line number in a results member."""
    with zipfile.ZipFile(archive) as opened:
        rows = opened.read(member).decode().splitlines()
    return {json.loads(row)["SourceFile"]: number for number, row in enumerate(rows, 1)}


def test_an_offline_linux_collection_gives_every_file_with_its_rows(tmp_path):
    root = linux_root(tmp_path)
    archive = builder.build(root, tmp_path / "out")
    container = read(archive)
    assert container.windows is False
    expected_members = {
        "/home/alice/.claude/history.jsonl": "uploads/auto/home/alice/%2Eclaude/history.jsonl",
        "/home/alice/.claude/.credentials.json": "uploads/auto/home/alice/%2Eclaude/%2Ecredentials.json",
        "/home/alice/.claude/projects/-home-alice-a:b/100%.jsonl":
            "uploads/auto/home/alice/%2Eclaude/projects/-home-alice-a%3Ab/100%25.jsonl",
        "/home/alice/.config/Code/User/globalStorage/café.json":
            "uploads/auto/home/alice/%2Econfig/Code/User/globalStorage/café.json",
        "/home/alice/.gemini/tmp/trailing. ": "uploads/auto/home/alice/%2Egemini/tmp/trailing.%20",
        "/etc/hostname": "uploads/auto/etc/hostname",
    }
    files = by_path(container)
    assert {path: item.member for path, item in files.items()} == expected_members
    meta_lines, upload_lines = lines_of(archive, META), lines_of(archive, UPLOADS)
    for path, item in files.items():
        source = (root / path.lstrip("/")).lstat()
        at, up = f"{META} line {meta_lines[path]}", f"{UPLOADS} line {upload_lines[path]}"
        assert item.kind == "file" and item.size == source.st_size
        assert item.recorded.as_record() == {
            "mtime_ns": source.st_mtime_ns, "atime_ns": source.st_atime_ns, "ctime_ns": source.st_ctime_ns,
            "digests": {"sha256": hashlib.sha256((root / path.lstrip("/")).read_bytes()).hexdigest()},
            "sources": {"mtime": f"Modified of {at}", "atime": f"LastAccessed of {at}", "ctime": f"Changed of {at}",
                        "sha256": f"SourceFileSha256 of {up}"}}  # Created is Go's zero time: no btime
    assert container.problems == []
    assert container.hostname == "alice-laptop"
    assert container.hostname_source == ("client_info.json Hostname (the info() row of the host the offline "
                                         "collector ran on)")
    assert container.tool_version is None
    meta = container.metadata
    assert meta["collection"]["value"] == "offline collector"
    assert meta["os"] == {"value": "linux", "source": "client_info.json OS"}
    assert meta["flow_id"] == {"value": "F.D1ABC234EF", "source": "collection_context.json flow_id"}
    assert meta["parameters"]["value"] == {"Generic.Collectors.File": {  # printable: a line break written as \n
        "collectionSpec": "Glob\\nhome/*/.claude/**\\n", "Root": "/"}}
    assert meta["results_read"]["value"] == {META: {"rows_naming_a_file": 6}, UPLOADS: {"rows_naming_a_file": 6}}
    assert meta["log"]["value"]["lines_by_level"] == {"DEFAULT": 2}
    assert container.recorded_fields["ctime"] == "Changed of the result rows (Generic.Collectors.File's columns) " \
                                                 "(the inode change time)"
    assert container.recorded_fields["mode"] == "not recorded (the rows carry no mode; zip members carry none)"
    assert container.layout.startswith("offline collector: uploads/<accessor>/<client path, %-escaped>")
    streamed = {name: handle.read() for name, handle in container.stream({expected_members["/etc/hostname"]})}
    assert streamed == {"uploads/auto/etc/hostname": b"alice-laptop\n"}


def test_an_offline_windows_collection_takes_no_ctime_from_the_auto_accessor(tmp_path):
    root = windows_root(tmp_path)
    archive = builder.build(root, tmp_path / "out", windows=True)
    container = read(archive)
    assert container.windows is True
    files = by_path(container)
    assert sorted(files) == ["C:/Users/alice/.claude/history.jsonl", "C:/Users/alice/.codex/auth.json",
                             "C:/Users/alice/AppData/Roaming/Code/User/globalStorage/state.json"]
    item = files["C:/Users/alice/.claude/history.jsonl"]
    source = (root / "Users/alice/.claude/history.jsonl").lstat()
    line = lines_of(archive, META)["C:\\Users\\alice\\.claude\\history.jsonl"]
    at = f"{META} line {line}"
    assert item.member == "uploads/auto/C%3A/Users/alice/%2Eclaude/history.jsonl"
    assert (item.recorded.mtime_ns, item.recorded.atime_ns, item.recorded.btime_ns, item.recorded.ctime_ns) == (
        source.st_mtime_ns, source.st_atime_ns, source.st_ctime_ns, None)
    assert item.recorded.sources["btime"] == f"Created of {at}"
    assert "ctime" not in item.recorded.sources
    assert container.recorded_fields["ctime"].startswith("not recorded for files read with the file/auto accessor")
    assert container.problems == []


def test_a_server_export_with_the_ntfs_accessor(tmp_path):
    root = windows_root(tmp_path)
    archive = builder.build(root, tmp_path / "out", windows=True, accessor="ntfs", flavour="server")
    container = read(archive)
    item = by_path(container)["C:/Users/alice/.codex/auth.json"]
    source = (root / "Users/alice/.codex/auth.json").lstat()
    assert item.member == "uploads/ntfs/%5C%5C.%5CC%3A/Users/alice/%2Ecodex/auth.json"
    # the export's zip times are the export's, not the file's: the rows' times are taken, and no problem is made
    assert (item.recorded.mtime_ns, item.recorded.ctime_ns) == (source.st_mtime_ns, source.st_ctime_ns)
    assert container.tool_version == "0.76.6"
    assert container.hostname_source == "client_info.json hostname (the server's record of client C.1a2b3c4d5e6f7a8b)"
    assert container.metadata["collection"]["value"] == "server flow export"
    assert container.metadata["creator"]["value"] == "examiner"
    assert container.problems == []


def test_times_with_an_offset_are_read_as_utc(tmp_path):
    archive = builder.build(linux_root(tmp_path), tmp_path / "utc")
    rows = [json.loads(line) for line in member(archive, META).decode().splitlines()]
    for row in rows:  # the same instants written at UTC-05:30, as a client in that zone writes them
        for column in ("Changed", "Modified", "LastAccessed"):
            row[column] = builder.go_time(vr.parse_time(row[column])[0], offset_minutes=-330)
    assert rows[0]["Modified"].endswith("-05:30")
    shifted = by_path(read(rewrite(archive, {META: "\n".join(map(json.dumps, rows)).encode()})))
    utc = by_path(read(archive))
    assert {path: item.recorded.as_record() for path, item in shifted.items()} == {
        path: item.recorded.as_record() for path, item in utc.items()}


def test_an_aitrailfiles_collection_is_read_by_its_columns(tmp_path):
    root = linux_root(tmp_path)
    archive = builder.build(root, tmp_path / "out", artifact="Linux.Collection.AITrailFiles", sources=("Uploads",))
    container = read(archive)
    item = by_path(container)["/home/alice/.claude/history.jsonl"]
    name = "results/Linux.Collection.AITrailFiles%2FUploads.json"
    line = lines_of(archive, name)["/home/alice/.claude/history.jsonl"]
    assert item.recorded.sources == {key: f"{column} of {name} line {line}" for key, column in (
        ("mtime", "Modified"), ("atime", "LastAccessed"), ("ctime", "Changed"), ("sha256", "SourceFileSha256"))}
    assert len(container.files) == 6 and container.problems == []


@pytest.mark.parametrize("windows", [False, True])
def test_demo_home_every_file_is_found(tmp_path, windows):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "demo-home", root / ("Users" if windows else "home") / "alice", symlinks=True)
    container = read(builder.build(root, tmp_path / "out", windows=windows))
    expected = {("C:/" if windows else "/") + relative: path for relative, path in builder.subject_files(root)}
    files = by_path(container)
    assert set(files) == set(expected)
    for path, source in expected.items():
        assert files[path].recorded.digests == {"sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
        assert files[path].recorded.mtime_ns == source.lstat().st_mtime_ns
    assert container.problems == []


def test_an_extracted_collection_in_a_folder_reads_the_same(tmp_path):
    archive = builder.build(linux_root(tmp_path), tmp_path / "out")
    zipped = read(archive)
    extracted = tmp_path / "extracted" / "Collection-alice-laptop"
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(extracted)
    for path in (extracted, extracted.parent):
        container = read(path)
        assert [(f.path, f.size, f.recorded.as_record()) for f in container.files if f.kind == "file"] == [
            (f.path, f.size, f.recorded.as_record()) for f in zipped.files]
        assert {f.path for f in container.files if f.kind == "dir"} == {
            "/etc", "/home", "/home/alice", "/home/alice/.claude", "/home/alice/.claude/projects",
            "/home/alice/.claude/projects/-home-alice-a:b", "/home/alice/.config", "/home/alice/.config/Code",
            "/home/alice/.config/Code/User", "/home/alice/.config/Code/User/globalStorage", "/home/alice/.gemini",
            "/home/alice/.gemini/tmp"}
        assert container.problems == []
    assert read(extracted.parent).files[0].member.startswith("Collection-alice-laptop/uploads/auto/")


# -- hostile collections ----------------------------------------------------------------------

def rewrite(archive: Path, replace: dict[str, bytes | None], add: dict[str, bytes] | None = None) -> Path:
    """A copy of the zip with members replaced, removed (None) or added."""
    out = archive.with_name("hostile-" + archive.name)
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename in replace:
                if replace[info.filename] is not None:
                    target.writestr(info, replace[info.filename])
            else:
                target.writestr(info, source.read(info))
        for name, data in (add or {}).items():
            target.writestr(name, data)
    return out


def member(archive: Path, name: str) -> bytes:
    with zipfile.ZipFile(archive) as opened:
        return opened.read(name)


def small(tmp_path: Path) -> Path:
    return builder.build(write_tree(tmp_path / "root", {"home/alice/.claude/a.jsonl": "aaaaa",
                                                        "home/alice/.claude/b.jsonl": "bb"}), tmp_path / "out")


A, B = "/home/alice/.claude/a.jsonl", "/home/alice/.claude/b.jsonl"
MEMBER_A = "uploads/auto/home/alice/%2Eclaude/a.jsonl"


def test_lines_that_do_not_parse_are_named_and_later_lines_read(tmp_path):
    archive = small(tmp_path)
    rows = member(archive, META).decode().splitlines()
    uploads = member(archive, "uploads.json").decode().splitlines()
    hostile = rewrite(archive, {META: ("{not json\n[1, 2]\n" + "\n".join(rows) + "\n").encode(),
                                "uploads.json": ("garbage\n" + "\n".join(uploads) + "\n").encode()})
    container = read(hostile)
    assert container.problems == ["uploads.json line 1: not JSON; skipped", f"{META} line 1: not JSON; skipped",
                                  f"{META} line 2: not a JSON object; skipped"]
    assert by_path(container)[A].recorded.sources["mtime"] == f"Modified of {META} line 3"


def test_bad_values_are_named_and_not_used(tmp_path):
    archive = small(tmp_path)
    rows = [json.loads(line) for line in member(archive, META).decode().splitlines()]
    rows[0].update({"Modified": "yesterday", "LastAccessed": "2026-02-30T00:00:00Z", "Size": -5})
    uploads = [json.loads(line) for line in member(archive, UPLOADS).decode().splitlines()]
    uploads[0]["SourceFileSha256"] = "zz"
    container = read(rewrite(archive, {META: "\n".join(map(json.dumps, rows)).encode(),
                                       UPLOADS: "\n".join(map(json.dumps, uploads)).encode()}))
    assert container.problems == [
        f"{META} line 1: Modified 'yesterday' is not an RFC 3339 time; not used",
        f"{META} line 1: LastAccessed '2026-02-30T00:00:00Z' is not an RFC 3339 time; not used",
        f"{META} line 1: Size '-5' is not a size; not used",
        f"{UPLOADS} line 1: SourceFileSha256 'zz' is not a sha256; not used",
    ]
    item = by_path(container)[A]
    # Modified from the Uploads row instead; the zip's UT time agrees with it
    assert item.recorded.sources["mtime"] == f"Modified of {UPLOADS} line 1"
    assert "sha256" not in item.recorded.digests


def test_rows_that_disagree_keep_the_first_and_say_so(tmp_path):
    archive = small(tmp_path)
    uploads = [json.loads(line) for line in member(archive, UPLOADS).decode().splitlines()]
    first = [json.loads(line) for line in member(archive, META).decode().splitlines()][0]
    uploads[0]["Modified"] = "2001-01-01T00:00:00Z"
    uploads[0]["FileSize"] = 4
    container = read(rewrite(archive, {UPLOADS: "\n".join(map(json.dumps, uploads)).encode()}))
    kept, _ = vr.parse_time(first["Modified"])
    assert container.problems == [
        f"Modified of {UPLOADS} line 1: 978307200000000000 differs from {kept} (Modified of {META} line 1); the first "
        "is kept",
        f"{UPLOADS} line 1: FileSize 4 differs from 5 (Size of {META} line 1); the first is kept",
    ]


def test_the_zip_header_time_disagreeing_with_the_rows_is_named(tmp_path):
    archive = small(tmp_path)
    rows = [json.loads(line) for line in member(archive, META).decode().splitlines()]
    uploads = [json.loads(line) for line in member(archive, UPLOADS).decode().splitlines()]
    for row in (rows[0], uploads[0]):
        row["Modified"] = "2001-01-01T00:00:00Z"
    container = read(rewrite(archive, {META: "\n".join(map(json.dumps, rows)).encode(),
                                       UPLOADS: "\n".join(map(json.dumps, uploads)).encode()}))
    zip_seconds = (tmp_path / "root/home/alice/.claude/a.jsonl").lstat().st_mtime_ns // 1_000_000_000
    assert container.problems == [
        f"{MEMBER_A}: the zip's UT extra field of {MEMBER_A} says mtime {zip_seconds} s; Modified of {META} line 1 "
        "says 978307200000000000 ns; the row's is kept"]


def test_without_rows_the_zip_header_gives_the_mtime(tmp_path):
    archive = small(tmp_path)
    container = read(rewrite(archive, {META: None, UPLOADS: None}))
    item = by_path(container)[A]
    seconds = (tmp_path / "root/home/alice/.claude/a.jsonl").lstat().st_mtime_ns // 1_000_000_000
    assert item.recorded.as_record() == {"mtime_ns": seconds * 1_000_000_000, "sources": {
        "mtime": f"the zip's UT extra field of {MEMBER_A} (upload(mtime=...), whole seconds)"}}
    assert container.problems == [
        f"{MEMBER_A}: no result row names {A}; no times or digests recorded for it",
        "uploads/auto/home/alice/%2Eclaude/b.jsonl: no result row names "
        f"{B}; no times or digests recorded for it"]


def test_names_that_are_malformed_or_leave_the_tree_are_left_out(tmp_path):
    archive = small(tmp_path)
    hostile = rewrite(archive, {}, add={
        "uploads/auto/home/alice/%zz/x": b"1", "uploads/auto/home/%2E%2E/%2E%2E/etc/shadow": b"2",
        "uploads/auto/home/alice/a%00b": b"3", "uploads/data/x": b"4", "uploads/sparse/C%3A/y": b"5",
        "uploads/auto/home/alice/back%5Cslash": b"6"})
    container = read(hostile)
    assert sorted(container.problems) == sorted([
        "1 member under uploads/data/: accessor 'data' does not read the subject's filesystem; left out",
        "1 member under uploads/sparse/: accessor 'sparse' does not read the subject's filesystem; left out",
        "uploads/auto/home/alice/%zz/x: a malformed %-escape in its name; left out",
        "uploads/auto/home/%2E%2E/%2E%2E/etc/shadow: not a path of the subject (the path could leave the subject's "
        "tree or holds a backslash); left out",
        "uploads/auto/home/alice/a%00b: not a path of the subject (a component holds NUL or '/'); left out",
        "uploads/auto/home/alice/back%5Cslash: not a path of the subject (the path could leave the subject's tree "
        "or holds a backslash); left out",
    ])
    assert sorted(by_path(container)) == [A, B]


def test_records_of_files_not_in_the_container(tmp_path):
    archive = small(tmp_path)
    rows = member(archive, META).decode() + json.dumps(
        {"Created": "0001-01-01T00:00:00Z", "Modified": "2026-01-01T00:00:00Z", "Size": 10 ** 9,
         "SourceFile": "/home/alice/.claude/huge.jsonl"}) + "\n"
    uploads_rows = member(archive, UPLOADS).decode() + json.dumps(
        {"SourceFile": "/home/alice/.claude/lost.jsonl", "FileSize": 3, "SourceFileSha256": "ab" * 32}) + "\n"
    listed = member(archive, "uploads.json").decode() + json.dumps(
        {"_Components": ["uploads", "auto", "home", "alice", ".claude", "gone.jsonl"], "file_size": 9,
         "uploaded_size": 9, "Type": ""}) + "\n"
    container = read(rewrite(archive, {META: rows.encode(), UPLOADS: uploads_rows.encode(),
                                       "uploads.json": listed.encode()}))
    files = by_path(container)
    assert (files["/home/alice/.claude/huge.jsonl"].member, files["/home/alice/.claude/huge.jsonl"].size) == (None,
                                                                                                            10 ** 9)
    assert files["/home/alice/.claude/huge.jsonl"].recorded.as_record() == {
        "mtime_ns": 1767225600000000000, "sources": {"mtime": f"Modified of {META} line 3"}}
    assert (files["/home/alice/.claude/lost.jsonl"].member, files["/home/alice/.claude/lost.jsonl"].size) == (None, 3)
    assert (files["/home/alice/.claude/gone.jsonl"].member, files["/home/alice/.claude/gone.jsonl"].size) == (None, 9)
    assert container.problems == [
        "/home/alice/.claude/lost.jsonl: the result rows record it as uploaded, but the container holds no member "
        "for it",
        "uploads.json line 3: uploads/auto/home/alice/%2Eclaude/gone.jsonl is not in the container"]


def test_sizes_that_lie_are_named(tmp_path):
    archive = small(tmp_path)
    listed = [json.loads(line) for line in member(archive, "uploads.json").decode().splitlines()]
    listed[0].update({"file_size": 999, "uploaded_size": 3})
    rows = [json.loads(line) for line in member(archive, META).decode().splitlines()]
    rows[0]["Size"] = 999
    container = read(rewrite(archive, {"uploads.json": "\n".join(map(json.dumps, listed)).encode(),
                                       META: "\n".join(map(json.dumps, rows)).encode()}))
    assert by_path(container)[A].size == 999
    assert container.problems == [
        f"{UPLOADS} line 1: FileSize 5 differs from 999 (Size of {META} line 1); the first is kept",
        f"{MEMBER_A}: Size of {META} line 1 records 999 bytes; the member holds 5",
        f"{MEMBER_A}: uploads.json line 1 uploaded_size 3; the member holds 5"]


def test_a_sparse_upload_is_recorded_without_its_bytes(tmp_path):
    archive = small(tmp_path)
    listed = member(archive, "uploads.json").decode() + json.dumps(
        {"_Components": ["uploads", "auto", "home", "alice", ".claude", "a.jsonl"], "file_size": 5,
         "uploaded_size": 156, "Type": "idx"}) + "\n"
    container = read(rewrite(archive, {"uploads.json": listed.encode()}, add={MEMBER_A + ".idx": b"{}"}))
    item = by_path(container)[A]
    assert (item.member, item.size, item.recorded.sources["mtime"]) == (None, 5, f"Modified of {META} line 1")
    assert container.problems == [f"{MEMBER_A}: stored sparse (its .idx lists the ranges); the member holds only the "
                                  "ranges with data, so its bytes are not taken"]
    assert not any(f.path.endswith(".idx") for f in container.files)


def test_a_member_twice_is_left_out(tmp_path):
    archive = small(tmp_path)
    with pytest.warns(UserWarning, match="Duplicate name"):
        hostile = rewrite(archive, {}, add={MEMBER_A: b"other"})
    container = read(hostile)
    assert container.problems == [f"{MEMBER_A}: in the archive 2 times; which copy is Velociraptor's cannot be told, "
                                  "so its bytes are not taken"]
    assert by_path(container)[A].member is None  # its rows still record it


def test_windows_shadow_copies_and_case_duplicates(tmp_path):
    archive = builder.build(windows_root(tmp_path), tmp_path / "out", windows=True)
    hostile = rewrite(archive, {}, add={
        "uploads/ntfs_vss/%5C%5C%3F%5CGLOBALROOT%5CDevice%5CHarddiskVolumeShadowCopy1/Users/alice/x": b"old",
        "uploads/ntfs/%5C%5C.%5CC%3A/USERS/ALICE/.CODEX/AUTH.JSON": b"dup"})
    container = read(hostile)
    assert sorted(container.problems) == sorted([
        "uploads/ntfs/%5C%5C.%5CC%3A/USERS/ALICE/.CODEX/AUTH.JSON: the same file as "
        "uploads/auto/C%3A/Users/alice/%2Ecodex/auth.json; the first is kept",
        "uploads/ntfs_vss/%5C%5C%3F%5CGLOBALROOT%5CDevice%5CHarddiskVolumeShadowCopy1/Users/alice/x: not a path of "
        "the subject (device '\\\\\\\\?\\\\GLOBALROOT\\\\Device\\\\HarddiskVolumeShadowCopy1' is not a drive (a shadow "
        "copy or raw device)); left out",
    ])
    assert len(container.files) == 3


def test_without_client_info_the_os_is_guessed_from_the_paths(tmp_path):
    archive = builder.build(windows_root(tmp_path), tmp_path / "out", windows=True)
    container = read(rewrite(archive, {"client_info.json": None}))
    assert container.windows is True
    assert container.metadata["subject_os"] == {"value": "windows", "source": "guessed from the uploads' paths: "
                                                                               "client_info.json names no OS"}
    assert container.hostname is None
    assert container.problems == ["client_info.json: not in the container; the host and its OS are not stated"]


def test_encrypted_collections_and_strangers_are_refused(tmp_path):
    outer = tmp_path / "Collection-x.zip"
    with zipfile.ZipFile(outer, "w") as out:
        out.writestr("metadata.json", b"[]")
        out.writestr("data.zip", b"PK")
    with pytest.raises(ContainerError, match="password-protected Velociraptor collection"):
        read(outer)
    from tests.collector.test_import_kape import set_encrypted_flag

    archive = small(tmp_path)
    set_encrypted_flag(archive)
    with pytest.raises(ContainerError, match="encrypted members"):
        read(archive)
    with pytest.raises(ContainerError, match="not a Velociraptor collection"):
        read(write_tree(tmp_path / "stranger", {"home/alice/.bashrc": "x"}))


def test_escaping_round_trips_and_malformed_escapes_are_refused():
    for name in (".claude", "a:b", "100%", "trailing. ", " lead", "café", "x\udcff", "a\\b"):
        assert vr.zip_unescape(vr.zip_escape(name)) == name
        assert vr.zip_escape(name) == builder.escape(name)
    assert vr.zip_escape(".claude") == "%2Eclaude"
    assert vr.zip_unescape("a%") == "a"  # Velociraptor drops a lone trailing '%'
    assert vr.zip_unescape("a%4") is None and vr.zip_unescape("a%g0b") is None


# -- property: mutated records never give a traceback ----------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=6)
RECORD_MEMBERS = [META, UPLOADS, "uploads.json", "client_info.json", "collection_context.json", "log.json"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("velociraptor-property")
    return builder.build(write_tree(base / "root", {"home/alice/.claude/a.jsonl": "aaaaa",
                                                    "home/alice/.claude/b.jsonl": "bb"}), base / "out")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_records_never_give_a_traceback(built, tmp_path, data):
    name = data.draw(st.sampled_from(RECORD_MEMBERS), label="member")
    whole = name in ("client_info.json", "collection_context.json")  # one indented object, not JSON lines
    text = member(built, name).decode()
    values = [json.loads(text)] if whole else [json.loads(line) for line in text.splitlines()] or [{}]
    position = data.draw(st.integers(0, len(values) - 1), label="line")
    original = values[position]
    if isinstance(original, dict) and original and data.draw(st.booleans(), label="one key"):
        key = data.draw(st.sampled_from(sorted(original)), label="key")
        values[position] = {**original, key: data.draw(JSON, label="value")}
    else:
        values[position] = data.draw(JSON, label="line value")
    text = "\n".join(json.dumps(value) for value in values)
    if data.draw(st.booleans(), label="raw garbage"):
        text += "\n" + data.draw(st.text(max_size=40), label="garbage")
    out = Path(tempfile.mkdtemp(dir=tmp_path))
    hostile = rewrite(Path(shutil.copy(built, out)), {name: text.encode("utf-8", "surrogateescape")})
    container = read(hostile)
    names = {entry.name for entry in container.archive.entries}
    for item in container.files:
        parts = item.path.split("/")
        assert item.path.startswith("/") and "" not in parts[1:] and "." not in parts and ".." not in parts
        assert isinstance(item.size, int) and 0 <= item.size <= MAX_SIZE
        assert item.member is None or item.member in names
    json.dumps(container.custody())  # the custody record is JSON


def test_a_damaged_zip_is_refused_and_a_damaged_record_named(tmp_path):
    archive = small(tmp_path)
    cut = tmp_path / "cut.zip"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])  # no central directory left
    with pytest.raises(ContainerError, match=r"not a tar \(plain, gzip, bzip2, xz\) or zip archive"):
        read(cut)
    with zipfile.ZipFile(archive) as opened:
        info = opened.getinfo("uploads.json")
    data = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start:start + 8] = b"\xff" * 8  # the member's deflate stream, damaged
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(bytes(data))
    container = read(damaged)
    assert container.problems[0].startswith("member uploads.json: unreadable (")
    assert container.problems[1:] == [
        "uploads.json: not in the container; the uploads' expected and stored sizes are not recorded"]
    assert sorted(by_path(container)) == [A, B]
