"""Round trips: a subject collected by another tool, imported, equals aitrail's own collection of it.

One fake subject root holds a Linux home (``home/alice``) and a macOS home
(``Users/bob``), each the demo home with every agent and a Claude Code
credential beside it, and the system files an image is described by. aitrail
collects it natively (``collect --root``); each tool's container of the same
root is imported; the imported bundle must verify, hold no byte of either
credential (recorded ``never_collect``), and give the native timeline row for
row, the three bundle columns (host, case, bundle digest) aside.

Which containers are real: acquire is run for real (PyPI, pinned in the test
extra). UAC cannot be installed from any registry: its container is built by
tests/collector/container_uac.py from UAC's source (the layout was compared
with real UAC 3.3.0 runs; see that file), and the real UAC runs here when
AITRAIL_UAC_DIR names a checkout (test_catalog_export_uac.py runs it with the
exported artifact). KAPE and Velociraptor cannot run here (Windows .NET, no
registry has Velociraptor): their containers are built from their documented
layouts (tests/collector/container_kape.py, container_velociraptor.py).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.cli import main
from tests.collector import container_acquire, container_kape, container_uac, container_velociraptor

ROOT = Path(__file__).resolve().parents[2]
DEMO_HOME = ROOT / "fixtures" / "demo-home"
WHOLE_SECOND = 1_764_662_400  # tar headers and copy logs keep whole seconds: the subject's times are whole
SECRET = b"sk-ant-oat01-ROUND-TRIP-SECRET"
BUNDLE_COLUMNS = ("host", "case_id", "bundle_sha256")
ACQUIRE = Path(sys.executable).with_name("acquire")


def subject_root(tmp_path: Path, homes: tuple[str, ...] = ("home/alice", "Users/bob")) -> Path:
    """The fake subject: the demo home at each of ``homes`` with a credential, system files, whole-second times."""
    root = tmp_path / "subject"
    for home in homes:
        shutil.copytree(DEMO_HOME, root / home, symlinks=True)
        (root / home / ".claude" / ".credentials.json").write_bytes(b'{"claudeAiOauth": {"accessToken": "'
                                                                    + SECRET + b'"}}')
    (root / "etc").mkdir()
    (root / "etc" / "hostname").write_text("subject-host\n")
    (root / "var" / "log").mkdir(parents=True)
    for path in [root, *root.rglob("*")]:
        os.utime(path, (WHOLE_SECOND, WHOLE_SECOND), follow_symlinks=False)
    return root


def invoke(*args: str) -> str:
    """Run an aitrail command in process; exit 0 or 3 (3: a partial collection, checked by the caller)."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (0, 3), result.output
    return result.output


def bundle_records(bundle: Path) -> tuple[list[dict], dict, list[bytes]]:
    """files.jsonl, collection.json and every payload member's bytes."""
    with BundleReader(str(bundle)) as reader:
        files = [json.loads(line) for line in reader.read_data("aitrail/files.jsonl").splitlines()]
        collection = json.loads(reader.read_data("aitrail/collection.json"))
        payload = [reader.read_data(member.name) for member in reader.members
                   if member.type == "file" and not member.name.startswith("aitrail/")]
    return files, collection, payload


def timeline(bundle: Path) -> list[dict]:
    """The timeline's rows, the bundle columns aside."""
    out = bundle.with_suffix(".csv")
    invoke("analyze", str(bundle), "-o", str(out))
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    for row in rows:
        for column in BUNDLE_COLUMNS:
            row.pop(column)
    return rows


def native_collection(tmp_path: Path, homes: tuple[str, ...]) -> tuple[Path, Path, list[dict]]:
    """Aitrail's own collection of a subject root with ``homes``, and its timeline."""
    root = subject_root(tmp_path, homes)
    bundle = tmp_path / "native.tar.zst"
    invoke("collect", "--root", str(root), "-o", str(bundle), "--case", "RT", "--quiet")
    return root, bundle, timeline(bundle)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """The Linux and macOS subject (home/alice, Users/bob), collected natively."""
    return native_collection(tmp_path_factory.mktemp("native"), ("home/alice", "Users/bob"))


@pytest.fixture(scope="module")
def native_windows(tmp_path_factory):
    """A Windows subject's system drive (Users/alice, Users/bob), collected natively as a mounted image."""
    return native_collection(tmp_path_factory.mktemp("native-windows"), ("Users/alice", "Users/bob"))


