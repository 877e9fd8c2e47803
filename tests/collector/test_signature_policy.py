"""Issue 8: the signature policy of verify and analyze (UNSIGNED said plainly, stripped, re-signed, pinned)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector.bundle import layout, seal
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.cli import main
from tests.collector.bundle_tools import drop_members, rewrite
from tests.conftest import FIXTURES, bundle_json, bundle_records

HOME = FIXTURES / "pearai" / "agent-task" / "home"


def run(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args[0]} raised {result.exception!r}") from result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("keys")
    paths = {}
    for name in ("examiner", "attacker"):
        private = directory / f"{name}.pem"
        seal.generate(str(private), str(private) + ".pub")
        paths[name] = private
    return paths


@pytest.fixture(scope="module")
def bundles(tmp_path_factory, keys) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("signed")
    out = {"unsigned": directory / "unsigned.tar.zst", "signed": directory / "signed.tar.zst"}
    for name, extra in (("unsigned", []), ("signed", ["--sign-key", str(keys["examiner"])])):
        result = CliRunner().invoke(main, ["collect", "--home", str(HOME), "-o", str(out[name]), "--quiet", *extra])
        assert result.exit_code == 0, result.output
    return out


def pub(private: Path) -> Path:
    return Path(str(private) + ".pub")


def resigned(bundle: Path, key: Path, tmp_path: Path) -> Path:
    """The bundle re-signed by another key: signer in collection.json and the signature replaced, all re-hashed."""
    private = seal.load_private(str(key))
    collection = bundle_json(bundle, layout.COLLECTION_JSON)
    collection["signer"].update(fingerprint=seal.fingerprint(private.public_key()),
                                public_key_pem=seal.public_pem(private.public_key()).decode("ascii"))
    step = tmp_path / "step.tar.zst"
    rewrite(bundle, step, {layout.COLLECTION_JSON: json.dumps(collection).encode()})
    with BundleReader(step) as reader:
        manifest = reader.read_data(layout.TAG_MANIFEST)
    out = tmp_path / "resigned.tar.zst"
    rewrite(step, out, {layout.SIGNATURE: seal.sign(private, manifest)})
    return out


def test_unsigned_bundle_is_said_to_be_unsigned_and_what_that_means(bundles):
    code, stdout, _ = run("verify", bundles["unsigned"])
    assert code == 0
    assert "signature  UNSIGNED: integrity against accident only" in stdout
    assert "VALID (UNSIGNED)" in stdout


def test_rehashed_payload_change_of_an_unsigned_bundle_is_valid_but_says_unsigned(bundles, tmp_path):
    """What UNSIGNED means: this bundle was changed and re-hashed; nothing but a signature could tell."""
    records = bundle_records(bundles["unsigned"])
    record = next(record for record in records if record["outcome"] == "collected")
    forged = b"{}"
    record.update(sha256=hashlib.sha256(forged).hexdigest(), stored_size=len(forged))
    changed = tmp_path / "changed.tar.zst"
    rewrite(bundles["unsigned"], changed, {record["member"]: forged,
                                           layout.FILES_JSONL: "".join(json.dumps(r) + "\n" for r in records).encode()})
    code, stdout, _ = run("verify", changed)
    assert code == 0 and "VALID (UNSIGNED)" in stdout and "anyone who can re-hash" in stdout
    code, stdout, stderr = run("verify", changed, "--require-signature", "--public-key", "sha256:" + "ab" * 32)
    assert code == 1 and "--public-key given but the bundle is not signed" in stderr


def test_require_signature_refuses_an_unsigned_bundle_in_verify_and_analyze(bundles, keys, tmp_path):
    pin = ("--public-key", pub(keys["examiner"]))
    code, _, stderr = run("verify", bundles["unsigned"], "--require-signature", *pin)
    assert code == 1 and "--public-key given but the bundle is not signed" in stderr
    code, _, stderr = run("analyze", bundles["unsigned"], "-o", tmp_path / "t.csv", "--require-signature", "--quiet",
                          *pin)
    assert code == 1 and "--public-key given but the bundle is not signed" in stderr
    assert not (tmp_path / "t.csv").exists()
    assert run("verify", bundles["signed"], "--require-signature", *pin)[0] == 0


@pytest.mark.parametrize("command", ["verify", "analyze", "report", "extract", "export"])
def test_require_signature_without_a_pinned_signer_is_a_usage_error(bundles, command, tmp_path):
    """A signature by the key a bundle names itself proves nothing: --require-signature needs --public-key."""
    target = {"verify": [], "analyze": ["-o", tmp_path / "t.csv"], "report": ["-o", tmp_path / "r.html"],
              "extract": [tmp_path / "x"], "export": []}[command]
    args = ["export", "bodyfile", bundles["signed"], "-o", tmp_path / "b"] if command == "export" else [
        command, bundles["signed"], *target]
    code, _, stderr = run(*args, "--require-signature")
    assert code == 2 and "--require-signature needs --public-key" in stderr


def test_a_per_collection_key_is_pinned_by_its_printed_fingerprint(tmp_path):
    """With collect --sign the key is made in memory, its fingerprint printed; verify pins it by that fingerprint."""
    out = tmp_path / "b.tar.zst"
    code, stdout, _ = run("collect", "--home", HOME, "-o", out, "--quiet", "--sign")
    assert code == 0
    [printed] = [line.split()[1] for line in stdout.splitlines() if line.startswith("signer ")]
    signer = bundle_json(out, layout.COLLECTION_JSON)["signer"]
    assert signer["fingerprint"] == printed and signer["key"] == "per-collection"
    assert not list(tmp_path.glob("*.pem")) and sorted(path.name for path in tmp_path.iterdir()) == [
        "b.tar.zst", "b.tar.zst.sha256"]  # nothing of the key written
    code, stdout, _ = run("verify", out, "--public-key", printed, "--require-signature")
    assert code == 0 and f"valid, by the pinned signer {printed}" in stdout
    code, _, stderr = run("verify", out, "--public-key", printed.upper().replace("SHA256", "sha256"))
    assert code == 0
    other = "sha256:" + "0" * 64
    code, _, stderr = run("verify", out, "--public-key", other)
    assert code == 1 and f"not by the pinned signer {other}" in stderr


def test_a_resigned_bundle_fails_against_the_noted_fingerprint(bundles, keys, tmp_path):
    noted = seal.fingerprint(seal.load_private(str(keys["examiner"])).public_key())
    other = resigned(bundles["signed"], keys["attacker"], tmp_path)
    code, _, stderr = run("verify", other, "--public-key", noted)
    assert code == 1 and "not by the pinned signer" in stderr


@pytest.mark.parametrize("make", ["fifo", "zero", "huge"])
def test_a_key_file_is_read_only_when_regular_and_small(bundles, tmp_path, make):
    import os

    path = {"fifo": tmp_path / "k.fifo", "zero": Path("/dev/zero"), "huge": tmp_path / "huge.pem"}[make]
    if make == "fifo":
        os.mkfifo(path)
    if make == "huge":
        path.write_bytes(b"-----BEGIN PUBLIC KEY-----\n" + b"A" * 100_000)
    code, _, stderr = run("verify", bundles["signed"], "--public-key", path)
    assert code == 1 and "cannot load the public key" in stderr


def test_stripped_signature_fails_verify_and_analyze(bundles, tmp_path):
    stripped = tmp_path / "stripped.tar.zst"
    drop_members(bundles["signed"], stripped, {layout.SIGNATURE})
    expected = f"names a signer but {layout.SIGNATURE} is missing"
    code, _, stderr = run("verify", stripped)
    assert code == 1 and expected in stderr
    code, _, stderr = run("analyze", stripped, "-o", tmp_path / "t.csv", "--quiet")
    assert code == 1 and expected in stderr


def test_resigned_bundle_is_unpinned_without_a_key_and_fails_with_the_examiners_key(bundles, keys, tmp_path):
    other = resigned(bundles["signed"], keys["attacker"], tmp_path)
    code, stdout, stderr = run("verify", other)
    assert code == 0
    assert "valid but UNPINNED" in stdout and "WARNING  signature is UNPINNED" in stderr
    code, stdout, stderr = run("verify", other, "--public-key", pub(keys["examiner"]))
    assert code == 1 and "does not verify over tagmanifest-sha256.txt" in stderr
    code, _, stderr = run("analyze", other, "-o", tmp_path / "t.csv", "--public-key", pub(keys["examiner"]), "--quiet")
    assert code == 1 and "does not verify over tagmanifest-sha256.txt" in stderr
    assert not (tmp_path / "t.csv").exists()


def test_analyze_pins_the_key_and_warns_when_unpinned(bundles, keys, tmp_path):
    code, _, stderr = run("analyze", bundles["signed"], "-o", tmp_path / "a.csv", "--public-key", pub(keys["examiner"]),
                          "--require-signature")
    assert code == 0 and "valid, by the given key" in stderr and "UNPINNED" not in stderr
    code, _, stderr = run("analyze", bundles["signed"], "-o", tmp_path / "b.csv")
    assert code == 0 and "WARNING: signature is UNPINNED" in stderr
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_signature_of_the_wrong_size_is_named(bundles, tmp_path):
    bad = tmp_path / "short.tar.zst"
    rewrite(bundles["signed"], bad, {layout.SIGNATURE: b"\0" * 10})
    code, _, stderr = run("verify", bad)
    assert code == 1 and "an Ed25519 signature is exactly 64" in stderr
