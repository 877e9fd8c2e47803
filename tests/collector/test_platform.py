"""The platform seam (collector/fs/platform.py): which backend a run takes, and what the POSIX one refuses."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from aitrail.collector.bundle import records as oc
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.bundle.tagfiles import files_jsonl
from aitrail.collector.catalog.schema import Store
from aitrail.collector.finding.plan import Location, Target
from aitrail.collector.finding.walk import Tree
from aitrail.collector.fs import linux, platform
from aitrail.collector.fs.backend import DATALESS_REASON, PRIVACY_NOTE, SF_DATALESS, PrivacyRefused
from aitrail.collector.fs.linux import LinuxBackend
from aitrail.collector.fs.posix import PosixBackend
from aitrail.collector.reading.capture import Capturer
from aitrail.collector.verify import verify
from tests.conftest import FIXTURES, TOY_CATALOG, bundle_json, bundle_records, toy_collect, write_tree

# -- choosing the backend -------------------------------------------------------------------------


@pytest.mark.parametrize(("environ", "system", "name", "chosen_by"), [
    ({}, "linux", "linux", "sys.platform linux"),
    ({"AITRAIL_PLATFORM": ""}, "linux", "linux", "sys.platform linux"),
    ({"AITRAIL_PLATFORM": "posix"}, "linux", "posix", "AITRAIL_PLATFORM=posix"),
    ({"AITRAIL_PLATFORM": "linux"}, "linux", "linux", "AITRAIL_PLATFORM=linux"),
    ({}, "darwin", "posix", "sys.platform darwin"),
    ({}, "freebsd14", "posix", "sys.platform freebsd14"),
    ({}, "openbsd7", "posix", "sys.platform openbsd7"),
])
def test_the_backend_is_chosen_by_the_variable_then_the_system(environ, system, name, chosen_by):
    backend = platform.choose(environ, system)
    assert backend.name == name and backend.chosen_by == chosen_by
    assert isinstance(backend, LinuxBackend if name == "linux" else PosixBackend)


def test_only_macos_names_privacy_protection():
    assert platform.choose({}, "darwin").privacy_refusals is True
    assert platform.choose({}, "freebsd14").privacy_refusals is False
    assert platform.choose({"AITRAIL_PLATFORM": "posix"}, "linux").privacy_refusals is False


@pytest.mark.parametrize("value", ["Linux", "macos", "windows", "posix "])
def test_an_unknown_value_is_an_error_naming_the_accepted_ones(value):
    with pytest.raises(platform.UnknownPlatformChoice) as raised:
        platform.choose({"AITRAIL_PLATFORM": value}, "linux")
    assert repr(value) in str(raised.value) and "linux, posix" in str(raised.value)


def test_the_linux_backend_is_refused_off_linux():
    with pytest.raises(platform.UnknownPlatformChoice, match="Linux only"):
        platform.choose({"AITRAIL_PLATFORM": "linux"}, "darwin")


@pytest.mark.parametrize("environ", [{}, {"AITRAIL_PLATFORM": "posix"}, {"AITRAIL_PLATFORM": "linux"}])
@pytest.mark.parametrize("system", ["win32", "cygwin"])
def test_windows_is_refused_with_the_way_to_collect_it(environ, system):
    with pytest.raises(platform.UnsupportedPlatform) as raised:
        platform.choose(environ, system)
    message = str(raised.value)
    assert message == platform.WINDOWS_MESSAGE
    assert "not supported" in message and "KAPE" in message and "Velociraptor" in message and "--root" in message
    assert isinstance(raised.value, platform.PlatformError)


def test_an_untested_system_is_refused_but_may_be_forced():
    with pytest.raises(platform.UnsupportedPlatform, match="AITRAIL_PLATFORM=posix"):
        platform.choose({}, "sunos5")
    assert platform.choose({"AITRAIL_PLATFORM": "posix"}, "sunos5").name == "posix"


def test_the_linux_backend_never_exists_without_o_noatime(monkeypatch):
    monkeypatch.setattr(linux, "O_NOATIME", 0)
    with pytest.raises(ValueError, match="O_NOATIME"):
        LinuxBackend("test")


def test_a_run_keeps_one_backend_until_the_variable_changes(monkeypatch):
    monkeypatch.setenv("AITRAIL_PLATFORM", "posix")
    first = platform.current()
    assert platform.current() is first and first.name == "posix"
    monkeypatch.setenv("AITRAIL_PLATFORM", "linux")
    assert platform.current().name == "linux"
    monkeypatch.setenv("AITRAIL_PLATFORM", "bogus")
    with pytest.raises(platform.UnknownPlatformChoice):
        platform.current()


# -- what each backend records ----------------------------------------------------------------------


def test_each_backend_says_what_it_protects_and_where_birth_time_comes_from():
    linux_record = LinuxBackend("sys.platform linux").record()
    assert linux_record == {"backend": "linux", "chosen_by": "sys.platform linux", "atime_protection": "o_noatime",
                            "birth_time_source": "statx", "birth_time_precision": "ns",
                            "dataless_check": "none", "privacy_refusals_named": False}
    posix_record = PosixBackend("AITRAIL_PLATFORM=posix", privacy_refusals=False).record()
    # on Linux, os.stat has neither st_birthtime nor st_flags: the POSIX backend says it has neither
    assert posix_record["atime_protection"] == "none"
    assert posix_record["birth_time_source"] == "none" and posix_record["birth_time_precision"] is None
    assert posix_record["dataless_check"].startswith("none")


def test_a_float_birth_time_is_recorded_as_float_seconds(monkeypatch):
    backend = PosixBackend("test", privacy_refusals=True)
    backend.birth_time_source, backend.birth_time_precision = "st_birthtime", "float seconds"
    assert backend._birth_ns(SimpleNamespace(st_birthtime=1_700_000_000.25)) == 1_700_000_000_250_000_000
    # a double near 1.7e9 s holds the fraction to about 0.24 us: the ns are as near as the float allows
    near = backend._birth_ns(SimpleNamespace(st_birthtime=1_700_000_000.123456789))
    assert abs(near - 1_700_000_000_123_456_789) < 250
    assert backend._birth_ns(SimpleNamespace(st_birthtime=-1.0)) is None  # FreeBSD: the filesystem has none
    backend.birth_time_source = "st_birthtime_ns"
    assert backend._birth_ns(SimpleNamespace(st_birthtime_ns=1_700_000_000_123_456_789)) == 1_700_000_000_123_456_789


def test_birth_time_per_backend(tmp_path):
    (tmp_path / "f").write_text("x")
    linux_meta = LinuxBackend("test").lstat_at(None, str(tmp_path / "f"))
    posix_meta = PosixBackend("test", privacy_refusals=False).lstat_at(None, str(tmp_path / "f"))
    assert posix_meta.btime_ns is None  # Linux's os.stat has no birth time: the POSIX backend has none here
    assert linux_meta.btime_ns is None or linux_meta.btime_ns <= linux_meta.mtime_ns  # statx, if the fs has it
    assert linux_meta.differs_from(posix_meta) is False  # every other field the same


@pytest.mark.parametrize("name", ["linux", "posix"])
def test_collection_json_and_files_jsonl_say_what_the_backend_did(cli, tmp_path, name):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]", ".toy/sessions/a/s.jsonl": "{}\n"})
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", TOY_CATALOG, "--home", home, "-o", out, "--quiet",
                 env={"AITRAIL_PLATFORM": name})
    assert result.exit_code == 0, result.output
    recorded = bundle_json(out, "aitrail/collection.json")["platform"]
    assert recorded["backend"] == name and recorded["chosen_by"] == f"AITRAIL_PLATFORM={name}"
    protection = "o_noatime" if name == "linux" else "none"
    assert recorded["atime_protection"] == protection
    assert recorded["birth_time_source"] == ("statx" if name == "linux" else "none")
    collected = [r for r in bundle_records(out) if r["outcome"] == "collected"]
    assert len(collected) == 2
    assert all(r["atime_protection"] == protection and r["o_noatime"] is (name == "linux") for r in collected)
    if name == "posix":
        assert all(r["stat"]["btime_ns"] is None for r in collected)


# -- links swapped in: O_NOFOLLOW on the POSIX backend -----------------------------------------------


def _tree(base: Path, backend) -> Tree:
    return Tree(Location(label="h", base=str(base), kind="home"), backend=backend)


def test_posix_refuses_a_symlink_swapped_in_for_a_directory(tmp_path):
    home = write_tree(tmp_path / "h", {"d/inside.txt": "in"})
    write_tree(tmp_path / "outside", {"secret.txt": "never listed"})
    tree = _tree(home, PosixBackend("test", privacy_refusals=False))
    try:
        assert [name for name, _ in tree.listdir(())] == ["d"]
        (home / "d/inside.txt").unlink()
        (home / "d").rmdir()
        os.symlink(tmp_path / "outside", home / "d")  # between the parent's listing and the child's open
        with pytest.raises(OSError) as raised:
            tree.listdir(("d",))
        assert raised.value.errno in (errno.ELOOP, errno.ENOTDIR)  # Linux: ENOTDIR (O_DIRECTORY | O_NOFOLLOW)
    finally:
        tree.close()


def test_posix_refuses_a_symlink_swapped_in_for_a_file(tmp_path, monkeypatch):
    home = write_tree(tmp_path / "h", {"f.txt": "the file"})
    (tmp_path / "secret.txt").write_text("never read")
    backend = PosixBackend("test", privacy_refusals=False)
    real_lstat = backend.lstat_at

    def lstat_then_swap(dir_fd, name):
        meta = real_lstat(dir_fd, name)
        (home / "f.txt").unlink()
        os.symlink(tmp_path / "secret.txt", home / "f.txt")
        return meta

    monkeypatch.setattr(backend, "lstat_at", lstat_then_swap)
    tree = _tree(home, backend)
    try:
        capture = Capturer(tree, str(tmp_path), writer=None).capture(("f.txt",), "data/h/f.txt")
    finally:
        tree.close()
    assert capture.outcome == "changed_during_read" and capture.error.errno == errno.ELOOP
    assert capture.data is None and "replaced by a symlink" in capture.notes[0]


def test_a_bsd_link_errno_is_the_walk_s_eloop(tmp_path, monkeypatch):
    backend = PosixBackend("test", privacy_refusals=False)

    def freebsd_open(path, flags, mode=0o777, *, dir_fd=None):
        raise OSError(errno.EMLINK, os.strerror(errno.EMLINK), path)  # FreeBSD's O_NOFOLLOW on a link

    monkeypatch.setattr(os, "open", freebsd_open)
    with pytest.raises(OSError) as raised:
        backend.open_file("link", 3)
    assert raised.value.errno == errno.ELOOP and "O_NOFOLLOW" in raised.value.strerror


# -- cloud placeholders (SF_DATALESS) ------------------------------------------------------------------


class FakeCloud(PosixBackend):
    """The POSIX backend on a system whose stat has st_flags, with these inodes flagged SF_DATALESS."""

    def __init__(self, placeholders: set[int]):
        super().__init__("test", privacy_refusals=True)
        self.flags_checked = True
        self.placeholders = placeholders
        self.listed: list[int] = []  # inodes of the directories listed

    def st_flags(self, result) -> int:
        return SF_DATALESS if result.st_ino in self.placeholders else 0

    def scandir(self, fd: int):
        self.listed.append(os.fstat(fd).st_ino)
        return super().scandir(fd)


@pytest.fixture
def use_backend(monkeypatch):
    """Make ``platform.current()`` give this backend for the rest of the test."""

    def use(backend):
        monkeypatch.setattr(platform, "current", lambda: backend)
        return backend

    return use


def test_a_cloud_placeholder_is_recorded_and_never_opened(cli, tmp_path, use_backend, opened_paths):
    home = write_tree(tmp_path / "h", {".toy/notes/cloud.txt": "in iCloud only", ".toy/notes/local.txt": "here"})
    use_backend(FakeCloud({os.lstat(home / ".toy/notes/cloud.txt").st_ino}))
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, home, out)
    assert result.exit_code == 0, result.output  # skipped by choice: not a partial run
    records = {r["path"]: r for r in bundle_records(out)}
    cloud = records[".toy/notes/cloud.txt"]
    assert cloud["outcome"] == "not_read_would_download" and cloud["class"] == "skipped"
    assert cloud["reason"] == DATALESS_REASON and cloud["member"] is None and cloud["sha256"] is None
    assert cloud["stat"]["size"] == len("in iCloud only") and "atime_protection" not in cloud
    assert records[".toy/notes/local.txt"]["outcome"] == "collected"
    assert "cloud.txt" not in opened_paths and "local.txt" in opened_paths
    counts = bundle_json(out, "aitrail/collection.json")["counts"]
    assert counts["by_outcome"]["not_read_would_download"] == 1 and counts["skipped"] >= 1
    assert verify(str(out)).ok
    _report_lists_the_placeholder(out, str(home / ".toy/notes/cloud.txt"))


def _report_lists_the_placeholder(bundle: Path, source_path: str) -> None:
    """The HTML report names the placeholder in a list of its own, not among failures."""
    from aitrail.analyzer.report.data import read_accounting
    from aitrail.analyzer.report.html import accounting_section

    with BundleReader(bundle) as reader:
        accounting = read_accounting(reader)
    assert accounting.counts["not_read_would_download"] == 1 and not accounting.failures
    assert [entry["path"] for entry in accounting.not_downloaded] == [source_path]
    page = accounting_section(accounting, {})
    assert "Cloud placeholders (not read: reading would download them): 1" in page and source_path in page


def test_a_cloud_placeholder_directory_is_never_listed(cli, tmp_path, use_backend):
    home = write_tree(tmp_path / "h", {".toy/sessions/cloud/s.jsonl": "{}\n", ".toy/sessions/here/s.jsonl": "{}\n"})
    cloud = os.lstat(home / ".toy/sessions/cloud").st_ino
    backend = use_backend(FakeCloud({cloud}))
    out = tmp_path / "b.tar.zst"
    toy_collect(cli, home, out)
    records = {r["path"]: r for r in bundle_records(out)}
    assert cloud not in backend.listed and os.lstat(home / ".toy/sessions/here").st_ino in backend.listed
    assert ".toy/sessions/cloud/s.jsonl" not in records
    assert records[".toy/sessions/here/s.jsonl"]["outcome"] == "collected"
    assert "SF_DATALESS" in records[".toy/sessions/cloud"]["error"]
    assert verify(str(out)).ok


# -- macOS privacy protection (TCC) --------------------------------------------------------------------


def _refusing_open(monkeypatch, refused: set[str]) -> None:
    """``os.open`` fails with EPERM for these names, as TCC makes it on macOS."""
    real_open = os.open

    def tcc_open(path, *args, **kwargs):
        if os.fsdecode(path) in refused:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", tcc_open)


@pytest.mark.parametrize("macos", [True, False])
def test_eperm_on_macos_names_privacy_protection_and_full_disk_access(cli, tmp_path, monkeypatch, use_backend,
                                                                      macos):
    home = write_tree(tmp_path / "h", {".toy/sessions/Containers/s.jsonl": "{}\n", ".toy/notes/locked.txt": "x",
                                       ".toy/notes/open.txt": "y"})
    use_backend(PosixBackend("test", privacy_refusals=macos))
    _refusing_open(monkeypatch, {"Containers", "locked.txt"})
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 3  # partial: something could not be read
    records = {r["path"]: r for r in bundle_records(out)}
    for path in (".toy/sessions/Containers", ".toy/notes/locked.txt"):  # a listing refused, and a read
        record = records[path]
        assert record["outcome"] == "permission_denied" and record["errno"] == errno.EPERM
        named = PRIVACY_NOTE in record.get("notes", [])
        assert named is macos, path
    if macos:
        assert "TCC" in PRIVACY_NOTE and "Full Disk Access" in PRIVACY_NOTE
    assert records[".toy/notes/open.txt"]["outcome"] == "collected"
    assert verify(str(out)).ok


def _entry(error: OSError | None, notes: list[str]) -> oc.Entry:
    store = Store(id="toy.notes", root="~", include=("x",), role="memory", format="text", description="")
    target = Target(location=Location(label="h", base="/home/h", kind="home"), agent="toy", store=store.id,
                    segments=("x",), glob="x", excludes=(), refines=(), never=False, store_def=store)
    entry = oc.Entry(target, ("notes", "x"), "file", None, outcome=oc.DENIED, error=error, notes=notes)
    entry.atime_protection = "none"
    return entry


@pytest.mark.parametrize("notes", [[], ["a note of the walk"]])
def test_both_renderers_write_the_privacy_note(notes):
    refused = PrivacyRefused(errno.EPERM, os.strerror(errno.EPERM), "x")
    entries = [_entry(refused, notes), _entry(PermissionError(errno.EACCES, "denied"), notes), _entry(None, notes)]
    lines = files_jsonl(entries).decode().splitlines()
    assert lines == [json.dumps(entry.as_record(), sort_keys=True, ensure_ascii=False) for entry in entries]
    assert json.loads(lines[0])["notes"] == [*notes, PRIVACY_NOTE]
    assert json.loads(lines[1]).get("notes", []) == notes
    assert json.loads(lines[0])["o_noatime"] is False and json.loads(lines[0])["atime_protection"] == "none"


# -- the same evidence through either backend ---------------------------------------------------------


def test_the_posix_backend_collects_the_demo_home_with_the_same_digests(cli, tmp_path):
    home = FIXTURES / "demo-home"
    bundles = {}
    for name in ("linux", "posix"):
        out = bundles[name] = tmp_path / f"{name}.tar.zst"
        result = cli("collect", "--home", home, "-o", out, "--quiet", env={"AITRAIL_PLATFORM": name})
        assert result.exit_code == 0, result.output + result.stderr
        assert verify(str(out)).ok
    manifests = {}
    for name, out in bundles.items():
        with BundleReader(out) as reader:
            manifests[name] = reader.read_data("manifest-sha256.txt").decode().splitlines()
    assert len(manifests["linux"]) > 10 and manifests["posix"] == manifests["linux"]

    def outcomes(out):
        return {r["path"]: (r["outcome"], r["sha256"], r["stat"]["size"] if r.get("stat") else None)
                for r in bundle_records(out)}

    assert outcomes(bundles["posix"]) == outcomes(bundles["linux"])
