"""aitrail import, the core (collector/foreign/run.py, staging.py): any reader's files sealed as a bundle.

The readers of each tool have their own tests (test_import_<tool>.py) and the
round trips through the tools' containers are in test_import_round_trip.py;
here a minimal reader of a ``[root]/`` tar stands for any of them, so that
what the core promises is tested on its own: the same outcomes as
``collect --root``, a credential never read out of the container, the tool's
records in place of the placeholders', digests checked, null where nothing
was recorded, and hostile paths named, never followed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from aitrail.collector import collect
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.foreign import container as foreign
from aitrail.collector.foreign.run import import_read
from aitrail.collector.verify import verify

ROOT = Path(__file__).resolve().parents[2]
DEMO_HOME = ROOT / "fixtures" / "demo-home"
WHOLE_SECOND = 1_764_662_400  # a tar header keeps whole seconds: the fake root's times are whole


class RootTar(foreign.Container):
    """A tool that tars a ``[root]/`` tree; its tar headers are its only records (as a UAC archive's are)."""

    tool = "uac"
    layout = "[root]/ tree (test double)"

    def __init__(self, path: str, records: dict[str, foreign.Recorded] | None = None, unlisted: tuple = ()):
        super().__init__(path)
        self.records = records or {}
        self.unlisted = unlisted  # subject paths the tool "recorded" without copying them
        self.streamed: list[str] = []

    def read(self) -> None:
        """Every ``[root]/`` member, its tar header as its record."""
        for entry in self.archive.scan():
            path = foreign.subject_path(entry.name, "[root]/")
            if path is None:
                self.problems.add(f"member {entry.name!r}: not below [root]/")
                continue
            recorded = self.records.get(path) or foreign.Recorded(
                mtime_ns=entry.mtime_ns, mode=entry.mode, uid=entry.uid, gid=entry.gid,
                sources={"mtime": "tar header", "mode": "tar header", "owner": "tar header"})
            self.files.append(foreign.ForeignFile(path, entry.kind, entry.size,
                                                  entry.name if entry.kind == "file" else None, recorded,
                                                  entry.linkname))
        for path in self.unlisted:
            self.files.append(foreign.ForeignFile(path, "file", 10, None, foreign.Recorded(mtime_ns=0)))
        self.hostname, self.hostname_source = "from-the-archive-name", "its file name (test double)"

    def stream(self, members):
        """The chosen members, each name kept: what was read out of the container."""
        for name, handle in super().stream(members):
            self.streamed.append(name)
            yield name, handle


def fake_root(tmp_path: Path, *, hostname: bool = True) -> Path:
    """A subject root: the demo home as alice's, a credential beside it, whole-second times everywhere."""
    root = tmp_path / "root"
    (root / "home" / "alice").mkdir(parents=True)
    (root / "etc").mkdir()
    os.system(f"cp -a '{DEMO_HOME}/.' '{root}/home/alice/'")
    (root / "home" / "alice" / ".claude" / ".credentials.json").write_text('{"accessToken": "sk-ant-SECRET"}')
    if hostname:
        (root / "etc" / "hostname").write_text("subject-host\n")
    for path in [root, *root.rglob("*")]:
        os.utime(path, (WHOLE_SECOND, WHOLE_SECOND), follow_symlinks=False)
    return root


def tar_of(root: Path, out: Path, extra: list[tuple[str, bytes]] = ()) -> Path:
    """``root`` as a ``[root]/`` tar.gz (what the test double reads), with ``extra`` raw members appended."""
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname="[root]/" + str(path.relative_to(root)), recursive=False)
        for name, data in extra:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), WHOLE_SECOND
            archive.addfile(info, io.BytesIO(data))
    return out


def run_import(container: foreign.Container, out: Path) -> collect.CollectResult:
    """Read and seal ``container`` into ``out``."""
    container.read()
    return import_read(container, collect.CollectOptions(output=str(out), case_id="T", progress=False))


def files_records(bundle: Path) -> list[dict]:
    """files.jsonl of a bundle."""
    with BundleReader(str(bundle)) as reader:
        return [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]


def collection(bundle: Path) -> dict:
    """collection.json of a bundle."""
    with BundleReader(str(bundle)) as reader:
        return json.loads(reader.read_data("aitrail/collection.json"))