def check_round_trip(native, imported: Path, tool: str, credentials_taken: bool = True) -> dict:
    """The imported bundle verifies, carries no credential byte, and gives the native timeline.

    ``credentials_taken``: the tool took the credentials (they must be
    recorded never_collect); a tool run with aitrail's exported catalog never
    took them, so the import has no record of them at all.
    """
    _, native_bundle, native_rows = native
    assert "VALID" in invoke("verify", str(imported))
    files, collection, payload = bundle_records(imported)
    native_files, _, _ = bundle_records(native_bundle)
    assert not any(SECRET in data for data in payload)
    credentials = [record for record in files if record["source_path"].endswith("/.claude/.credentials.json")]
    native_credentials = {record["source_path"] for record in native_files
                          if record["source_path"].endswith("/.claude/.credentials.json")}
    assert native_credentials
    if credentials_taken:
        assert {record["source_path"] for record in credentials} == native_credentials
        assert all(record["outcome"] == "never_collect" and record["member"] is None for record in credentials)
    else:
        assert credentials == [] and not any(record["outcome"] == "never_collect" for record in files)
        native_files = [record for record in native_files if record["outcome"] != "never_collect"]
    assert {(record["source_path"], record["store"], record["outcome"], record["sha256"]) for record in files} == \
        {(record["source_path"], record["store"], record["outcome"], record["sha256"]) for record in native_files}
    assert collection["mode"] == "import" and collection["foreign_custody"]["tool"] == tool
    rows = timeline(imported)
    assert len(rows) == len(native_rows) >= 50
    for index, (row, native_row) in enumerate(zip(rows, native_rows, strict=True)):
        assert row == native_row, f"row {index}"
    return collection


UAC_TREE = os.environ.get("AITRAIL_UAC_DIR")


