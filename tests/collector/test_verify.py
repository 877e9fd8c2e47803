"""verify: a sound bundle passes; any damage anywhere fails and is named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aitrail.collector.bundle.layout import TRAILER
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.verify import verify
from tests.collector.bundle_tools import flip_byte, rewrite
from tests.conftest import TOY_CATALOG, write_tree


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    from aitrail.collector.bundle.seal import generate

    directory = tmp_path_factory.mktemp("keys")
    private = directory / "signer.pem"
    generate(str(private), str(private) + ".pub")
    return private, Path(str(private) + ".pub")


@pytest.fixture(scope="module")
def signed_bundle(tmp_path_factory, keys) -> Path:
    from click.testing import CliRunner

    from aitrail.collector.cli import main

    directory = tmp_path_factory.mktemp("signed")
    home = write_tree(directory / "alice", {
        ".toy/sessions/p/s1.jsonl": '{"a":1}\n' * 200,
        ".toy/index.json": "[]",
        ".toy/notes/n.txt": "note",
    })
    (home / ".toy/notes/link").symlink_to("n.txt")
    out = directory / "b.tar.zst"
    result = CliRunner().invoke(main, ["collect", "--catalog", str(TOY_CATALOG), "--home", str(home), "-o", str(out),
                                       "--quiet", "--sign-key", str(keys[0])])
    assert result.exit_code == 0, result.output
    return out


def copy_without_sidecar(bundle: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.tar.zst"
    shutil.copyfile(bundle, target)
    return target


def test_sound_bundle_verifies_with_and_without_pinned_key(signed_bundle, keys):
    report = verify(str(signed_bundle), str(keys[1]))
    assert report.ok, report.problems
    assert report.signature.startswith("valid, by the given key")
    assert verify(str(signed_bundle)).ok


def test_cli_verify_exit_codes(cli, signed_bundle, tmp_path):
    assert cli("verify", signed_bundle).exit_code == 0
    broken = copy_without_sidecar(signed_bundle, tmp_path)
    flip_byte(broken, 100)
    result = cli("verify", broken)
    assert result.exit_code == 1 and "INVALID" in result.output and "FAIL" in result.stderr


def _members(bundle: Path):
    with BundleReader(bundle) as reader:
        return list(reader.members), reader.index_offset, reader.file_size


def _content_changing_offset(bundle: bytes, member) -> int:
    """A byte near the middle of the member's frame whose flip changes what the frame decodes to.

    Rarely (about one bundle in 150) a flipped bit lands where zstd ignores it
    and the frame decodes to the same bytes: the evidence is unchanged, and
    only the sidecar digest can see it. The test wants a flip that changes
    content, so it takes the next byte then.
    """
    import zstandard

    frame = bundle[member.frame_offset: member.frame_offset + member.frame_length]
    clean = zstandard.ZstdDecompressor().decompressobj().decompress(frame)
    for delta in range(member.frame_length // 2, member.frame_length):
        damaged = bytearray(frame)
        damaged[delta] ^= 0x01
        try:
            if zstandard.ZstdDecompressor().decompressobj().decompress(bytes(damaged)) == clean:
                continue
        except zstandard.ZstdError:
            pass
        return member.frame_offset + delta
    raise AssertionError(f"no byte of {member.name}'s frame changes its content")


def test_flipped_byte_in_every_member_fails_and_names_it(signed_bundle, tmp_path):
    members, _, _ = _members(signed_bundle)
    assert {"manifest-sha256.txt", "tagmanifest-sha256.txt", "aitrail/signature.ed25519",
            "aitrail/files.jsonl", "aitrail/collection.json"} <= {m.name for m in members}
    original = signed_bundle.read_bytes()
    for member in members:
        damaged = copy_without_sidecar(signed_bundle, tmp_path)
        flip_byte(damaged, _content_changing_offset(original, member))
        report = verify(str(damaged))
        assert not report.ok, member.name
        assert any(member.name in problem for problem in report.problems), (member.name, report.problems)
        damaged.unlink()


def test_flipped_byte_in_the_index_or_trailer_fails(signed_bundle, tmp_path):
    _, index_offset, size = _members(signed_bundle)
    for offset, expected in ((index_offset + 20, "index"), (size - TRAILER.size + 3, "index"),
                             (size - 2, "incomplete")):
        damaged = copy_without_sidecar(signed_bundle, tmp_path)
        flip_byte(damaged, offset)
        report = verify(str(damaged))
        assert not report.ok and expected in " ".join(report.problems), (offset, report.problems)
        damaged.unlink()


def test_sidecar_digest_mismatch_is_named(signed_bundle, tmp_path):
    damaged = tmp_path / "b.tar.zst"
    shutil.copyfile(signed_bundle, damaged)
    (tmp_path / "b.tar.zst.sha256").write_text("0" * 64 + "  b.tar.zst\n")
    report = verify(str(damaged))
    assert any("b.tar.zst.sha256" in problem for problem in report.problems)


def test_truncated_bundle_never_verifies(signed_bundle, tmp_path):
    data = signed_bundle.read_bytes()
    for cut in (len(data) // 3, len(data) - 1, len(data) - 100):
        short = tmp_path / f"short{cut}.tar.zst"
        short.write_bytes(data[:cut])
        report = verify(str(short))
        assert not report.ok


def test_manifest_rehashed_without_the_key_fails_the_signature(signed_bundle, keys, tmp_path):
    forged = tmp_path / "forged.tar.zst"
    rewrite(signed_bundle, forged, {"data/alice/.toy/index.json": b'["forged"]'})
    report = verify(str(forged), str(keys[1]))
    assert not report.ok
    assert any(problem.startswith("signature:") for problem in report.problems), report.problems
    assert report.signature == "INVALID"


def test_rewrite_without_changes_still_verifies(signed_bundle, keys, tmp_path):
    """The forging tool itself is faithful: the failure above comes from the change, not the tool."""
    copy = tmp_path / "copy.tar.zst"
    rewrite(signed_bundle, copy)
    assert verify(str(copy), str(keys[1])).ok


def test_payload_changed_without_rehash_is_named(signed_bundle, tmp_path):
    forged = tmp_path / "forged.tar.zst"
    rewrite(signed_bundle, forged, {"data/alice/.toy/index.json": b'["x"]'}, recompute_manifests=False)
    problems = verify(str(forged)).problems
    assert any("data/alice/.toy/index.json" in p and "manifest-sha256.txt" in p for p in problems), problems


def test_wrong_public_key_fails(signed_bundle, tmp_path):
    from aitrail.collector.bundle.seal import generate

    other = tmp_path / "other.pem"
    generate(str(other), str(other) + ".pub")
    report = verify(str(signed_bundle), str(other) + ".pub")
    assert not report.ok and any("signature" in p for p in report.problems)


def test_unsigned_bundle_with_public_key_fails(cli, tmp_path, keys):
    home = write_tree(tmp_path / "h", {".toy/index.json": "[]"})
    out = tmp_path / "u.tar.zst"
    assert cli("collect", "--catalog", TOY_CATALOG, "--home", home, "-o", out, "--quiet").exit_code == 0
    assert verify(str(out)).ok
    assert not verify(str(out), str(keys[1])).ok


# -- standard tools ---------------------------------------------------------------

needs_tools = pytest.mark.skipif(not (shutil.which("tar") and shutil.which("zstd") and shutil.which("sha256sum")),
                                 reason="GNU tar, zstd and sha256sum are needed")


@needs_tools
def test_standard_tools_list_extract_and_check(signed_bundle, tmp_path):
    listing = subprocess.run(["tar", "--zstd", "-tvf", signed_bundle], capture_output=True, text=True, check=True)
    assert "data/alice/.toy/index.json" in listing.stdout
    assert "links/alice/.toy/notes/link -> n.txt" in listing.stdout
    subprocess.run(["zstd", "-tq", signed_bundle], check=True)
    subprocess.run(["tar", "--zstd", "-xf", signed_bundle, "-C", tmp_path], check=True)
    for manifest in ("manifest-sha256.txt", "tagmanifest-sha256.txt"):
        subprocess.run(["sha256sum", "--quiet", "-c", manifest], cwd=tmp_path, check=True)
    # the sidecar: the bundle's digest, taken while the bundle was synced to disk
    sidecar = Path(str(signed_bundle) + ".sha256")
    subprocess.run(["sha256sum", "--quiet", "-c", sidecar.name], cwd=sidecar.parent, check=True)


@needs_tools
def test_standard_tools_catch_a_changed_payload_file(signed_bundle, tmp_path):
    subprocess.run(["tar", "--zstd", "-xf", signed_bundle, "-C", tmp_path], check=True)
    (tmp_path / "data/alice/.toy/index.json").write_text("[0]")
    check = subprocess.run(["sha256sum", "--quiet", "-c", "manifest-sha256.txt"], cwd=tmp_path, capture_output=True)
    assert check.returncode != 0


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is needed")
def test_openssl_checks_the_signature(signed_bundle, keys, tmp_path):
    subprocess.run(["tar", "--zstd", "-xf", signed_bundle, "-C", tmp_path], check=True)
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", keys[1], "-rawin",
               "-in", "tagmanifest-sha256.txt", "-sigfile", "aitrail/signature.ed25519"]
    good = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    if "rawin" in good.stderr and good.returncode:
        pytest.skip("this openssl cannot verify raw Ed25519 signatures")
    assert good.returncode == 0, good.stderr
    with open(tmp_path / "tagmanifest-sha256.txt", "a") as handle:
        handle.write("\n")
    assert subprocess.run(command, cwd=tmp_path, capture_output=True).returncode != 0


def test_bagit_validates_the_extracted_bundle(signed_bundle, tmp_path):
    bagit = pytest.importorskip("bagit")
    subprocess.run(["tar", "--zstd", "-xf", signed_bundle, "-C", tmp_path], check=True)
    bag = bagit.Bag(str(tmp_path))
    bag.validate()  # raises BagValidationError on any problem
