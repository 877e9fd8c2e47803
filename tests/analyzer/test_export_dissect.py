"""aitrail export dissect, opened by dissect.target itself (docs/dissect.md).

dissect.target (PyPI, AGPL-3.0) is a test dependency only: aitrail never
imports it. The export of a collection of fixtures/demo-home (copied as
``home/alice``, host name and zone stated with --hostname and --time-zone)
must load through dissect's UAC tar loader as a Linux target with the
recorded host name, zone and user, and serve the bundle's bytes; the bundle
itself must not load (its zstd is unknown to dissect's tar loader), so the
docs never claim it does. Images of the three systems (the collector's own
image tests' helpers) show what each gives in dissect.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from dissect.target import Target

from aitrail.analyzer.outputs.dissect import RootTree
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.cli import main
from tests.analyzer.test_outputs import forged_records
from tests.collector.test_image_as_itself import linux_image, macos_image, windows_image
from tests.conftest import FIXTURES, bundle_json, bundle_records

VENV_BIN = Path(sys.executable).parent
HOST, ZONE = "subject-host", "Europe/Berlin"
PROJECT, SESSION = ".claude/projects/-home-alice-src-acme-api", "4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"


def aitrail(*args) -> tuple[int, str]:
    """``aitrail ...`` in-process: exit code and stderr (every command here reports there)."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, result.stderr


def collect(out: Path, *args) -> Path:
    code, stderr = aitrail("collect", *args, "-o", out, "--quiet")
    assert code == 0, stderr
    return out


def export(bundle: Path, out: Path) -> Path:
    code, stderr = aitrail("export", "dissect", bundle, "-o", out)
    assert code == 0, stderr
    return out


@pytest.fixture(scope="module")
def alice_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("subject") / "home" / "alice"
    shutil.copytree(FIXTURES / "demo-home", home, symlinks=True)
    os.symlink(SESSION, home / PROJECT / "latest.jsonl")  # a link the collector records as a link
    return home


