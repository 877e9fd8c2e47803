"""Collection end to end on small homes built in the test (toy catalog)."""

from __future__ import annotations

import base64
import json
import os
import socket
import sqlite3
import tarfile
from pathlib import Path

import pytest

from aitrail.collector.bundle.reader import BundleReader
from tests.collector.backends import protects_atime, settle_access_times
from tests.conftest import TOY_CATALOG, all_decompressed, bundle_json, bundle_records, toy_collect, write_tree

SECRET = b"sk-live-THIS-MUST-NEVER-LEAVE-THE-MACHINE"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    base = tmp_path / "alice"
    write_tree(base, {
        ".toy/sessions/p1/s1.jsonl": '{"type":"user","text":"hello"}\n',
        ".toy/sessions/p1/deep/s2.jsonl": '{"type":"user","text":"deep"}\n',
        ".toy/sessions/p1/checkpoints/c.jsonl": "checkpoint\n",
        ".toy/index.json": "[]",
        ".toy/notes/a.txt": "note",
        ".toy/notes/skip.txt": "refined out of the store",
        ".toy/cache/big.jsonl": "cache\n",
        ".toy/auth.json": SECRET,
        ".toy/sessions/p1/secret-token.json": SECRET,
        ".config/ToyEditor/User/settings.json": "{}",
        "projects/app/node_modules/x/index.jsonl": "unrelated\n",
    })
    database = base / ".config/ToyEditor/User/state.db"
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE ItemTable (key TEXT, value BLOB)")
    connection.execute("INSERT INTO ItemTable VALUES ('k', 'v')")
    connection.commit()
    # keep the connection open so the -wal and -shm files exist during collection
    yield base
    connection.close()


def outcomes(records: list[dict]) -> dict[str, str]:
    return {record["path"]: record["outcome"] for record in records}


def test_round_trip_collects_verifies_and_accounts(cli, home, tmp_path):
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, home, out)
    assert result.exit_code == 0, result.output + result.stderr
    assert cli("verify", out).exit_code == 0
    records = bundle_records(out)
    got = outcomes(records)
    assert got[".toy/sessions/p1/s1.jsonl"] == "collected"
    assert got[".toy/sessions/p1/deep/s2.jsonl"] == "collected"
    assert got[".toy/sessions/p1/checkpoints"] == "excluded"
    assert got[".toy/auth.json"] == "never_collect"
    assert got[".toy/sessions/p1/secret-token.json"] == "never_collect"
    assert ".toy/notes/skip.txt" not in got  # a store exclude narrows the store: not a match
    assert got[".config/ToyEditor/User/state.db-wal"] == "collected"
    assert got[".config/ToyEditor/User/state.db-shm"] == "collected"
    counts = bundle_json(out, "aitrail/collection.json")["counts"]
    assert counts["matched"] == len(records) == counts["collected"] + counts["skipped"] + counts["failed"]
    with BundleReader(out) as reader:
        assert reader.read_data("data/alice/.toy/sessions/p1/s1.jsonl") == b'{"type":"user","text":"hello"}\n'


def test_sqlite_companions_are_marked_as_one_set(cli, home, tmp_path):
    out = tmp_path / "b.tar.zst"
    toy_collect(cli, home, out)
    wal = next(r for r in bundle_records(out) if r["path"].endswith("state.db-wal"))
    assert wal["sqlite_companion_of"] == ".config/ToyEditor/User/state.db"
    assert wal["store"] == "toy.state" and wal["parser"] is None


def test_credentials_never_in_the_bundle(cli, home, tmp_path):
    out = tmp_path / "b.tar.zst"
    toy_collect(cli, home, out)
    assert SECRET not in all_decompressed(out)
    never = [r for r in bundle_records(out) if r["outcome"] == "never_collect"]
    assert {r["path"] for r in never} == {".toy/auth.json", ".toy/sessions/p1/secret-token.json"}
    assert all(r["member"] is None and r["stat"]["size"] == len(SECRET) for r in never)


