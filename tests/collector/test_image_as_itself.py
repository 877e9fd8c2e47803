"""A disk image collected with --root is recorded as itself, never as the examiner's workstation.

Its host name and time zone come from the image's own files (each with its
source), the workstation is recorded apart as the collecting host, every path
(files.jsonl, rows, bodyfile, extract) is the subject's, and every home the
image's own records name is collected.
"""

from __future__ import annotations

import csv
import io
import os
import plistlib
import shutil
import socket
from pathlib import Path

import pytest

from aitrail.collector.image import homes as image_homes
from aitrail.collector.image.identity import describe_image
from tests.conftest import all_decompressed, bundle_json, bundle_records, write_tree

DEMO_HOME = Path(__file__).resolve().parents[2] / "fixtures" / "demo-home"
PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    "bin:x:2:2:bin:/bin:/usr/sbin/nologin\n"
    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "builder:x:998:998:ci runner:/var/lib/builder:/bin/sh\n"
    "idle:x:997:997:no agents:/var/lib/idle:/bin/sh\n"
    "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
    "dev:x:1001:1001:Dev:/srv/dev:/bin/bash\n"
)


def put_home(image: Path, relative: str) -> None:
    shutil.copytree(DEMO_HOME, image / relative, symlinks=True)


def linux_image(tmp_path: Path, name: str = "image", hostname: str = "build-07") -> Path:
    image = tmp_path / name
    write_tree(image, {"etc/passwd": PASSWD, "etc/hostname": f"{hostname}\n",
                       "etc/os-release": 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
                       "usr/share/zoneinfo/Europe/Berlin": b"TZif2", "var/lib/idle/.profile": ""})
    os.symlink("../usr/share/zoneinfo/Europe/Berlin", image / "etc/localtime")
    put_home(image, "home/alice")
    put_home(image, "srv/dev")  # a home etc/passwd puts outside home/
    (image / "var/lib/builder").mkdir(parents=True)
    shutil.copytree(DEMO_HOME / ".codex", image / "var/lib/builder/.codex")  # a service account running Codex
    shutil.copytree(DEMO_HOME / ".claude", image / "root/.claude")
    return image


def collect(cli, image: Path, out: Path, *extra: str):
    result = cli("collect", "--root", image, "-o", out, "--quiet", *extra)
    assert result.exit_code == 0, result.output
    return bundle_json(out, "aitrail/collection.json")


def test_a_linux_image_is_named_and_zoned_by_its_own_files_and_the_workstation_is_the_collecting_host(cli, tmp_path):
    record = collect(cli, linux_image(tmp_path), tmp_path / "b.tar.zst")
    host, zone = record["host"], record["time_zone"]
    assert (host["hostname"], host["hostname_source"], host["system"]) == ("build-07", "etc/hostname", "Linux")
    assert host["os"] == "Debian GNU/Linux 12 (bookworm)"
    assert (zone["name"], zone["source"]) == ("Europe/Berlin", "etc/localtime -> ../usr/share/zoneinfo/Europe/Berlin")
    assert record["collecting_host"]["hostname"] == socket.gethostname() != "build-07"
    assert record["image"]["mount_point"] == str(tmp_path / "image")


def test_every_home_the_image_names_is_collected_and_system_accounts_only_with_agent_data(cli, tmp_path):
    record = collect(cli, linux_image(tmp_path), tmp_path / "b.tar.zst")
    homes = {home["path"]: (home["user"], home["found_by"]) for home in record["homes"]}
    assert homes == {
        "/home/alice": ("alice", "etc/passwd (login user)"),
        "/srv/dev": ("dev", "etc/passwd (login user)"),
        "/var/lib/builder": ("builder", "etc/passwd (its home holds agent data)"),
        "/root": ("root", "etc/passwd (login user)"),
    }  # not /bin, /usr/sbin (system accounts), nor /var/lib/idle (no agent data)
    stored = {r["location"] for r in bundle_records(tmp_path / "b.tar.zst") if r["outcome"] == "collected"}
    assert {"alice", "dev", "builder", "root"} <= stored