@pytest.mark.skipif(not UAC_TREE, reason="AITRAIL_UAC_DIR names no UAC checkout (no registry ships UAC: none in CI)")
@pytest.mark.parametrize("profile, home", [("linux", "home/alice"), ("macos", "Users/bob")])
def test_real_uac_with_the_exported_artifacts_round_trip(tmp_path, profile, home):
    """UAC itself, run from its own shell script with `aitrail catalog export --format uac`, then imported."""
    native = native_collection(tmp_path / "native", (home,))
    invoke("catalog", "export", "--format", "uac", "-o", str(tmp_path / "artifacts"))
    artifacts = ",".join(sorted(str(path) for path in (tmp_path / "artifacts").glob("*.yaml")))
    out = tmp_path / "uac-out"
    out.mkdir()
    done = subprocess.run(["./uac", "-u", "-a", artifacts, "--mount-point", str(native[0]), "-s", profile, str(out)],
                          cwd=UAC_TREE, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (container,) = out.glob("uac-*.tar.gz")
    bundle = tmp_path / "uac.tar.zst"
    invoke("import", "uac", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    check_round_trip(native, bundle, "uac", credentials_taken=False)


UAC_OWN_STYLE = """version: 1.0
artifacts:
  -
    description: An agent's whole folder, as UAC's own AI-agent artifacts take it (credentials included).
    supported_os: [linux, macos]
    collector: file
    path: %user_home%/.claude
    file_type: [f]
"""


@pytest.mark.skipif(not UAC_TREE, reason="AITRAIL_UAC_DIR names no UAC checkout (no registry ships UAC: none in CI)")
def test_real_uac_taking_a_whole_agent_folder_credential_is_recorded_never_carried(tmp_path):
    """UAC's own AI artifacts take ~/.claude whole, .credentials.json with it: the import records it, never reads it."""
    root = subject_root(tmp_path, ("home/alice",))
    artifact = tmp_path / "whole_claude.yaml"
    artifact.write_text(UAC_OWN_STYLE)
    out = tmp_path / "uac-out"
    out.mkdir()
    done = subprocess.run(["./uac", "-u", "-a", str(artifact), "--mount-point", str(root), "-s", "linux", str(out)],
                          cwd=UAC_TREE, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (container,) = out.glob("uac-*.tar.gz")
    import tarfile

    with tarfile.open(container) as archive:  # UAC took it
        assert "[root]/home/alice/.claude/.credentials.json" in archive.getnames()
    bundle = tmp_path / "uac.tar.zst"
    invoke("import", "uac", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    assert "VALID" in invoke("verify", str(bundle))
    files, _, payload = bundle_records(bundle)
    (credential,) = [record for record in files if record["source_path"] == "/home/alice/.claude/.credentials.json"]
    assert credential["outcome"] == "never_collect" and credential["member"] is None
    assert credential["container_record"]["member"] == "[root]/home/alice/.claude/.credentials.json"
    assert not any(SECRET in data for data in payload)
    native = tmp_path / "native.tar.zst"
    invoke("collect", "--root", str(root), "-o", str(native), "--quiet")
    in_claude = [record for record in bundle_records(native)[0] if record["source_path"].startswith(
        "/home/alice/.claude/")]
    assert {(record["source_path"], record["outcome"], record["sha256"]) for record in files} == \
        {(record["source_path"], record["outcome"], record["sha256"]) for record in in_claude}


def test_uac_round_trip(native, tmp_path):
    root = native[0]
    container = container_uac.build(root, tmp_path, output_format="tar.gz", hostname="subject-host",
                                    mount_point="/", hash_collected=False)
    bundle = tmp_path / "uac.tar.zst"
    invoke("import", "uac", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    collection = check_round_trip(native, bundle, "uac")
    assert collection["host"]["hostname"] == "subject-host"


def test_uac_round_trip_with_hash_lists_checks_every_digest(native, tmp_path):
    root = native[0]
    container = container_uac.build(root, tmp_path, output_format="zip", mount_point="/", hash_collected=True)
    bundle = tmp_path / "uac.tar.zst"
    invoke("import", "uac", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    files, collection, _ = bundle_records(bundle)
    checks = collection["foreign_custody"]["digest_checks"]
    collected = [record for record in files if record["outcome"] == "collected"]
    assert checks["differs"] == 0 and checks["matches"] == len(collected) > 20
    # UAC 3.3.0's -H writes hash_list.md5 and hash_list.sha1 (container_uac.py)
    assert all(record["container_record"]["digest_check"] == {"sha1": "matches", "md5": "matches"}
               for record in collected)


def test_acquire_round_trip_with_the_real_acquire(native, tmp_path):
    assert ACQUIRE.exists(), "acquire is a test dependency: pip install acquire==3.22"
    root = native[0]
    out = tmp_path / "acquired"
    out.mkdir()
    result = subprocess.run([str(ACQUIRE), str(root), "-o", str(out), "--profile", "none", "--volatile-profile",
                             "none", "--path", "/etc", "--path", "/home", "--path", "/Users", "--hashes",
                             "--glob-to-hash", "**/*"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (container,) = [path for path in out.iterdir() if not path.name.endswith((".log", ".report.json"))]
    bundle = tmp_path / "acquire.tar.zst"
    invoke("import", "acquire", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    collection = check_round_trip(native, bundle, "acquire")
    assert collection["foreign_custody"]["tool_version"] == "3.22"
    assert collection["foreign_custody"]["digest_checks"]["differs"] == 0


def test_acquire_builder_round_trip(native, tmp_path):
    container = container_acquire.build(native[0], tmp_path, output_type="zip", hashes=True)
    bundle = tmp_path / "acquire.tar.zst"
    invoke("import", "acquire", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    check_round_trip(native, bundle, "acquire")


@pytest.mark.parametrize("zipped", [False, True])
def test_kape_round_trip(native_windows, tmp_path, zipped):
    # KAPE run with --dedupe false: a deduplicated file is named in the skip log without its times (below)
    container = container_kape.build(native_windows[0], tmp_path / "kape", zip=zipped, dedupe=False)
    bundle = tmp_path / "kape.tar.zst"
    invoke("import", "kape", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    collection = check_round_trip(native_windows, bundle, "kape")
    checks = collection["foreign_custody"]["digest_checks"]
    assert checks["differs"] == 0 and checks["matches"] > 20  # KAPE's SHA-1 of every copied file
    assert collection["foreign_custody"]["drives"] == ["C:"]


def test_velociraptor_round_trip_windows(native_windows, tmp_path):
    container = container_velociraptor.build(native_windows[0], tmp_path / "velo", windows=True)
    bundle = tmp_path / "velociraptor.tar.zst"
    invoke("import", "velociraptor", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    collection = check_round_trip(native_windows, bundle, "velociraptor")
    assert collection["foreign_custody"]["digest_checks"]["differs"] == 0


def test_velociraptor_round_trip_linux_and_macos(native, tmp_path):
    container = container_velociraptor.build(native[0], tmp_path / "velo")
    bundle = tmp_path / "velociraptor.tar.zst"
    invoke("import", "velociraptor", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    check_round_trip(native, bundle, "velociraptor")


def test_kape_deduplicated_files_are_untimed_never_1970(native_windows, tmp_path):
    """KAPE's default --dedupe copies one of identical files; the others' times are in none of its records."""
    container = container_kape.build(native_windows[0], tmp_path / "kape", dedupe=True)
    bundle = tmp_path / "kape.tar.zst"
    invoke("import", "kape", str(container), "-o", str(bundle), "--case", "RT", "--quiet")
    files, _, _ = bundle_records(bundle)
    bob = [record for record in files if record["source_path"].startswith("/Users/bob/")
           and record["outcome"] == "collected"]
    assert bob and all(record["stat"]["mtime_ns"] is None for record in bob)
    assert "VALID" in invoke("verify", str(bundle))
    rows, native_rows = timeline(bundle), native_windows[2]
    # the integrity rules that compare a file's time with its records (docs/report.md) cannot run without the time
    file_time = ("integrity: written after last record: ", "integrity: record after file time: ")
    assert len([row for row in rows if not row["text"].startswith(file_time)]) == len(
        [row for row in native_rows if not row["text"].startswith(file_time)])
    assert not [row for row in rows if row["source"].startswith("data/bob/") and row["text"].startswith(file_time)]
    untimed = [row for row in rows if row["source"].startswith("data/bob/") and row["timestamp_source"] == "none"]
    timed_natively = [row for row in native_rows if row["source"].startswith("data/bob/")
                      and row["timestamp_source"] == "file-mtime"]
    assert len(untimed) >= len(timed_natively) > 0
    assert not any(row["timestamp_utc"].startswith("1970") for row in rows)