def test_credentials_protected_even_when_their_agent_is_not_selected(cli, tmp_path):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    text = (TOY_CATALOG / "toy.yaml").read_text()
    (catalog / "toy.yaml").write_text(text)
    # a second agent whose broad store would sweep up toy's credentials
    other = text.replace("agent: toy", "agent: toy2").replace("docs/agents/toy.md", "docs/agents/toy2.md")
    other = other.replace("toy.transcript.v1", "toy2.transcript.v1").replace("toy.index.v1", "toy2.index.v1")
    other = other.replace("toy.state.v1", "toy2.state.v1").replace('include: [index.json]', 'include: ["*.json"]')
    (catalog / "toy2.yaml").write_text(other)
    base = write_tree(tmp_path / "h", {".toy/auth.json": SECRET, ".toy/index.json": "[]"})
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", catalog, "--agent", "toy2", "--home", base, "-o", out, "--quiet")
    assert result.exit_code == 0
    assert SECRET not in all_decompressed(out)
    assert outcomes(bundle_records(out))[".toy/auth.json"] == "never_collect"


def test_excluded_trees_and_unrelated_trees_are_never_opened(home, tmp_path):
    from aitrail.collector.collect import CollectOptions, run

    for index in range(50):
        write_tree(home, {f".toy/cache/d{index}/x.jsonl": "x", f"projects/p{index}/node_modules/m/a.json": "x"})
    result = run(CollectOptions(output=None, homes=[str(home)], catalog_dir=str(TOY_CATALOG),
                                dry_run=True, trace_walk=True, progress=False))
    opened = [path.split(":", 1)[1] for path in result.walk_opened]
    assert not [path for path in opened if "cache" in path or "checkpoints" in path]
    assert not [path for path in opened if path.startswith("projects")]
    assert ".toy/sessions/p1" in opened  # the walk did go where the globs point


def test_special_files_are_recorded_never_opened(cli, tmp_path):
    base = write_tree(tmp_path / "h", {".toy/notes/real.txt": "r"})
    os.mkfifo(base / ".toy/notes/fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(base / ".toy/notes/sock"))
    out = tmp_path / "b.tar.zst"
    try:
        result = toy_collect(cli, base, out)
    finally:
        server.close()
    assert result.exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    assert got[".toy/notes/fifo"]["outcome"] == "special_file" and got[".toy/notes/fifo"]["type"] == "fifo"
    assert got[".toy/notes/sock"]["outcome"] == "special_file" and got[".toy/notes/sock"]["type"] == "socket"
    assert got[".toy/notes/fifo"]["member"] is None


def test_fifo_without_writer_does_not_block_a_real_process(tmp_path):
    from tests.conftest import run_aitrail

    base = write_tree(tmp_path / "h", {".toy/notes/real.txt": "r"})
    os.mkfifo(base / ".toy/notes/pipe")
    proc = run_aitrail("collect", "--catalog", TOY_CATALOG, "--home", base, "-o", tmp_path / "b.tar.zst",
                       "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_symlinks_stored_as_links_never_followed(cli, tmp_path):
    outside = write_tree(tmp_path / "outside", {"target.txt": "OUTSIDE-CONTENT"})
    base = write_tree(tmp_path / "h", {".toy/notes/real.txt": "r"})
    os.symlink(outside / "target.txt", base / ".toy/notes/link-out")
    os.symlink("loop-b", base / ".toy/notes/loop-a")
    os.symlink("loop-a", base / ".toy/notes/loop-b")
    os.symlink(outside, base / ".toy/sessions")  # a linked directory on the way to a store
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, base, out)
    assert result.exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    link = got[".toy/notes/link-out"]
    assert link["outcome"] == "symlink" and link["member"] == "links/h/.toy/notes/link-out"
    assert base64.b64decode(link["link_target_b64"]) == os.fsencode(outside / "target.txt")
    assert got[".toy/notes/loop-a"]["outcome"] == got[".toy/notes/loop-b"]["outcome"] == "symlink"
    assert got[".toy/sessions"]["outcome"] == "symlink"
    assert b"OUTSIDE-CONTENT" not in all_decompressed(out)
    with BundleReader(out) as reader:
        assert reader.member("links/h/.toy/notes/link-out").type == "symlink"


def test_non_utf8_name_round_trips_byte_exact(cli, tmp_path):
    raw = b"caf\xe9-\xff%\\n\nx.txt"
    base = write_tree(tmp_path / "h", {".toy/notes/ok.txt": "ok"})
    notes = os.fsencode(base / ".toy/notes")
    with open(os.path.join(notes, raw), "wb") as handle:
        handle.write(b"payload")
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, base, out).exit_code == 0
    record = next(r for r in bundle_records(out) if base64.b64decode(r["path_b64"]).endswith(raw))
    assert base64.b64decode(record["path_b64"]) == b".toy/notes/" + raw
    assert base64.b64decode(record["source_path_b64"]) == os.path.join(notes, raw)
    with BundleReader(out) as reader:
        assert reader.read_data(record["member"]) == b"payload"