def test_paths_are_the_subjects_everywhere_and_the_mount_point_only_in_collection_json(cli, tmp_path):
    image = linux_image(tmp_path, name="mnt-case7-img")
    out = tmp_path / "b.tar.zst"
    collect(cli, image, out)
    paths = {r["source_path"] for r in bundle_records(out)}
    assert "/srv/dev/.claude/history.jsonl" in paths and "/home/alice/.codex/config.toml" in paths
    assert all(not path.startswith(str(tmp_path)) for path in paths)
    # the mount point is written once, in collection.json (image, options, command line); no other member has it
    data = all_decompressed(out, skip=("aitrail/collection.json",))
    assert str(image).encode() not in data
    timeline = tmp_path / "t.csv"
    assert cli("analyze", out, "-o", timeline).exit_code == 0
    text = timeline.read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["host"] for row in rows} == {"build-07"}
    body = tmp_path / "body.txt"
    assert cli("export", "bodyfile", out, "-o", body).exit_code == 0
    names = [line.split("|")[1] for line in body.read_text(encoding="utf-8").splitlines()]
    assert "/srv/dev/.claude/history.jsonl" in names and all(not n.startswith(str(tmp_path)) for n in names)
    extracted = tmp_path / "x"
    assert cli("extract", out, extracted).exit_code == 0
    assert (extracted / "srv/dev/.claude/history.jsonl").read_bytes() == \
        (image / "srv/dev/.claude/history.jsonl").read_bytes()


def test_two_images_analyzed_together_give_two_hosts(cli, tmp_path):
    first, second = tmp_path / "a.tar.zst", tmp_path / "b.tar.zst"
    collect(cli, linux_image(tmp_path, "one", hostname="web-01"), first)
    collect(cli, linux_image(tmp_path, "two", hostname="web-02"), second)
    timeline = tmp_path / "t.csv"
    assert cli("analyze", first, second, "-o", timeline).exit_code == 0
    rows = list(csv.DictReader(io.StringIO(timeline.read_text(encoding="utf-8"))))
    assert {row["host"] for row in rows} == {"web-01", "web-02"}


def test_home_adds_a_home_inside_the_image_by_its_path_there(cli, tmp_path):
    image = linux_image(tmp_path)
    put_home(image, "data/projects/ops")  # in no passwd line, under no home/
    record = collect(cli, image, tmp_path / "b.tar.zst", "--home", "/data/projects/ops")
    assert {"path": "/data/projects/ops", "label": "ops", "user": None, "found_by": "--home"} in record["homes"]
    mounted = tmp_path / "c.tar.zst"  # this machine's path of the same directory means the same home
    record = collect(cli, image, mounted, "--home", str(image / "data/projects/ops"))
    assert any(home["path"] == "/data/projects/ops" for home in record["homes"])


def test_home_under_root_that_is_not_in_the_image_is_refused(cli, tmp_path):
    image = linux_image(tmp_path)
    result = cli("collect", "--root", image, "--home", "/nowhere", "-o", tmp_path / "b.tar.zst", "--quiet")
    assert result.exit_code == 1 and "--home /nowhere: not a directory inside the image" in result.output
    assert not (tmp_path / "b.tar.zst").exists()


def test_the_examiner_can_state_host_and_zone_and_what_the_image_said_is_kept(cli, tmp_path):
    record = collect(cli, linux_image(tmp_path), tmp_path / "b.tar.zst", "--hostname", "FIN-LT-0042",
                     "--time-zone", "America/New_York")
    assert (record["host"]["hostname"], record["host"]["hostname_found"]) == ("FIN-LT-0042", "build-07")
    assert record["host"]["hostname_source"] == "stated by the examiner (--hostname)"
    assert (record["time_zone"]["name"], record["time_zone"]["name_found"]) == ("America/New_York", "Europe/Berlin")


def test_hostname_and_time_zone_are_refused_in_live_collection(cli, tmp_path):
    result = cli("collect", "--hostname", "x", "--dry-run")
    assert result.exit_code == 2 and "--hostname and --time-zone state a subject" in result.output


