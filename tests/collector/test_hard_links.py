"""A hard link inside an agent store to a secret of the user or the system is never opened (secret_inodes.py).

Each case plants, as any process of the user could before a collection, a
second name for a secret under a path an agent's store matches; the bundle's
decompressed bytes must not hold the secret, the file's record must say why,
and a dry run must say the same without opening it.
"""

from __future__ import annotations

import os
from pathlib import Path

from aitrail.collector import collect as collect_module
from aitrail.collector.finding import secret_inodes
from tests.conftest import all_decompressed, bundle_records, write_tree

SSH_KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-hard-link-test\n"
AWS = b"[default]\naws_secret_access_key = wJalrXUtnFEMI/HARD-LINK-TEST\n"
NETRC = b"machine api.example.com login alice password HARD-LINK-NETRC\n"
GPG = b"-----BEGIN PGP PRIVATE KEY BLOCK-----\nHARD-LINK-GPG\n"
KUBE = b"apiVersion: v1\nusers:\n- name: admin\n  user: {token: HARD-LINK-KUBE}\n"
SESSION = "4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"

# (secret path, its bytes, the store path a link gives it)
PLANTED = [
    (".ssh/id_ed25519", SSH_KEY, f".claude/projects/-home-alice-x/{SESSION}.jsonl"),
    (".aws/credentials", AWS, f".codex/sessions/2026/07/02/rollout-2026-07-02T09-14-05-{SESSION}.jsonl"),
    (".netrc", NETRC, f".gemini/tmp/0123456789abcdef/chats/session-2026-07-02T09-14-{SESSION[:8]}.json"),
    (".gnupg/private-keys-v1.d/ABCD.key", GPG, f".local/share/opencode/storage/session/global/ses_{SESSION[:12]}.json"),
    (".kube/config", KUBE, f".config/Code/User/workspaceStorage/0a1b2c/chatSessions/{SESSION}.json"),
]


def planted_home(tmp_path: Path) -> Path:
    files = {secret: data for secret, data, _ in PLANTED}
    files[".codex/state_5.sqlite"] = b"SQLite format 3\x00" + b"\x00" * 84
    files[f".claude/projects/-home-alice-x/{SESSION[:-1]}0.jsonl"] = b'{"type":"user"}\n'
    home = write_tree(tmp_path / "home", files)
    for secret, _, store_path in PLANTED:
        (home / store_path).parent.mkdir(parents=True, exist_ok=True)
        os.link(home / secret, home / store_path)
    os.link(home / ".ssh/id_ed25519", home / ".codex/state_5.sqlite-journal")  # a companion's name
    return home


def records_by_path(bundle: Path) -> dict[str, dict]:
    return {record["path"]: record for record in bundle_records(bundle)}


def test_links_to_the_users_secrets_are_never_collected(cli, tmp_path: Path):
    home = planted_home(tmp_path)
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    payload = all_decompressed(out)
    for secret in (SSH_KEY, AWS, NETRC, GPG, KUBE):
        assert secret not in payload
    records = records_by_path(out)
    planted = [store_path for _, _, store_path in PLANTED] + [".codex/state_5.sqlite-journal"]
    for path in planted:
        assert records[path]["outcome"] == "never_collect", (path, records[path])
        assert "hard link to the secret" in records[path]["reason"] and records[path]["member"] is None
    assert records[f".claude/projects/-home-alice-x/{SESSION[:-1]}0.jsonl"]["outcome"] == "collected"


def test_a_dry_run_says_the_same_and_opens_none_of_them(tmp_path: Path, opened_paths):
    home = planted_home(tmp_path)
    opened = opened_paths
    result = collect_module.run(collect_module.CollectOptions(output=None, homes=[str(home)], dry_run=True,
                                                              progress=False))
    by_name = {entry.parts[-1]: entry for entry in result.entries}
    for _, _, store_path in PLANTED:
        entry = by_name[store_path.rsplit("/", 1)[-1]]
        assert entry.outcome == "never_collect" and "hard link to the secret" in entry.reason
    # directories are listed (never a file opened) to learn the secrets' inodes
    secret_names = {secret.rsplit("/", 1)[-1] for secret, _, _ in PLANTED}
    assert not [path for path in opened if path.rsplit("/", 1)[-1] in secret_names]


def test_two_agent_files_linked_together_are_both_collected(cli, tmp_path: Path):
    """A hard link is not a secret by itself: files whose other name is no secret are read as always."""
    home = write_tree(tmp_path / "home", {f".claude/projects/p/{SESSION}.jsonl": b'{"type":"user"}\n',
                                          ".ssh/id_ed25519": SSH_KEY})
    (home / ".claude/projects/q").mkdir()
    os.link(home / f".claude/projects/p/{SESSION}.jsonl", home / f".claude/projects/q/{SESSION}.jsonl")
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", out, "--quiet").exit_code == 0
    records = records_by_path(out)
    assert records[f".claude/projects/p/{SESSION}.jsonl"]["outcome"] == "collected"
    assert records[f".claude/projects/q/{SESSION}.jsonl"]["outcome"] == "collected"


def test_a_link_to_a_system_secret_in_an_image_is_never_collected(cli, tmp_path: Path):
    shadow = b"root:$6$HARD-LINK-SHADOW$abc:19000:0:99999:7:::\n"
    image = write_tree(tmp_path / "image", {"etc/shadow": shadow,
                                            "home/alice/.grok/sessions/%2Fhome%2Falice/s1/summary.json": b"{}"})
    os.link(image / "etc/shadow", image / "home/alice/.grok/sessions/%2Fhome%2Falice/s1/chat_history.jsonl")
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--root", image, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    assert shadow not in all_decompressed(out)
    record = next(r for r in bundle_records(out) if r["path"].endswith("chat_history.jsonl"))
    assert record["outcome"] == "never_collect" and "system:etc/shadow" in record["reason"]


def test_over_the_listing_budget_a_hard_linked_file_is_left_out_and_says_why(cli, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(secret_inodes, "MAX_ENTRIES", 3)
    home = write_tree(tmp_path / "home", {f".ssh/k{number}": b"x" for number in range(10)})
    write_tree(home, {f".claude/projects/p/{SESSION}.jsonl": b'{"type":"user"}\n'})
    os.link(home / f".claude/projects/p/{SESSION}.jsonl", home / "elsewhere.jsonl")
    out = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", out, "--quiet").exit_code == 0
    record = records_by_path(out)[f".claude/projects/p/{SESSION}.jsonl"]
    assert record["outcome"] == "never_collect" and "could not all be checked" in record["reason"]