def test_metadata_recorded_equals_lstat_before_read(cli, tmp_path):
    base = write_tree(tmp_path / "h", {".toy/index.json": "[1]"})
    path = base / ".toy/index.json"
    os.chmod(path, 0o640)
    os.utime(path, ns=(1_600_000_000_123_456_789, 1_650_000_000_987_654_321))
    before = os.lstat(path)
    out = tmp_path / "b.tar.zst"
    toy_collect(cli, base, out)
    stat = next(r for r in bundle_records(out) if r["path"] == ".toy/index.json")["stat"]
    assert int(stat["mode"], 8) == before.st_mode
    assert (stat["uid"], stat["gid"], stat["ino"], stat["nlink"], stat["size"]) == (
        before.st_uid, before.st_gid, before.st_ino, before.st_nlink, before.st_size)
    assert (stat["atime_ns"], stat["mtime_ns"], stat["ctime_ns"]) == (
        before.st_atime_ns, before.st_mtime_ns, before.st_ctime_ns)
    with BundleReader(out) as reader:
        member = reader.member("data/h/.toy/index.json")
        head = b"".join(reader.iter_decompressed(member))[member.member_offset: member.data_offset]
    with tarfile.open(fileobj=__import__("io").BytesIO(head + b"\0" * 1024)) as archive:
        info = archive.next()
    assert info.pax_headers["mtime"] == "1650000000.987654321" and info.mode == 0o640


def _atime_moves_on_plain_read(path: Path) -> bool:
    os.utime(path, ns=(1_000_000_000_000_000_000, os.lstat(path).st_mtime_ns))
    path.read_bytes()
    moved = os.lstat(path).st_atime_ns != 1_000_000_000_000_000_000
    return moved


def test_access_times_unchanged_by_collection(cli, tmp_path):
    """O_NOATIME (Linux backend) leaves every access time; without it (POSIX backend) the records say so."""
    base = write_tree(tmp_path / "h", {".toy/index.json": "[1]", ".toy/sessions/a/s.jsonl": "{}\n"})
    probe = write_tree(tmp_path / "probe", {"p": "x"}) / "p"
    if not _atime_moves_on_plain_read(probe):
        pytest.skip("this filesystem does not update atime on read (noatime mount): nothing to prove")
    old = 1_000_000_000_000_000_000
    files = [base / ".toy/index.json", base / ".toy/sessions/a/s.jsonl"]
    watched = [*files, base / ".toy/sessions/a", base / ".toy"]
    for path in watched:
        os.utime(path, ns=(old, os.lstat(path).st_mtime_ns))
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, base, out).exit_code == 0
    records = [r for r in bundle_records(out) if r["outcome"] == "collected"]
    assert len(records) == len(files)
    assert all(r["stat"]["atime_ns"] == old for r in records)  # the lstat before the read, either way
    walk = bundle_json(out, "aitrail/collection.json")["walk"]
    if protects_atime():
        assert [os.lstat(path).st_atime_ns for path in watched] == [old] * len(watched)
        assert all(r["o_noatime"] is True and r["atime_protection"] == "o_noatime" for r in records)
        assert walk["files_read_with_o_noatime"] == len(files) and walk["directories_opened_without_o_noatime"] == 0
    else:  # nothing kept the reads from moving the access times: recorded as such, and they did move
        assert all(os.lstat(path).st_atime_ns != old for path in files)
        assert all(r["o_noatime"] is False and r["atime_protection"] == "none" for r in records)
        assert walk["files_read_without_o_noatime"] == len(files)
        assert walk["directories_opened_without_o_noatime"] == walk["directories_opened"] > 0


def test_two_runs_over_a_frozen_tree_are_identical(cli, home, tmp_path):
    first, second = tmp_path / "1.tar.zst", tmp_path / "2.tar.zst"
    settle_access_times(lambda: toy_collect(cli, home, tmp_path / "settle.tar.zst"))
    toy_collect(cli, home, first)
    toy_collect(cli, home, second)
    with BundleReader(first) as one, BundleReader(second) as two:
        assert one.names() == two.names()
        for name in ("manifest-sha256.txt", "aitrail/files.jsonl"):
            assert one.read_data(name) == two.read_data(name), name