def macos_image(tmp_path: Path) -> Path:
    image = tmp_path / "mac"
    preferences = {"System": {"System": {"ComputerName": "Alice’s MacBook Pro"},
                              "Network": {"HostNames": {"LocalHostName": "Alices-MacBook-Pro"}}}}
    write_tree(image, {
        "System/Library/CoreServices/SystemVersion.plist": plistlib.dumps(
            {"ProductName": "macOS", "ProductVersion": "15.1"}),
        "Library/Preferences/SystemConfiguration/preferences.plist": plistlib.dumps(
            preferences, fmt=plistlib.FMT_BINARY),
        "private/var/db/timezone/zoneinfo/America/Los_Angeles": b"TZif2",
        "Users/Shared/.localized": "", "Users/.localized": "",
    })
    os.symlink("private/var", image / "var")
    (image / "private/etc").mkdir()
    os.symlink("private/etc", image / "etc")
    os.symlink("/var/db/timezone/zoneinfo/America/Los_Angeles", image / "private/etc/localtime")
    put_home(image, "Users/alice")
    (image / "private/var/root").mkdir(parents=True)
    shutil.copytree(DEMO_HOME / ".claude", image / "private/var/root/.claude")
    return image


def test_a_macos_image_is_named_from_its_system_configuration_and_var_root_is_a_home(cli, tmp_path):
    record = collect(cli, macos_image(tmp_path), tmp_path / "b.tar.zst")
    host, zone = record["host"], record["time_zone"]
    assert (host["hostname"], host["system"], host["os"]) == ("Alice’s MacBook Pro", "Darwin", "macOS 15.1")
    assert host["hostname_source"] == \
        "Library/Preferences/SystemConfiguration/preferences.plist System/System/ComputerName"
    assert zone["name"] == "America/Los_Angeles"
    assert {(home["path"], home["user"]) for home in record["homes"]} == \
        {("/Users/alice", "alice"), ("/private/var/root", "root")}  # Users/Shared is no one's home


def test_a_copied_localtime_gives_its_posix_rule_not_a_made_up_name(tmp_path):
    image = tmp_path / "image"
    tzif = b"TZif2" + bytes(39) + b"\nCET-1CEST,M3.5.0,M10.5.0/3\n"
    write_tree(image, {"etc/localtime": tzif, "etc/hostname": "h\n"})
    _, zone = describe_image(str(image))
    assert (zone["name"], zone["posix_rule"]) == (None, "CET-1CEST,M3.5.0,M10.5.0/3")


@pytest.mark.parametrize("planted", ["fifo", "link-out", "garbage", "huge"])
def test_hostile_identity_files_give_problems_never_a_hang_or_a_read_outside(tmp_path, planted):
    image, outside = tmp_path / "image", tmp_path / "outside"
    write_tree(outside, {"hostname": "workstation-secret\n"})
    (image / "etc").mkdir(parents=True)
    hostname = image / "etc/hostname"
    if planted == "fifo":
        os.mkfifo(hostname)
    elif planted == "link-out":
        os.symlink(str(outside / "hostname"), hostname)  # absolute: the image's own /tmp/..., not this machine's
    elif planted == "garbage":
        hostname.write_bytes(b"\x1b]0;pwned\x07 rm -rf\n")
    else:
        hostname.write_bytes(b"a" * (1 << 20))
    host, _ = describe_image(str(image))
    assert host["hostname"] is None and host["hostname"] != "workstation-secret"
    assert host["problems"]


def test_passwd_homes_that_leave_or_are_the_image_root_are_not_homes(tmp_path):
    image = tmp_path / "image"
    write_tree(image, {"etc/passwd": "a:x:1000:1000::/../../..:/bin/sh\nb:x:1001:1001::relative:/bin/sh\n"
                                     "c:x:1002:1002::/home/c:/bin/sh\n"})
    os.makedirs(image / "home")
    os.symlink(str(tmp_path), image / "home/c")  # a home that is a link to this machine's directory
    found = image_homes.image_homes(str(image))
    assert found == []