@pytest.fixture(scope="module")
def bundle(alice_home: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "alice.tar.zst"
    return collect(out, "--home", alice_home, "--hostname", HOST, "--time-zone", ZONE)


@pytest.fixture(scope="module")
def exported(bundle: Path, tmp_path_factory) -> Path:
    return export(bundle, tmp_path_factory.mktemp("export") / "alice.tar")


@pytest.fixture(scope="module")
def target(exported: Path):
    return Target.open(exported)


def collected(bundle: Path) -> list[dict]:
    return [record for record in bundle_records(bundle) if record["outcome"] == "collected"]


def test_dissect_loads_the_export_through_its_uac_tar_loader_as_linux(target):
    assert type(target._loader).__name__ == "TarLoader"
    assert type(target._loader.subloader).__name__ == "UacTarSubloader"
    assert target.os == "linux"
    assert target.hostname == HOST
    assert target.timezone == ZONE


def test_dissect_lists_the_collected_user_with_their_home(target, alice_home: Path):
    users = [(user.name, str(user.home), user.source) for user in target.users()]
    assert users == [("alice", str(alice_home), "/etc/passwd")]


def test_every_collected_file_reads_back_through_dissect_with_the_bundles_bytes_and_mtime(target, bundle: Path):
    records = collected(bundle)
    assert len(records) >= 10
    with BundleReader(bundle) as reader:
        for record in records:
            path = target.fs.path(record["source_path"])
            assert path.read_bytes() == reader.read_data(record["member"]), record["source_path"]
            assert path.stat().st_mtime == pytest.approx(record["stat"]["mtime_ns"] / 1e9, abs=1e-6)


def test_a_link_is_exported_as_a_link_that_dissect_follows(target, alice_home: Path):
    link = target.fs.path(f"{alice_home}/{PROJECT}/latest.jsonl")
    assert link.is_symlink() and str(link.readlink()) == SESSION
    assert link.read_bytes() == (FIXTURES / "demo-home" / PROJECT / SESSION).read_bytes()


def test_the_tar_keeps_exact_times_modes_and_owners_in_its_headers(exported: Path, bundle: Path):
    with tarfile.open(exported) as archive:
        members = {member.name: member for member in archive.getmembers()}
    for record in collected(bundle):
        member = members["[root]" + record["source_path"]]
        stat = record["stat"]
        assert member.pax_headers["mtime"] == f"{stat['mtime_ns'] // 10**9}.{stat['mtime_ns'] % 10**9:09d}"
        assert member.pax_headers["atime"] == f"{stat['atime_ns'] // 10**9}.{stat['atime_ns'] % 10**9:09d}"
        assert (member.mode, member.uid, member.gid) == (int(stat["mode"], 8) & 0o777, stat["uid"], stat["gid"])
    assert all(name == "[root]" or name.startswith("[root]/") for name in members)


def test_target_info_and_target_query_show_the_subject(exported: Path, alice_home: Path):
    info = subprocess.run([str(VENV_BIN / "target-info"), str(exported)], capture_output=True, text=True, timeout=120)
    assert info.returncode == 0, info.stderr
    assert f"Hostname       : {HOST}" in info.stdout and "Os family      : linux" in info.stdout
    assert f"Timezone       : {ZONE}" in info.stdout
    query = subprocess.run([str(VENV_BIN / "target-query"), "-f", "users", "-j", str(exported)], capture_output=True,
                           text=True, timeout=120)
    assert query.returncode == 0, query.stderr
    users = [json.loads(line) for line in query.stdout.splitlines() if '"_type": "record"' in line]
    assert [(user["name"], user["home"], user["gecos"]) for user in users] == \
        [("alice", str(alice_home), "made by aitrail")]


def test_the_raw_bundle_is_not_loadable(bundle: Path):
    try:
        raw = Target.open(bundle)
    except Exception:  # noqa: BLE001 - any refusal by dissect is "not loadable"
        return
    # dissect 3.25 falls back to a raw disk: no tar loader, no system, none of the collected files
    assert type(raw._loader).__name__ != "TarLoader"
    assert raw.os != "linux" and raw.hostname is None
    assert not raw.fs.path(collected(bundle)[0]["source_path"]).exists()


def test_the_same_bundle_gives_the_same_tar_bytes(bundle: Path, exported: Path, tmp_path: Path):
    again = export(bundle, tmp_path / "again.tar")
    assert again.read_bytes() == exported.read_bytes()


def test_the_readme_says_what_was_made_and_names_the_bundle(target, bundle: Path):
    text = target.fs.path("/aitrail-export/README.txt").read_text()
    digest = Path(f"{bundle}.sha256").read_text().split()[0]
    assert f"SHA-256 {digest}" in text
    assert "MADE BY AITRAIL, NOT COLLECTED" in text
    for made in ("etc/hostname: host.hostname", "etc/passwd: homes", "etc/timezone: time_zone.name", "var/: ",
                 "run/: "):
        assert f"  {made}" in text
    assert "user alice (name: homes[].label (no user recorded))" in text
    assert "stated by the examiner (--hostname)" in text  # where the host name came from, as recorded


def test_a_linux_image_gives_its_recorded_users_os_and_zone(tmp_path: Path):
    bundle = collect(tmp_path / "image.tar.zst", "--root", linux_image(tmp_path))
    image = Target.open(export(bundle, tmp_path / "image.tar"))
    assert (image.os, image.hostname, image.timezone) == ("linux", "build-07", "Europe/Berlin")
    assert image.version.startswith("Debian GNU/Linux 12 (bookworm)")
    homes = {home["user"]: home["path"] for home in bundle_json(bundle, "aitrail/collection.json")["homes"]}
    assert {user.name: str(user.home) for user in image.users()} == homes
    assert homes["alice"] == "/home/alice"
    assert image.fs.path("/home/alice/.claude/settings.json").read_bytes() == \
        (FIXTURES / "demo-home" / ".claude" / "settings.json").read_bytes()


def test_a_macos_image_opens_as_macos_with_its_host_name_and_users(tmp_path: Path):
    bundle = collect(tmp_path / "mac.tar.zst", "--root", macos_image(tmp_path))
    mac = Target.open(export(bundle, tmp_path / "mac.tar"))
    assert mac.os == "macos"
    assert mac.hostname == "Alice’s MacBook Pro"  # the name the collector recorded (ComputerName)
    assert {user.name: str(user.home) for user in mac.users()} == {"alice": "/Users/alice", "root": "/private/var/root"}
    assert mac.fs.path("/Users/alice/.claude/settings.json").exists()
    # the image's var -> private/var link is collected (a catalog path runs under /var): the users' plists are
    # made behind it, where a Mac has them, and the README says for which path
    assert mac.fs.path("/var").is_symlink()
    assert "private/var/db/dslocal/nodes/Default/users/alice.plist: homes: the home /Users/alice; made for " \
           "var/db/dslocal/nodes/Default/users/alice.plist" in mac.fs.path("/aitrail-export/README.txt").read_text()


def test_a_windows_image_opens_as_a_generic_target_with_its_files(tmp_path: Path):
    bundle = collect(tmp_path / "win.tar.zst", "--root", windows_image(tmp_path))
    win = Target.open(export(bundle, tmp_path / "win.tar"))
    assert win.os == "default" and win.hostname is None  # no registry hives: dissect knows no more (docs say so)
    assert win.fs.path("/Users/alice/.claude/settings.json").read_bytes() == \
        (FIXTURES / "demo-home" / ".claude" / "settings.json").read_bytes()
    assert "dissect reads a Windows system's name, users and time zone from registry hives" in \
        win.fs.path("/aitrail-export/README.txt").read_text()


@pytest.mark.parametrize(("link", "target", "made", "at"), [
    ("var", "private/var", "var/db/x", "private/var/db/x"),
    ("var", "/private/var", "var/db/x", "private/var/db/x"),  # absolute: the image's root, never the examiner's
    ("var", "../../../../etc", "var/db/x", "etc/db/x"),  # .. stops at [root]
    ("var", "var", "var/db/x", "var/db/x"),  # a loop ends after 16 links and is refused as a leaf's child
])
def test_a_made_path_through_a_collected_link_stays_below_root(tmp_path: Path, link, target, made, at):
    with tarfile.open(tmp_path / "t.tar", "w") as tar:
        tree = RootTree(tar)
        info = tarfile.TarInfo()
        info.type, info.linkname = tarfile.SYMTYPE, target
        tree.add_file((link.encode(),), info, None)
        resolved = tree.through_links(tuple(made.encode().split(b"/")))
    assert b"/".join(resolved).decode() == at
    if link == target:
        assert tree.claimable(resolved) == "its parent var is a file or link"


# -- a hostile bundle --------------------------------------------------------------------------------------


HOSTILE = {
    b"/home/alice/../../../../tmp/aitrail-escape": "an empty, '.' or '..' component",
    b"/home/alice/\x00/etc/shadow": "a NUL byte in the path",
    b"//": "an empty, '.' or '..' component",
    b"/aitrail-export/README.txt": "/aitrail-export is the export's own folder",
}


def test_unsafe_subject_paths_are_refused_and_named_and_never_leave_root(bundle: Path, tmp_path: Path):
    def change(records):
        victims = [record for record in records if record["outcome"] == "collected"]
        for record, path in zip(victims, [*HOSTILE, b"/etc/passwd"], strict=False):
            record["source_path_b64"] = base64.b64encode(path).decode()
            record["source_path"] = path.decode("utf-8", "backslashreplace")

    forged = forged_records(bundle, tmp_path, change)
    out = tmp_path / "forged.tar"
    code, stderr = aitrail("export", "dissect", forged, "-o", out)
    assert code == 1
    for path, why in HOSTILE.items():
        shown = path.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")
        assert f"REFUSED  {shown}: {why}" in stderr
    with tarfile.open(out) as archive:
        names = archive.getnames()
        readme = archive.extractfile("[root]/aitrail-export/README.txt").read().decode()
        passwd = archive.extractfile("[root]/etc/passwd").read()
    assert all(name == "[root]" or name.startswith("[root]/") for name in names)
    assert not any(".." in name.split("/") or "\x00" in name for name in names)
    assert names.count("[root]/aitrail-export/README.txt") == 1 and "REFUSED paths" in readme
    # a collected /etc/passwd is the subject's: it is exported, and none is made in its place
    assert not passwd.startswith(b"# made by aitrail")
    assert "etc/passwd: collected: the subject's own file is there" in readme


@pytest.mark.parametrize("change, why", [(lambda data: data[:-1] + b"X", "SHA-256 does not match the index"),
                                         (lambda data: data[:-1], "unexpected end of data")])
def test_bytes_that_are_not_the_verified_ones_stop_the_export_and_leave_no_tar(bundle: Path, tmp_path: Path,
                                                                               change, why: str):
    from aitrail.analyzer.outputs.dissect import ExportError, export_dissect

    out = tmp_path / "out.tar"
    with BundleReader(bundle) as reader:
        real = reader.iter_data

        def changed(member):  # the bundle rewritten between verify and the export
            data = b"".join(real(member))
            yield change(data) if member.name.startswith("data/") else data

        reader.iter_data = changed
        with pytest.raises(ExportError, match=why):
            export_dissect(reader, str(out))
    assert not os.path.lexists(out)


def test_a_failed_verification_writes_nothing(bundle: Path, tmp_path: Path):
    damaged = tmp_path / "damaged.tar.zst"
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged.write_bytes(bytes(data))
    code, stderr = aitrail("export", "dissect", damaged, "-o", tmp_path / "out.tar")
    assert code == 1 and "nothing written" in stderr
    assert not os.path.lexists(tmp_path / "out.tar")


def test_an_existing_output_is_never_replaced(bundle: Path, tmp_path: Path):
    out = tmp_path / "out.tar"
    out.write_bytes(b"earlier")
    code, stderr = aitrail("export", "dissect", bundle, "-o", out)
    assert code == 2 and "exists" in stderr
    assert out.read_bytes() == b"earlier"