def _payload_frames(bundle: Path) -> tuple[bytes, list[tuple]]:
    """The bundle's bytes before its first tag member's frame, and the index entries of what is there."""
    with BundleReader(bundle) as reader:
        tag_start = reader.member("bagit.txt").frame_offset
        payload = [(m.name, m.frame_offset, m.frame_length, m.member_offset, m.size, m.sha256)
                   for m in reader.members if m.frame_offset < tag_start]
    with open(bundle, "rb") as handle:
        return handle.read(tag_start), payload


@pytest.mark.parametrize("hashed_by_writer", [False, True])
def test_payload_frames_are_byte_identical_across_runs(cli, tmp_path, monkeypatch, hashed_by_writer):
    """Frame boundaries depend on the members only, never on how the threads were scheduled."""
    from aitrail.collector.reading import capture

    if hashed_by_writer:
        monkeypatch.setattr(capture, "HASHED_BY_WRITER", 1)
    sizes = [300_000, 5, 1_100_000, 70_000, 2_500_000, 0, 900_000, 40_000] * 3
    base = write_tree(tmp_path / "h", {f".toy/notes/f{index:02d}": os.urandom(size)
                                        for index, size in enumerate(sizes)})
    first, second = tmp_path / "1.tar.zst", tmp_path / "2.tar.zst"
    settle_access_times(lambda: toy_collect(cli, base, tmp_path / "settle.tar.zst"))
    assert toy_collect(cli, base, first).exit_code == 0
    assert toy_collect(cli, base, second).exit_code == 0
    (one_bytes, one_index), (two_bytes, two_index) = _payload_frames(first), _payload_frames(second)
    assert len(one_index) == len(sizes) and len({entry[1] for entry in one_index}) > 3  # several frames
    assert one_index == two_index and one_bytes == two_bytes


def test_dry_run_prints_and_writes_nothing(cli, home, tmp_path):
    before = sorted(os.listdir(tmp_path))
    result = cli("collect", "--catalog", TOY_CATALOG, "--home", home, "--dry-run")
    assert result.exit_code == 0
    assert "toy" in result.output and "nothing was written" in result.output
    assert sorted(os.listdir(tmp_path)) == before


def test_max_file_size_records_too_large(cli, tmp_path):
    base = write_tree(tmp_path / "h", {".toy/index.json": "x" * 5000, ".toy/notes/small": "s",
                                       ".toy/notes/big": "y" * 6000})  # notes/* is listed: no lstat in the walk
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, base, out, "--max-file-size", "4K").exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    assert got[".toy/index.json"]["outcome"] == "too_large" and got[".toy/notes/small"]["outcome"] == "collected"
    assert got[".toy/notes/big"]["outcome"] == "too_large" and got[".toy/notes/big"]["stat"]["size"] == 6000


def test_env_override_is_honoured_and_recorded_for_the_current_user(cli, tmp_path):
    home = write_tree(tmp_path / "me", {".toy/index.json": "[]", "moved/sessions/x/s.jsonl": "{}\n"})
    out = tmp_path / "b.tar.zst"
    env = {"HOME": str(home), "TOY_HOME": str(home / "moved")}
    result = cli("collect", "--catalog", TOY_CATALOG, "-o", out, "--quiet", env=env)
    assert result.exit_code in (0, 3), result.stderr
    records = bundle_records(out)
    moved_record = next(r for r in records if r["path"] == "moved/sessions/x/s.jsonl")
    assert moved_record["outcome"] == "collected" and "@" not in moved_record["location"]  # the home itself
    meta = bundle_json(out, "aitrail/collection.json")
    assert meta["environment"]["TOY_HOME"] == str(home / "moved")
    assert any(o["name"] == "TOY_HOME" and o["applied"] and o["outcome"] == "applied" for o in meta["overrides"])


def test_env_override_outside_the_home_is_refused_and_named(cli, tmp_path):
    home = write_tree(tmp_path / "me", {".toy/index.json": "[]"})
    write_tree(tmp_path / "elsewhere", {"sessions/x/s.jsonl": SECRET})
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", TOY_CATALOG, "-o", out, "--quiet",
                 env={"HOME": str(home), "TOY_HOME": str(tmp_path / "elsewhere")})
    assert result.exit_code == 0, result.stderr
    assert "refused" in result.stderr and "TOY_HOME" in result.stderr
    assert SECRET not in all_decompressed(out)
    override = next(o for o in bundle_json(out, "aitrail/collection.json")["overrides"] if o["name"] == "TOY_HOME")
    assert override["outcome"] == "refused" and not override["applied"]
    assert override["value"] == str(tmp_path / "elsewhere") and "leaves the home" in override["note"]