def windows_image(tmp_path: Path) -> Path:
    from tests.collector.hive_writer import build_hive, dword, sz

    image = tmp_path / "win"
    control = {"Control": {"ComputerName": {"ComputerName": {"ComputerName": sz("FIN-LT-0042")}},
                           "TimeZoneInformation": {"Bias": dword(-60), "TimeZoneKeyName": sz("W. Europe Standard Time"),
                                                   "StandardName": sz("@tzres.dll,-322")}},
               "Services": {"Tcpip": {"Parameters": {"Hostname": sz("fin-lt-0042"), "Domain": sz("corp.example")}}}}
    hive = build_hive({"Select": {"Current": dword(2)}, "ControlSet001": {}, "ControlSet002": control}).data
    # an NTFS volume mounted on Linux: names keep the case Windows gave them, lookups are case-sensitive
    write_tree(image, {"WINDOWS/system32/config/SYSTEM": hive})
    for profile in ("alice", "Public", "Default", "All Users"):
        (image / "Users" / profile).mkdir(parents=True)
    shutil.copytree(DEMO_HOME / ".claude", image / "Users/alice/.claude")
    return image


def test_a_windows_image_is_named_and_zoned_from_its_system_hive_which_is_never_collected(cli, tmp_path):
    out = tmp_path / "b.tar.zst"
    record = collect(cli, windows_image(tmp_path), out)
    host, zone = record["host"], record["time_zone"]
    assert (host["hostname"], host["fqdn"], host["system"]) == ("FIN-LT-0042", "fin-lt-0042.corp.example", "Windows")
    assert host["hostname_source"] == r"WINDOWS/system32/config/SYSTEM ControlSet002\Control\ComputerName\ComputerName"
    assert (zone["name"], zone["utc_offset_seconds"]) == ("W. Europe Standard Time", 3600)
    assert [(home["path"], home["found_by"]) for home in record["homes"]] == [("/Users/alice", "Users/*")]
    assert not any("config/SYSTEM" in r["source_path"] for r in bundle_records(out))
    assert b"regf" not in all_decompressed(out)  # not one byte of the hive


def test_a_damaged_system_hive_is_a_named_problem_and_the_collection_goes_on(cli, tmp_path):
    image = windows_image(tmp_path)
    hive = image / "WINDOWS/system32/config/SYSTEM"
    hive.write_bytes(hive.read_bytes()[:5000])
    record = collect(cli, image, tmp_path / "b.tar.zst")
    assert record["host"]["hostname"] is None and record["host"]["system"] == "Windows"
    assert record["host"]["problems"] and record["time_zone"]["problems"]
    assert record["counts"]["collected"] > 0


def test_finding_homes_and_identity_leaves_the_image_directories_atimes_as_they_were(cli, tmp_path):
    if os.environ.get("AITRAIL_PLATFORM") == "posix":
        pytest.skip("O_NOATIME is not used by the POSIX backend (each read records it); nothing to check here")
    image = windows_image(tmp_path)
    for directory in (image, image / "Users", image / "WINDOWS", image / "WINDOWS/system32"):
        os.utime(directory, ns=(1_000_000_000, 2_000_000_000))  # atime before mtime: relatime would move it
    before = {path: os.stat(path).st_atime_ns for path in (image, image / "Users", image / "WINDOWS/system32")}
    describe_image(str(image))
    image_homes.image_homes(str(image))
    after = {path: os.stat(path).st_atime_ns for path in before}
    assert after == before  # the test's own directories: O_NOATIME is never refused for their owner


def test_live_collection_on_windows_is_refused_with_the_route_to_take(cli, monkeypatch):
    from aitrail.collector.fs import platform

    monkeypatch.setattr("sys.platform", "win32")
    result = cli("collect", "--dry-run")
    assert result.exit_code == 1
    assert platform.WINDOWS_MESSAGE in result.output and "--root" in result.output


def test_a_stated_zone_never_carries_the_found_zones_offset():
    """--time-zone W. Europe Standard Time on a UTC workstation recorded offset 0: the workstation's, not the zone's."""
    from aitrail.collector.runinfo import stated_zone

    found = {"name": "Etc/UTC", "utc_offset_seconds": 0, "tzname": ["UTC", "UTC"]}
    windows = stated_zone("W. Europe Standard Time", found)
    assert windows["utc_offset_seconds"] is None and windows["found"] == found and windows["name_found"] == "Etc/UTC"
    assert "no zone of this name" in windows["offset_source"]
    berlin = stated_zone("Europe/Berlin", found)
    assert berlin["utc_offset_seconds"] in (3600, 7200) and "stated zone's offset" in berlin["offset_source"]
    assert stated_zone("../../../etc/passwd", found)["utc_offset_seconds"] is None
