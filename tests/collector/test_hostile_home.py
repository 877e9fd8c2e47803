"""A hostile home: nothing a subject writes can widen, hang or crash collection.

Each test plants what an attacker would (settings values, links, hard links,
case variants, deep trees, FIFOs, sparse and growing files) and checks the
bundle: no byte from outside the home or image, no credential byte, and a
named outcome for what was refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aitrail.collector import collect as collect_module
from aitrail.collector.reading import capture as capture_module
from aitrail.collector.verify import verify
from tests.conftest import (
    TOY_CATALOG,
    all_decompressed,
    bundle_json,
    bundle_records,
    collector_with_partial,
    toy_collect,
    write_tree,
)

SECRET = b"sk-live-THIS-MUST-NEVER-LEAVE-THE-MACHINE"
KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-hostile-test\n"


def overrides(out: Path) -> list[dict]:
    return bundle_json(out, "aitrail/collection.json")["overrides"]


def memory_override(out: Path) -> dict:
    """What the toy catalog's memoryDirectory setting did in this bundle."""
    return next(o for o in overrides(out) if o["name"] == "memoryDirectory")


def assert_refused_and_nothing_taken(cli, home: Path, out: Path, *secrets: bytes) -> None:
    """Collect ``home``: the run succeeds, no secret byte is in the bundle, the relocation is refused."""
    assert toy_collect(cli, home, out).exit_code == 0
    data = all_decompressed(out)
    assert not [secret for secret in (secrets or (SECRET,)) if secret in data]
    assert memory_override(out)["outcome"] == "refused"


def members(out: Path) -> set[str]:
    return {record["member"] for record in bundle_records(out) if record["member"]}


def real_collect(cli, home: Path, out: Path, *extra: str):
    """The installed catalog (every agent), as an examiner runs it."""
    return cli("collect", "--home", home, "-o", out, "--quiet", *extra)


# -- settings keys and environment variables ---------------------------------------------


@pytest.mark.parametrize("value", ["~/../outside", "~/../../../../../../../../outside", "~/x/../../outside"])
def test_a_settings_key_cannot_lead_out_of_the_home(cli, tmp_path, value):
    home = write_tree(tmp_path / "h", {".toy/settings.json": json.dumps({"memoryDirectory": value})})
    write_tree(tmp_path / "outside", {"notes.md": SECRET})
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, home, out)
    assert result.exit_code == 0, result.stderr
    assert SECRET not in all_decompressed(out)
    refused = [o for o in overrides(out) if o["name"] == "memoryDirectory"]
    assert refused and refused[0]["outcome"] == "refused" and refused[0]["value"] == value
    assert "settings key memoryDirectory in .toy/settings.json" in refused[0]["note"]
    assert "memoryDirectory" in result.stderr  # named on stderr even with --quiet


def test_the_issue_attack_on_claude_autoMemoryDirectory_takes_nothing_from_etc(cli, tmp_path):
    home = write_tree(tmp_path / "h", {
        ".claude/settings.json": json.dumps({"autoMemoryDirectory": "~/../../../../../../../etc"}),
        ".claude/projects/p/s.jsonl": '{"type":"user"}\n',
    })
    out = tmp_path / "b.tar.zst"
    assert real_collect(cli, home, out).exit_code == 0
    assert all(member.startswith(("data/h/", "links/h/")) for member in members(out) if member)
    assert not any(record["source_path"].startswith("/etc") for record in bundle_records(out))
    note = next(o for o in overrides(out) if o["name"] == "autoMemoryDirectory")
    assert note["outcome"] == "refused"


def test_an_absolute_settings_value_under_home_has_no_meaning_and_is_refused(cli, tmp_path):
    outside = write_tree(tmp_path / "outside", {"m.md": SECRET})
    home = write_tree(tmp_path / "h", {".toy/settings.json": json.dumps({"memoryDirectory": str(outside)})})
    assert_refused_and_nothing_taken(cli, home, tmp_path / "b.tar.zst")