def test_settings_key_moves_a_root(cli, tmp_path):
    home = write_tree(tmp_path / "me", {"custom/tasks/t1.json": "{}"})
    write_tree(home, {".config/ToyEditor/User/settings.json":
                      '{\n // JSONC comment\n "toy.customStoragePath": "%s",\n}' % (home / "custom")})
    out = tmp_path / "b.tar.zst"
    cli("collect", "--catalog", TOY_CATALOG, "-o", out, "--quiet", env={"HOME": str(home)})
    got = {r["path"]: r for r in bundle_records(out)}
    assert got["custom/tasks/t1.json"]["outcome"] == "collected" and "@" not in got["custom/tasks/t1.json"]["location"]


def test_settings_key_moves_a_root_elsewhere_in_an_image(cli, tmp_path):
    image = write_tree(tmp_path / "image", {"srv/toy-storage/tasks/t1.json": "{}"})
    write_tree(image, {"home/alice/.config/ToyEditor/User/settings.json":
                       '{"toy.customStoragePath": "/srv/toy-storage"}'})
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--root", image, "-o", out, "--quiet").exit_code == 0
    record = next(r for r in bundle_records(out) if r["path"] == "tasks/t1.json")
    assert record["outcome"] == "collected" and record["location"] == "alice@toy.customStoragePath"
    assert record["member"] == "data/alice@toy.customStoragePath/tasks/t1.json"


def test_image_root_finds_users_and_system_stores(cli, tmp_path):
    image = tmp_path / "image"
    write_tree(image, {
        "home/alice/.toy/index.json": "[1]",
        "Users/bob/AppData/Roaming/Toy/index.json": "[2]",
        "root/.toy/index.json": "[3]",
        "etc/toy/managed.json": "{}",
    })
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", TOY_CATALOG, "--root", image, "-o", out, "--quiet")
    assert result.exit_code == 0, result.stderr
    members = {r["member"] for r in bundle_records(out) if r["member"]}
    assert {"data/alice/.toy/index.json", "data/bob/AppData/Roaming/Toy/index.json",
            "data/root/.toy/index.json", "data/system/etc/toy/managed.json"} <= members


@pytest.mark.parametrize(
    "args",
    [
        ["collect", "--bogus"],
        ["collect", "--home", "/", "--root", "/"],
        ["collect", "--home", "/"],  # no -o
        ["collect", "--home", "/", "-o", "x", "--max-file-size", "lots"],
        ["collect", "--home", "/", "--agent", "no-such-agent", "-o", "/tmp/never-written.tar.zst"],
        ["verify"],
        ["nonsense"],
    ],
)
def test_usage_errors_exit_2(cli, args):
    assert cli(*args).exit_code == 2


def test_existing_output_is_never_overwritten(cli, tmp_path):
    out = tmp_path / "b.tar.zst"
    out.write_bytes(b"evidence")
    assert cli("collect", "--home", tmp_path, "-o", out).exit_code == 2
    assert out.read_bytes() == b"evidence"


def test_collection_json_records_the_run(cli, home, tmp_path):
    out = tmp_path / "b.tar.zst"
    toy_collect(cli, home, out, "--case", "CASE-7", "--examiner", "E. Xaminer", "--notes", "line1\nline2")
    meta = bundle_json(out, "aitrail/collection.json")
    assert meta["case"] == {"case_id": "CASE-7", "examiner": "E. Xaminer", "notes": "line1\nline2"}
    assert meta["catalog"]["sha256"] and meta["tool"]["collector_sha256"]
    assert isinstance(meta["command_line"], list)  # sys.argv; exact form checked in a subprocess test
    for key in ("host", "user", "time_zone", "started_utc", "finished_utc"):
        assert meta[key]
    assert meta["started_utc"].endswith("Z")
    with BundleReader(out) as reader:
        info = reader.read_data("bag-info.txt").decode()
    assert "External-Identifier: CASE-7" in info and "line1\n  line2" in info
    assert json.loads(json.dumps(meta))  # plain JSON