def timeline(bundle: Path, tmp_path: Path) -> list[dict]:
    """The analyzer's CSV rows of a bundle."""
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    out = tmp_path / f"{bundle.stem}.csv"
    result = CliRunner().invoke(main, ["analyze", str(bundle), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(out.open(encoding="utf-8")))


def test_import_equals_collect_root_and_never_reads_the_credential(tmp_path):
    root = fake_root(tmp_path)
    container = RootTar(str(tar_of(root, tmp_path / "c.tar.gz")))
    result = run_import(container, tmp_path / "imported.tar.zst")
    native = collect.run(collect.CollectOptions(output=str(tmp_path / "native.tar.zst"), root=str(root),
                                                case_id="T", progress=False))
    assert verify(str(tmp_path / "imported.tar.zst")).ok
    assert result.counts == native.counts
    imported = {record["source_path"]: record for record in files_records(tmp_path / "imported.tar.zst")}
    collected = {record["source_path"]: record for record in files_records(tmp_path / "native.tar.zst")}
    assert {path: record["outcome"] for path, record in imported.items()} == \
        {path: record["outcome"] for path, record in collected.items()}
    credential = "/home/alice/.claude/.credentials.json"
    assert imported[credential]["outcome"] == "never_collect" and imported[credential]["member"] is None
    assert not any(name.endswith(".credentials.json") for name in container.streamed)
    with BundleReader(str(tmp_path / "imported.tar.zst")) as reader:
        assert not any(b"sk-ant-SECRET" in reader.read_data(member.name) for member in reader.members
                       if member.type == "file")
    assert [record["sha256"] for record in imported.values()] == [record["sha256"] for record in collected.values()]
    rows_imported, rows_native = timeline(tmp_path / "imported.tar.zst", tmp_path), timeline(
        tmp_path / "native.tar.zst", tmp_path)
    assert len(rows_imported) == len(rows_native) > 20
    for imported_row, native_row in zip(rows_imported, rows_native, strict=True):
        imported_row.pop("bundle_sha256"), native_row.pop("bundle_sha256")
        assert imported_row == native_row


def test_only_collected_context_and_settings_files_leave_the_container(tmp_path):
    root = fake_root(tmp_path)
    (root / "home" / "alice" / "notes.txt").write_text("not an agent's")
    container = RootTar(str(tar_of(root, tmp_path / "c.tar.gz")))
    run_import(container, tmp_path / "b.tar.zst")
    collected = {record["container_record"]["member"] for record in files_records(tmp_path / "b.tar.zst")
                 if record["outcome"] == "collected"}
    read = set(container.streamed)
    assert collected <= read
    assert read - collected <= {"[root]/etc/hostname", "[root]/home/alice/.claude/settings.json"}
    assert "[root]/home/alice/notes.txt" not in read


def test_custody_records_and_nulls(tmp_path):
    root = fake_root(tmp_path)
    archive = tar_of(root, tmp_path / "c.tar.gz")
    history = "/home/alice/.claude/history.jsonl"
    data = (root / history.lstrip("/")).read_bytes()
    import hashlib

    records = {history: foreign.Recorded(mtime_ns=WHOLE_SECOND * 10**9, ctime_ns=5 * 10**18,
                                         digests={"sha1": hashlib.sha1(data).hexdigest(), "md5": "0" * 32},
                                         sources={"mtime": "copy log line 2", "sha1": "copy log line 2"})}
    result = run_import(RootTar(str(archive), records), tmp_path / "b.tar.zst")
    assert result.exit_code == 0
    assert verify(str(tmp_path / "b.tar.zst")).ok  # null owner: not compared with the header's 0
    record = next(item for item in files_records(tmp_path / "b.tar.zst") if item["source_path"] == history)
    assert record["stat"]["uid"] is None and record["stat"]["gid"] is None and record["stat"]["dev"] is None
    assert record["stat"]["ctime_ns"] == 5 * 10**18 and record["stat"]["atime_ns"] is None
    assert record["stat"]["mode"] == "100000"  # the type only: the tool recorded no permission bits
    assert record["container_record"]["digest_check"] == {"sha1": "matches", "md5": "differs"}
    assert any("MD5" in note for note in record["notes"])
    assert "atime_protection" not in record
    custody = collection(tmp_path / "b.tar.zst")["foreign_custody"]
    digest, size = foreign.file_sha256(str(archive))
    assert custody["container"]["sha256"] == digest and custody["container"]["size"] == size
    assert custody["digest_checks"] == {"matches": 0, "differs": 1, "not_recorded": custody["digest_checks"][
        "not_recorded"]}
    assert collection(tmp_path / "b.tar.zst")["mode"] == "import"
    assert collection(tmp_path / "b.tar.zst")["platform"]["backend"] == "import"
    assert collection(tmp_path / "b.tar.zst")["image"] is None


def test_a_listed_file_without_bytes_is_not_in_container(tmp_path):
    root = fake_root(tmp_path)
    container = RootTar(str(tar_of(root, tmp_path / "c.tar.gz")), unlisted=("/home/alice/.claude/todos/t.json",))
    result = run_import(container, tmp_path / "b.tar.zst")
    assert result.exit_code == 3
    record = next(item for item in files_records(tmp_path / "b.tar.zst")
                  if item["source_path"] == "/home/alice/.claude/todos/t.json")
    assert record["outcome"] == "not_in_container" and record["class"] == "failed" and record["member"] is None
    assert verify(str(tmp_path / "b.tar.zst")).ok


def test_host_from_the_image_files_else_from_the_container(tmp_path):
    root = fake_root(tmp_path)
    run_import(RootTar(str(tar_of(root, tmp_path / "c.tar.gz"))), tmp_path / "a.tar.zst")
    assert collection(tmp_path / "a.tar.zst")["host"]["hostname"] == "subject-host"
    bare = fake_root(tmp_path / "bare", hostname=False)
    run_import(RootTar(str(tar_of(bare, tmp_path / "d.tar.gz"))), tmp_path / "b.tar.zst")
    host = collection(tmp_path / "b.tar.zst")["host"]
    assert host["hostname"] == "from-the-archive-name" and "uac container" in host["hostname_source"]


def test_hostile_members_are_named_never_followed(tmp_path):
    root = fake_root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = tmp_path / "c.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for path in sorted(root.rglob("*")):
            tar.add(path, arcname="[root]/" + str(path.relative_to(root)), recursive=False)
        link = tarfile.TarInfo("[root]/home/alice/.claude/projects/evil")
        link.type, link.linkname = tarfile.SYMTYPE, str(outside)
        tar.addfile(link)
        for name in ("[root]/home/alice/.claude/projects/evil/s.jsonl", "[root]/../../escape.jsonl",
                     "[root]/home/alice/../../../etc/x"):
            info = tarfile.TarInfo(name)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"{}\n"))
    container = RootTar(str(archive))
    result = run_import(container, tmp_path / "b.tar.zst")
    assert list(outside.iterdir()) == []  # nothing made through the container's link
    assert not (tmp_path / "escape.jsonl").exists()
    problems = collection(tmp_path / "b.tar.zst")["foreign_custody"]["problems"]
    assert any("../../escape.jsonl" in problem for problem in problems)
    assert any(problem.startswith("/home/alice/.claude/projects/evil/s.jsonl: not placed (below a link")
               for problem in problems)
    assert verify(str(tmp_path / "b.tar.zst")).ok
    assert result.bundle_path and not any(name.startswith(".aitrail-import-") for name in os.listdir(tmp_path))