@pytest.mark.parametrize("value", ["/../../etc", "/etc", "/../../../{outside}", "/"])
def test_under_root_absolute_values_are_resolved_inside_the_image(cli, tmp_path, value):
    outside = write_tree(tmp_path / "outside", {"m.md": SECRET})
    image = tmp_path / "image"
    write_tree(image, {
        "home/alice/.toy/settings.json": json.dumps(
            {"memoryDirectory": value.format(outside=str(outside).lstrip("/"))}),
        "home/alice/.toy/index.json": "[]",
        "etc/shadow": b"root:$6$image-hash:19000:0:99999:7:::\n",
    })
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--root", image, "-o", out, "--quiet").exit_code == 0
    data = all_decompressed(out)
    assert SECRET not in data and b"image-hash" not in data
    if os.path.exists("/etc/shadow"):
        with open("/etc/shadow", "rb") as handle:
            first = handle.readline().strip()
        assert not first or first not in data  # the examiner's own /etc/shadow
    note = memory_override(out)
    if "{outside}" in value:  # '..' stops at the image's /: a directory of the image, which does not exist
        assert note["outcome"] == "applied" and f"inside the image at /{str(outside).lstrip('/')}" in note["note"]
    else:  # the image's /etc, or its root: system directories
        assert note["outcome"] == "refused"


def test_under_root_a_relocation_elsewhere_in_the_image_is_collected(cli, tmp_path):
    image = write_tree(tmp_path / "image", {"srv/mem/alice/m.md": "memory",
                                            "home/alice/.toy/settings.json": '{"memoryDirectory": "/srv/mem/alice"}'})
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--root", image, "-o", out, "--quiet").exit_code == 0
    assert "data/alice@memoryDirectory/m.md" in members(out)


def test_a_link_in_a_relocated_path_cannot_lead_out(cli, tmp_path):
    write_tree(tmp_path / "outside", {"m.md": SECRET})
    home = write_tree(tmp_path / "h", {".toy/settings.json": '{"memoryDirectory": "~/door/."}'})
    os.symlink("../outside", home / "door")
    assert_refused_and_nothing_taken(cli, home, tmp_path / "b.tar.zst")


@pytest.mark.parametrize("value", ["~", "~/", "~/.toy/..", "~/.."])
def test_a_relocated_root_at_the_home_itself_or_above_is_refused(cli, tmp_path, value):
    home = write_tree(tmp_path / "h", {".toy/settings.json": json.dumps({"memoryDirectory": value}),
                                       "Documents/private.txt": SECRET})
    assert_refused_and_nothing_taken(cli, home, tmp_path / "b.tar.zst")