def test_all_users_collects_every_passwd_home(cli, tmp_path, monkeypatch):
    import pwd

    alice = write_tree(tmp_path / "alice", {".toy/index.json": "[1]"})
    bob = write_tree(tmp_path / "bob", {".toy/index.json": "[2]"})
    entry = lambda name, home: pwd.struct_passwd((name, "x", 1000, 1000, "", str(home), "/bin/sh"))  # noqa: E731
    monkeypatch.setattr(pwd, "getpwall", lambda: [entry("bob", bob), entry("alice", alice),
                                                  entry("nohome", tmp_path / "missing"), entry("alias", alice)])
    monkeypatch.setenv("TOY_HOME", str(tmp_path / "never"))  # env overrides are for the current user only
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", TOY_CATALOG, "--all-users", "-o", out, "--quiet")
    assert result.exit_code == 0, result.stderr
    meta = bundle_json(out, "aitrail/collection.json")
    assert meta["mode"] == "all-users"
    assert [(home["label"], home["user"]) for home in meta["homes"]] == [("alias", "alias"), ("bob", "bob")]
    assert {r["member"] for r in bundle_records(out) if r["member"]} >= {
        "data/alias/.toy/index.json", "data/bob/.toy/index.json"}
    assert meta["environment"] == {} and meta["overrides"] == []


def test_linked_agent_directory_inside_the_home_is_walked_under_its_real_path(cli, tmp_path):
    base = write_tree(tmp_path / "h", {"dotfiles/toy/index.json": "[1]", "dotfiles/toy/sessions/p/s.jsonl": "{}\n"})
    os.symlink("dotfiles/toy", base / ".toy")  # a dotfiles manager's link, relative, inside the home
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, base, out).exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    assert got[".toy"]["outcome"] == "symlink" and "walked under its own path" in got[".toy"]["notes"][0]
    index = got["dotfiles/toy/index.json"]
    assert index["outcome"] == "collected" and index["member"] == "data/h/dotfiles/toy/index.json"
    assert any("reached through symlink .toy" in note for note in index["notes"])
    assert got["dotfiles/toy/sessions/p/s.jsonl"]["outcome"] == "collected"


def test_absolute_link_is_followed_only_when_its_meaning_is_known(cli, tmp_path):
    home = write_tree(tmp_path / "me", {"real/toy/index.json": "[1]"})
    os.symlink(str(home / "real" / "toy"), home / ".toy")
    live = tmp_path / "live.tar.zst"
    cli("collect", "--catalog", TOY_CATALOG, "-o", live, "--quiet", env={"HOME": str(home)})
    assert "real/toy/index.json" in {r["path"] for r in bundle_records(live)}
    # the same tree given as --home: an absolute target names the subject's filesystem, not this one
    image = tmp_path / "image.tar.zst"
    toy_collect(cli, home, image)
    records = {r["path"]: r for r in bundle_records(image)}
    assert "real/toy/index.json" not in records
    assert "outside this location" in records[".toy"]["notes"][0]


def test_link_loops_and_escapes_are_not_followed(cli, tmp_path):
    base = write_tree(tmp_path / "h", {"elsewhere/index.json": "[1]"})
    os.symlink("alt", base / ".toy")
    os.symlink(".toy", base / "alt")  # a loop of two links
    os.symlink("../../outside", base / "AppData")  # escapes the home
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, base, out).exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    assert got[".toy"]["outcome"] == "symlink" and got["AppData"]["outcome"] == "symlink"
    assert "outside this location" in got["AppData"]["notes"][0]
    assert not [path for path in got if path.startswith("elsewhere")]


def test_progress_goes_to_stderr_at_most_once_a_second(monkeypatch, capsys):
    from aitrail.collector.reading import pipeline

    clock = iter([0.0, 0.5, 1.2, 1.3, 2.5, 100.0, 200.0])
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: next(clock))
    progress = pipeline.Progress(total=4, enabled=True)
    for size in (10, 20, 30, 40):
        progress.step(size)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["aitrail: 2/4 files, 0.0 MB", "aitrail: 4/4 files, 0.0 MB"]
    quiet = pipeline.Progress(total=1, enabled=False)  # --quiet: never a line, however long it takes
    quiet.step(1)
    assert capsys.readouterr().err == ""