def test_the_import_command(tmp_path):
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    archive = tmp_path / "not-a-container.bin"
    archive.write_bytes(b"\x00" * 1000)
    result = CliRunner().invoke(main, ["import", "uac", str(archive), "-o", str(tmp_path / "b.tar.zst")])
    assert result.exit_code == 1 and "no bundle produced" in result.output
    assert not (tmp_path / "b.tar.zst").exists()
    result = CliRunner().invoke(main, ["import", "nosuchtool", str(archive), "-o", str(tmp_path / "b.tar.zst")])
    assert result.exit_code == 2


@pytest.mark.parametrize("size", [foreign.MAX_SIZE + 1])
def test_a_size_that_lies_is_a_problem(tmp_path, size):
    archive = foreign.Archive(str(tar_of(fake_root(tmp_path), tmp_path / "c.tar.gz")))
    assert not archive._add(foreign.ArchiveEntry("[root]/x", "file", size, 0))
    assert "out of range" in archive.problems[0]


def test_only_reachable_files_are_laid_out_and_outcomes_stay_those_of_collect_root(tmp_path):
    root = fake_root(tmp_path)
    for index in range(50):  # what a broad collection also takes: no catalog glob reaches them
        unrelated = root / "home" / "alice" / "projects" / "app" / "node_modules" / f"m{index}.js"
        unrelated.parent.mkdir(parents=True, exist_ok=True)
        unrelated.write_text("module.exports = 1;\n")
    elsewhere = root / "data" / "pi-sessions"  # a store moved by a link, inside the image
    elsewhere.mkdir(parents=True)
    (root / "home" / "alice" / ".claude" / "projects" / "moved").symlink_to("/data/pi-sessions")
    (elsewhere / "s.jsonl").write_text('{"type":"user"}\n')
    for path in [root, *root.rglob("*")]:
        os.utime(path, (WHOLE_SECOND, WHOLE_SECOND), follow_symlinks=False)
    run_import(RootTar(str(tar_of(root, tmp_path / "c.tar.gz"))), tmp_path / "imported.tar.zst")
    native = collect.run(collect.CollectOptions(output=str(tmp_path / "native.tar.zst"), root=str(root),
                                                case_id="T", progress=False))
    imported = sorted((record["source_path"], record["store"], record["outcome"], record["sha256"])
                      for record in files_records(tmp_path / "imported.tar.zst"))
    assert imported == sorted((record["source_path"], record["store"], record["outcome"], record["sha256"])
                              for record in files_records(tmp_path / "native.tar.zst"))
    assert native.counts["matched"] == len(imported)
    # the link is on the way to a store: every file is laid out, as the walk may follow it anywhere
    assert collection(tmp_path / "imported.tar.zst")["foreign_custody"]["files_not_laid_out"] == 0
    (root / "home" / "alice" / ".claude" / "projects" / "moved").unlink()
    run_import(RootTar(str(tar_of(root, tmp_path / "d.tar.gz"))), tmp_path / "b.tar.zst")
    custody = collection(tmp_path / "b.tar.zst")["foreign_custody"]
    assert custody["files_not_laid_out"] >= 51  # the node_modules files and the moved session