def test_a_relocated_root_onto_a_home_secret_takes_none_of_it(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/settings.json": '{"memoryDirectory": "~/.ssh"}', ".ssh/id_ed25519": KEY})
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    assert KEY not in all_decompressed(out)
    record = next(r for r in bundle_records(out) if r["path"] == ".ssh/id_ed25519")
    assert record["outcome"] == "never_collect" and "belongs to no agent" in record["reason"]


def test_live_env_variable_pointing_at_root_is_refused(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", TOY_CATALOG, "-o", out, "--quiet", env={"HOME": str(home), "TOY_HOME": "/"})
    assert result.exit_code == 0
    assert next(o for o in overrides(out) if o["name"] == "TOY_HOME")["outcome"] == "refused"
    records = bundle_records(out)
    assert records and all("@" not in record["location"] for record in records)  # only the home itself
    assert all(record["source_path"].startswith(str(home) + "/") for record in records)


# -- links inside stores ---------------------------------------------------------------


def _home_with_secrets(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "h", {
        ".toy/index.json": "[]",
        ".toy/auth.json": SECRET,
        ".toy/AUTH.json": SECRET,
        ".toy/auth.json.bak": SECRET,
        ".ssh/id_rsa": KEY,
        ".aws/credentials": SECRET,
        ".other-agent/auth.json": SECRET,
        "Documents/taxes.txt": SECRET,
    })


@pytest.mark.parametrize("target", ["..", ".", "../.other-agent", "../..", "../Documents"])
def test_a_link_inside_a_store_cannot_widen_it(cli, tmp_path, target):
    home = _home_with_secrets(tmp_path)
    os.symlink(target, home / ".toy/teams")  # teams/** is a store
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    data = all_decompressed(out)
    assert SECRET not in data and KEY not in data
    link = next(r for r in bundle_records(out) if r["path"] == ".toy/teams" and r["store"] == "toy.teams")
    assert link["outcome"] == "symlink" and "not followed" in " ".join(link["notes"])
    assert verify(str(out)).ok


def test_the_issue_link_attacks_on_the_real_catalog(cli, tmp_path):
    home = _home_with_secrets(tmp_path)
    write_tree(home, {".claude/.credentials.json": SECRET, ".claude/.Credentials.json": SECRET,
                      ".claude/.credentials.json.bak": SECRET, ".codex/auth.json": SECRET, ".codex/AUTH.json": SECRET,
                      ".claude/projects/p/s.jsonl": '{"type":"user"}\n'})
    os.symlink("..", home / ".claude/teams")
    os.symlink("../.codex", home / ".claude/hooks")
    os.symlink(".", home / ".claude/plugins")
    out = tmp_path / "b.tar.zst"
    assert real_collect(cli, home, out).exit_code == 0
    data = all_decompressed(out)
    assert SECRET not in data and KEY not in data
    assert verify(str(out)).ok


def test_a_link_to_another_directory_of_the_same_store_is_followed_with_its_globs(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/sessions/p1/s.jsonl": "{}\n",
                                       ".toy/sessions/p1/x.txt": "not a transcript"})
    os.symlink("p1", home / ".toy/sessions/p2")
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    got = {r["path"]: r for r in bundle_records(out)}
    assert got[".toy/sessions/p2"]["outcome"] == "symlink"
    assert "walked under its own path" in got[".toy/sessions/p2"]["notes"][0]
    assert got[".toy/sessions/p1/s.jsonl"]["outcome"] == "collected"
    assert ".toy/sessions/p1/x.txt" not in got and ".toy/sessions/p2/s.jsonl" not in got


def test_a_hard_link_to_a_credential_is_never_read(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/auth.json": SECRET, ".toy/sessions/p/ok.jsonl": "{}\n"})
    os.link(home / ".toy/auth.json", home / ".toy/sessions/p/innocent.jsonl")
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    assert SECRET not in all_decompressed(out)
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/sessions/p/innocent.jsonl")
    assert record["outcome"] == "never_collect" and "device and inode" in record["reason"]
    assert record["reason"].endswith("never opened") and record["stat"]["size"] == len(SECRET)


def test_a_hard_link_to_a_credential_is_never_opened_in_a_run_or_a_dry_run(cli, tmp_path, opened_paths):
    home = write_tree(tmp_path / "h", {".toy/auth.json": SECRET, ".toy/sessions/p/ok.jsonl": "{}\n"})
    os.link(home / ".toy/auth.json", home / ".toy/sessions/p/innocent.jsonl")  # listed by the walk: no lstat there
    opened = opened_paths
    assert toy_collect(cli, home, tmp_path / "b.tar.zst").exit_code == 0
    dry = cli("collect", "--catalog", TOY_CATALOG, "--home", home, "--dry-run")
    assert dry.exit_code == 0, dry.output + dry.stderr
    assert "ok.jsonl" in " ".join(opened)  # the watch sees the collector's opens
    assert not [path for path in opened if "innocent" in path or "auth.json" in path]
    dry_run = collect_module.run(collect_module.CollectOptions(
        output=None, homes=[str(home)], catalog_dir=str(TOY_CATALOG), dry_run=True, progress=False))
    entry = next(e for e in dry_run.entries if e.parts[-1] == "innocent.jsonl")
    assert entry.outcome == "never_collect" and entry.reason.endswith("never opened")


def test_a_hard_link_to_a_credential_of_an_unselected_agent_is_never_read(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".codex/auth.json": SECRET, ".claude/projects/p/s.jsonl": "{}\n"})
    os.link(home / ".codex/auth.json", home / ".claude/projects/p/t.jsonl")
    out = tmp_path / "b.tar.zst"
    assert real_collect(cli, home, out, "--agent", "claude-code").exit_code == 0
    assert SECRET not in all_decompressed(out)


@pytest.mark.parametrize("name", ["SECRET-token.json", "Secret.JSON", "secret-token.json.bak", "secret.json~"])
def test_credential_names_match_whatever_their_case_or_suffix(cli, tmp_path, name):
    home = write_tree(tmp_path / "h", {f".toy/teams/{name}": SECRET, ".toy/teams/ok.json": "{}"})
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    assert SECRET not in all_decompressed(out)
    assert next(r for r in bundle_records(out) if r["path"] == f".toy/teams/{name}")["outcome"] == "never_collect"
    assert next(r for r in bundle_records(out) if r["path"] == ".toy/teams/ok.json")["outcome"] == "collected"


def test_a_home_that_is_only_reachable_through_an_absolute_link_in_an_image_stays_in_the_image(cli, tmp_path):
    image = tmp_path / "image"
    write_tree(image, {"data/home/alice/.toy/index.json": "[1]"})
    os.symlink("/data/home", image / "home")  # absolute: the image's /data/home, never this machine's
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--root", image, "-o", out, "--quiet").exit_code == 0
    assert "data/alice/.toy/index.json" in members(out)
    # recorded as the subject's path: the home is /data/home/alice inside the image (never this machine's)
    assert [h["path"] for h in bundle_json(out, "aitrail/collection.json")["homes"]] == ["/data/home/alice"]


# -- deep, blocking and endless inputs ------------------------------------------------------


def test_a_deeply_nested_settings_file_is_a_named_problem(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/settings.json": "[" * 100_000, ".toy/index.json": "[]"})
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out).exit_code == 0
    note = memory_override(out)
    assert note["outcome"] == "unreadable" and "deeper" in note["note"]


def _remove_deep_tree(base: Path, depth: int, leaf: str) -> None:
    """Remove what _deep_tree made, bottom up without recursion (shutil.rmtree, and pytest, would recurse)."""
    names = ["d"] * depth
    fds = [os.open(base, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for name in names:
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        os.unlink(leaf, dir_fd=fds[-1])
        for _ in range(depth, 0, -1):
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def _deep_tree(base: Path, depth: int, leaf: str, content: bytes) -> str:
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as handle:
            handle.write(content)
    finally:
        os.close(fd)
    return "/".join(["d"] * depth + [leaf])


def test_a_directory_tree_deeper_than_the_stack_is_walked_to_its_bottom(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/sessions/top.jsonl": "{}\n"})
    relative = _deep_tree(home / ".toy/sessions", 1500, "bottom.jsonl", b'{"deep":true}\n')
    try:
        out = tmp_path / "b.tar.zst"
        result = toy_collect(cli, home, out)
        assert result.exit_code == 0, result.stderr
        record = next(r for r in bundle_records(out) if r["path"] == f".toy/sessions/{relative}")
        assert record["outcome"] == "collected"
        assert verify(str(out)).ok
    finally:
        _remove_deep_tree(home / ".toy/sessions", 1500, "bottom.jsonl")


def test_a_fifo_named_like_a_settings_file_does_not_block(tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]", ".config/ToyEditor/User/.keep": ""})
    os.mkfifo(home / ".toy/settings.json")
    os.mkfifo(home / ".config/ToyEditor/User/settings.json")
    out = tmp_path / "b.tar.zst"
    proc = subprocess.run([sys.executable, "-m", "aitrail.collector.cli", "collect", "--catalog", str(TOY_CATALOG),
                           "--home", str(home), "-o", str(out), "--quiet"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    notes = [o for o in overrides(out) if o["outcome"] == "unreadable"]
    assert notes and all("not a regular file" in o["note"] for o in notes)
    record = next(r for r in bundle_records(out) if r["path"] == ".config/ToyEditor/User/settings.json")
    assert record["outcome"] == "special_file"


def test_a_huge_sparse_settings_file_is_not_read(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    with open(home / ".toy/settings.json", "wb") as handle:
        handle.truncate(1024 ** 3)
    out = tmp_path / "b.tar.zst"
    assert toy_collect(cli, home, out, "--agent", "toy").exit_code == 0
    note = memory_override(out)
    assert note["outcome"] == "unreadable" and "over the" in note["note"]


WRITER = """
import os, sys, time
path, limit = sys.argv[1], int(sys.argv[2])
block = b"x" * 65536 + b"\\n"
with open(path, "ab", buffering=0) as handle:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and os.path.getsize(path) < limit:
        handle.write(block)
"""


def test_a_file_growing_while_read_is_read_to_its_size_plus_a_margin(cli, tmp_path, monkeypatch):
    margin = 1024 * 1024
    monkeypatch.setattr(capture_module, "GROWTH_MARGIN", margin)
    home = write_tree(tmp_path / "h", {".toy/sessions/p/live.jsonl": b"{}\n" * 300_000})  # ~0.9 MB
    path = home / ".toy/sessions/p/live.jsonl"
    opened = capture_module.Capturer._open

    def open_while_it_grows(capturer, parent: int, name: str) -> tuple[int, str]:
        # the writer below races the read; on a loaded machine it can sit out the few milliseconds
        # between the collector's lstat and its last read, so the file also grows here, for certain
        result = opened(capturer, parent, name)
        if name == path.name:
            with path.open("ab") as handle:
                handle.write(b"y" * (4 * margin) + b"\n")
        return result

    monkeypatch.setattr(capture_module.Capturer, "_open", open_while_it_grows)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(400 * 1024 * 1024)])
    try:
        start = path.stat().st_size
        while path.stat().st_size < start + 4 * margin:  # the writer is well under way
            assert writer.poll() is None
            time.sleep(0.01)
        out = tmp_path / "b.tar.zst"
        result = toy_collect(cli, home, out)
    finally:
        writer.kill()
        writer.wait()
    assert result.exit_code == 3  # partial: a file changed while read
    record = next(r for r in bundle_records(out) if r["path"] == ".toy/sessions/p/live.jsonl")
    assert record["outcome"] == "changed_during_read"
    assert record["stored_size"] <= record["stat"]["size"] + margin
    assert "stat_after" in record
    assert verify(str(out)).ok


# -- rough edges -----------------------------------------------------------------------


def test_an_empty_collection_says_so(cli, tmp_path):
    home = write_tree(tmp_path / "h", {"Documents/x.txt": "not agent data"})
    out = tmp_path / "b.tar.zst"
    result = toy_collect(cli, home, out)
    assert result.exit_code == 0
    assert "no agent data found" in result.stderr
    assert bundle_json(out, "aitrail/collection.json")["warnings"][0].startswith("no agent data found")


def test_a_leftover_partial_file_is_named_with_what_to_do(cli, tmp_path):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    out = tmp_path / "b.tar.zst"
    Path(str(out) + ".partial").write_bytes(b"left by a killed run")
    result = toy_collect(cli, home, out)
    assert result.exit_code == 2
    assert ".partial exists" in result.stderr and "delete it" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_removes_its_partial_file(tmp_path, signum):
    home = write_tree(tmp_path / "h", {f".toy/sessions/p/s{i}.jsonl": "{}\n" for i in range(50)})
    with open(home / ".toy/sessions/p/zz-big.jsonl", "wb") as handle:
        handle.truncate(24 * 1024 ** 3)  # sparse: long enough to be interrupted mid-read
    out = tmp_path / "k.tar.zst"
    proc, partial = collector_with_partial(home, out, stderr=subprocess.PIPE)
    time.sleep(0.3)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert not partial.exists() and not out.exists()
    assert b"removed" in stderr


def test_each_settings_file_is_read_once_however_many_keys_and_passes_ask(cli, tmp_path, monkeypatch):
    from aitrail.collector.finding import plan

    reads: list[str] = []
    real = plan.read_settings_file
    monkeypatch.setattr(plan, "read_settings_file",
                        lambda home, relative: reads.append(relative) or real(home, relative))
    home = write_tree(tmp_path / "h", {".claude/settings.json": '{"plansDirectory": "~/plans"}', "plans/p.md": "plan"})
    out = tmp_path / "b.tar.zst"
    assert real_collect(cli, home, out).exit_code == 0
    assert reads.count(".claude/settings.json") == 1  # two keys (plans, auto-memory) and the credential pass
    assert "plans/p.md" in {record["path"] for record in bundle_records(out)}


def test_an_image_with_many_homes_stays_within_a_small_descriptor_limit(tmp_path):
    """Open directories are bounded per run, not per home: a shared server's /home of hundreds of users.

    Each tree once kept its directories open until the run ended, about ten per home: with a limit of
    256 descriptors the run failed (EMFILE) past a few dozen homes, and a default of 1,024 near a hundred.
    """
    import resource
    import shutil

    from tests.conftest import FIXTURES

    image = tmp_path / "image"
    for number in range(60):
        shutil.copytree(FIXTURES / "demo-home", image / "home" / f"user{number:02d}", symlinks=True)
    out = tmp_path / "many.tar.zst"

    def small_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    done = subprocess.run([sys.executable, "-m", "aitrail.collector.cli", "collect", "--root", str(image),
                           "-o", str(out), "--quiet"], capture_output=True, preexec_fn=small_limit, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    collected = [record for record in bundle_records(out) if record["outcome"] == "collected"]
    per_home = {record["location"]: 0 for record in collected}
    for record in collected:
        per_home[record["location"]] += 1
    assert per_home == {f"user{number:02d}": per_home["user00"] for number in range(60)}
    assert per_home["user00"] == 19  # every agent file of the demo home (its credentials are never_collect)
    assert verify(str(out)).ok