def test_garbage_collector_thresholds_are_restored_after_a_run(cli, home, tmp_path):
    import gc

    before = gc.get_threshold()
    assert toy_collect(cli, home, tmp_path / "b.tar.zst").exit_code == 0
    assert gc.get_threshold() == before
    from aitrail.collector import collect

    options = collect.CollectOptions(output=str(tmp_path / "missing-dir" / "b.tar.zst"), homes=[str(home)],
                                     catalog_dir=str(TOY_CATALOG), progress=False)
    with pytest.raises(OSError):  # the bundle cannot be created: a failed run restores them too
        collect.run(options)
    assert gc.get_threshold() == before


@pytest.mark.parametrize("root_spelling", ["//", "/./", "/home/..", "/tmp/../"])
def test_a_passwd_home_that_is_the_root_spelled_otherwise_is_never_a_home(tmp_path, monkeypatch, root_spelling):
    import pwd

    from aitrail.collector.runinfo import homes_of_all_users

    alice = write_tree(tmp_path / "alice", {".toy/index.json": "[1]"})
    entry = lambda name, home: pwd.struct_passwd((name, "x", 1000, 1000, "", str(home), "/bin/sh"))  # noqa: E731
    monkeypatch.setattr(pwd, "getpwall", lambda: [entry("daemon", root_spelling), entry("alice", alice)])
    assert [home.user for home in homes_of_all_users()] == ["alice"]


def test_all_users_takes_login_users_and_root_and_system_accounts_only_with_agent_data(tmp_path, monkeypatch):
    """--all-users: uids in login.defs' range and root; /bin, /dev, /usr/sbin ... only when an agent ran there."""
    import pwd

    from aitrail.collector import runinfo

    homes = {name: write_tree(tmp_path / name, {"x": ""}) for name in ("alice", "root", "bin", "svc", "nobody")}
    write_tree(homes["svc"], {".claude/projects/p/s.jsonl": "{}\n"})  # a service account that ran an agent
    defs = write_tree(tmp_path / "etc", {"login.defs": "# comment\nUID_MIN  2000\nUID_MAX 3000\n"}) / "login.defs"
    entry = lambda name, uid: pwd.struct_passwd((name, "x", uid, uid, "", str(homes[name]), "/bin/sh"))  # noqa: E731
    monkeypatch.setattr(pwd, "getpwall", lambda: [entry("alice", 2001), entry("root", 0), entry("bin", 2),
                                                  entry("svc", 998), entry("nobody", 65534)])
    original = runinfo.login_uid_range
    monkeypatch.setattr(runinfo, "login_uid_range", lambda path="": original(str(defs)))
    assert runinfo.login_uid_range() == (2000, 3000)
    chosen = [home.user for home in runinfo.homes_of_all_users((".claude", ".codex"))]
    assert chosen == ["alice", "root", "svc"]


def test_under_sudo_the_subject_is_the_user_who_ran_sudo(tmp_path, monkeypatch):
    import pwd

    from aitrail.collector import runinfo

    alice = write_tree(tmp_path / "alice", {".claude/x": ""})
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("SUDO_USER", "alice")
    monkeypatch.setattr(pwd, "getpwnam", lambda name: pwd.struct_passwd(
        (name, "x", 1000, 1000, "", str(alice), "/bin/sh")) if name == "alice" else (_ for _ in ()).throw(KeyError))
    home = runinfo.current_user_home()
    assert (home.path, home.user) == (str(alice), "alice") and runinfo.user_info()["sudo_user"] == "alice"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: SUDO_USER says nothing
    assert runinfo.sudo_subject() is None
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("SUDO_USER", "ghost")  # no such user: the running user's home, as before
    assert runinfo.sudo_subject() is None


def test_dry_run_list_prints_every_path_with_its_store_and_outcome_escaped(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[1]", ".toy/auth.json": "secret",
                                       ".toy/sessions/p/odd\x1bname.jsonl": "{}\n"})
    result = cli("collect", "--catalog", TOY_CATALOG, "--home", home, "--dry-run", "--list")
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.output.splitlines()
    assert any(line.startswith("would_collect") and line.endswith("/.toy/index.json") for line in lines)
    assert any(line.startswith("never_collect") and "auth.json" in line for line in lines)
    assert any("odd\\x1bname.jsonl" in line for line in lines) and "\x1b" not in result.output
    assert cli("collect", "--catalog", TOY_CATALOG, "--home", home, "--list").exit_code == 2  # --list needs --dry-run
