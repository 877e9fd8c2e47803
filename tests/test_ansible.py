"""packaging/ansible/aitrail-collect.yml, run by the venv's ansible-playbook on this machine (docs/fleet-ansible.md).

The "host" is localhost with ``connection: local``, in an inventory this test
writes. The collector is the frozen build's zip, beside its folder in dist/:
the build AITRAIL_FROZEN_COLLECTOR names (as CI exports it), else one already
in the checkout's dist/ built from these sources, else one built now
(tests/collector/test_frozen.py's frozen_program). Its SHA-256 is pinned from
the build's own ``.zip.sha256``, as docs/fleet-ansible.md tells the examiner.

A test cannot create users, so the play collects fixtures/demo-home with
``all_users=false`` and ``--home`` among the extra arguments, instead of the
default --all-users. Two runs of ansible-playbook (each takes seconds to
start): one on the good path, one with a wrong pinned hash.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from aitrail.collector import frozen
from tests.collector.test_frozen import FROZEN_ENV, _load_build_script
from tests.collector.test_frozen import frozen_program as frozen_program  # the helper that finds or builds it
from tests.conftest import FIXTURES, REPO, bundle_json

PLAYBOOK = REPO / "packaging" / "ansible" / "aitrail-collect.yml"
VENV_BIN = Path(sys.executable).parent
ANSIBLE_PLAYBOOK = VENV_BIN / "ansible-playbook"
CASE, EXAMINER = "CASE-ANSIBLE-1", "Examiner O'Neil"  # a quote, passed through argv untouched


def existing_build() -> Path | None:
    """The program of a build already in the checkout's dist/ for this machine, if built from these sources."""
    if os.environ.get(FROZEN_ENV):
        return None  # the named build is the one to test (frozen_program takes it)
    script = _load_build_script()
    folder = REPO / "dist" / script.build_name(script.source_version(), *script.platform_tag())
    try:
        manifest = json.loads((folder / frozen.BUILD_MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if manifest.get("collector_sha256") != frozen.source_digest(REPO / "collector"):
        return None  # built from other sources: not the collector under test
    program = folder / script.executable_name()
    return program if program.is_file() else None


@dataclass
class Collector:
    """The build's zip, and the SHA-256 its .zip.sha256 pins."""

    zip: Path
    sha256: str


@pytest.fixture(scope="module")
def collector(request) -> Collector:
    program = existing_build() or request.getfixturevalue("frozen_program")
    folder = program.parent
    archive = folder.with_name(folder.name + ".zip")
    checksum = archive.with_name(archive.name + ".sha256")
    assert archive.is_file() and checksum.is_file(), f"the build's zip and .zip.sha256 are not beside {folder}"
    digest, name = checksum.read_text(encoding="utf-8").split()
    assert name == archive.name
    return Collector(archive, digest)


@dataclass
class Play:
    """One ansible-playbook run: what it printed, the controller's output directory, the host's temp parent."""

    done: subprocess.CompletedProcess
    output: Path
    host_tmp: Path


def run_play(base: Path, collector: Collector, pinned: str) -> Play:
    """Run the playbook on localhost (connection: local) with the demo home; Ansible's own files kept under base."""
    assert ANSIBLE_PLAYBOOK.is_file(), "ansible-playbook is not in the venv: pip install ansible-core (test extra)"
    inventory = base / "inventory.ini"
    inventory.write_text(f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    output, host_tmp = base / "fleet", base / "host-tmp"
    host_tmp.mkdir()
    extra = {
        "collector_zip": str(collector.zip), "collector_sha256": pinned, "case": CASE, "examiner": EXAMINER,
        "output_dir": str(output), "all_users": False,
        # instead of --all-users, which needs users a test cannot create
        "collector_extra_args": ["--home", str(FIXTURES / "demo-home")],
        "collector_tmp_parent": str(host_tmp),
    }
    env = {**os.environ, "ANSIBLE_HOME": str(base / "ansible-home"), "ANSIBLE_LOCAL_TEMP": str(base / "local-tmp"),
           "ANSIBLE_REMOTE_TEMP": str(base / "remote-tmp"), "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
           "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}"}
    done = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(PLAYBOOK), "-e", json.dumps(extra)],
                          cwd=base, env=env, capture_output=True, text=True, timeout=300)
    return Play(done, output, host_tmp)


@pytest.fixture(scope="module")
def good(collector: Collector, tmp_path_factory) -> Play:
    return run_play(tmp_path_factory.mktemp("ansible-good"), collector, collector.sha256)


def fetched(play: Play) -> tuple[Path, Path]:
    folder = play.output / "localhost"
    return folder / "localhost.tar.zst", folder / "localhost.tar.zst.sha256"


def test_the_play_collects_and_fetches_the_bundle_and_its_sidecar(good: Play):
    assert good.done.returncode == 0, good.done.stdout[-6000:] + good.done.stderr[-3000:]
    bundle, sidecar = fetched(good)
    assert bundle.is_file() and sidecar.is_file()
    assert sorted(path.name for path in bundle.parent.iterdir()) == [bundle.name, sidecar.name]
    assert "localhost.tar.zst: OK" in good.done.stdout  # the play's own sha256sum -c on the controller


def test_sha256sum_checks_the_fetched_pair(good: Play):
    bundle, sidecar = fetched(good)
    done = subprocess.run(["sha256sum", "-c", sidecar.name], cwd=bundle.parent, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"{bundle.name}: OK"


def test_the_fetched_bundle_verifies(good: Play):
    bundle, _ = fetched(good)
    done = subprocess.run([str(VENV_BIN / "aitrail"), "verify", str(bundle)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("VALID")


def test_the_bundle_was_made_by_the_frozen_collector_with_the_plays_argv(good: Play, collector: Collector):
    bundle, _ = fetched(good)
    record = bundle_json(bundle, "aitrail/collection.json")
    assert record["case"]["case_id"] == CASE and record["case"]["examiner"] == EXAMINER
    assert record["tool"]["frozen"] is True and record["tool"]["build"]["as_built"] is True
    argv = record["command_line"]
    assert Path(argv[0]).name == "aitrail-collector" and Path(argv[0]).parent.name == collector.zip.stem
    assert argv[1:] == ["collect", "--case", CASE, "--examiner", EXAMINER, "-o",
                        str(Path(argv[0]).parent.parent / "localhost.tar.zst"), "--quiet",
                        "--home", str(FIXTURES / "demo-home")]
    assert Path(argv[0]).parent.parent.parent == good.host_tmp  # it ran inside the private temporary directory
    assert record["counts"]["collected"] > 0


def test_the_hosts_temporary_directory_is_gone(good: Play):
    assert good.done.returncode == 0
    assert list(good.host_tmp.iterdir()) == []


def test_a_wrong_pinned_hash_fails_before_anything_runs(collector: Collector, tmp_path: Path):
    wrong = ("0" if collector.sha256[0] != "0" else "1") + collector.sha256[1:]
    play = run_play(tmp_path, collector, wrong)
    assert play.done.returncode != 0
    assert f"is not the pinned collector: its SHA-256 is {collector.sha256}" in play.done.stdout + play.done.stderr
    assert "Collect with the frozen aitrail collector" not in play.done.stdout  # the hosts' play never started
    assert not play.output.exists()
    assert list(play.host_tmp.iterdir()) == []


def test_a_host_of_another_system_than_the_builds_is_refused_before_anything_is_copied(collector: Collector,
                                                                                        tmp_path: Path):
    other = tmp_path / "dist" / "aitrail-collector-0.1.0-macos-arm64.zip"  # the same bytes, named for a Mac
    other.parent.mkdir()
    other.write_bytes(collector.zip.read_bytes())
    play = run_play(tmp_path, Collector(other, collector.sha256), collector.sha256)
    assert play.done.returncode != 0
    assert "runs on macos-arm64" in play.done.stdout + play.done.stderr
    assert "Make the private temporary directory" not in play.done.stdout
    assert list(play.host_tmp.iterdir()) == [] and not play.output.exists()
