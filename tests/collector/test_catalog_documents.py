"""The catalog's parsed documents (parsed-documents.json, written by the build): the YAML's, or not used."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog import documents
from aitrail.collector.catalog.schema import CatalogError


@pytest.fixture(scope="module")
def installed() -> Path:
    directory = catalog_module.default_directory()
    if not (directory / documents.PARSED_DOCUMENTS).exists():
        if os.environ.get("CI") == "true":  # CI installs a built wheel: the build must have written them
            pytest.fail(f"{directory}: the build wrote no {documents.PARSED_DOCUMENTS}")
        pytest.skip("an editable install reads the catalog from its YAML only")
    return directory


@pytest.fixture
def copy(installed: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(installed, tmp_path / "catalog"))


def _without_parsed(directory: Path, tmp_path: Path) -> catalog_module.Catalog:
    plain = tmp_path / "yaml-only"
    plain.mkdir()
    for path in directory.glob("*.yaml"):
        shutil.copy(path, plain / path.name)
    return catalog_module.load(plain)


def test_every_shipped_file_has_its_yaml_document(installed: Path):
    parsed = documents.read_parsed(installed)
    names = sorted(path.name for path in installed.glob("*.yaml"))
    assert sorted(parsed) == names
    for name in names:
        data = (installed / name).read_bytes()
        assert documents.parsed_document(parsed, name, data) == documents.yaml_document(data), name


def test_the_catalog_loaded_is_the_one_its_yaml_gives(installed: Path, tmp_path: Path):
    loaded, from_yaml = catalog_module.load(installed), _without_parsed(installed, tmp_path)
    assert loaded.agents == from_yaml.agents
    assert loaded.raw_files == from_yaml.raw_files and loaded.digest == from_yaml.digest


def test_a_parsed_document_is_used_only_for_the_bytes_it_was_parsed_from(copy: Path, tmp_path: Path):
    record = json.loads((copy / documents.PARSED_DOCUMENTS).read_bytes())
    record["documents"]["codex.yaml"]["document"]["summary"] = "from the parsed documents"
    (copy / documents.PARSED_DOCUMENTS).write_text(json.dumps(record))
    edited = (copy / "pi.yaml").read_text().replace("\nname: ", "\nname: edited after the build ", 1)
    (copy / "pi.yaml").write_text(edited)
    loaded = catalog_module.load(copy)
    assert loaded.agent("codex").summary == "from the parsed documents"  # same bytes: the parsed document is read
    assert loaded.agent("pi").name.startswith("edited after the build ")  # other bytes: their YAML is read
    assert loaded.agent("pi") == _without_parsed(copy, tmp_path).agent("pi")


def test_a_parsed_document_is_validated_like_yaml(copy: Path):
    record = json.loads((copy / documents.PARSED_DOCUMENTS).read_bytes())
    del record["documents"]["codex.yaml"]["document"]["stores"]
    (copy / documents.PARSED_DOCUMENTS).write_text(json.dumps(record))
    with pytest.raises(CatalogError, match="codex.yaml"):
        catalog_module.load(copy)


@pytest.mark.parametrize("content", [b"", b"not json", b"[]", b'{"format": 2, "documents": {}}',
                                     b'{"format": 1, "documents": []}',
                                     b'{"format": 1, "documents": {"codex.yaml": 7}}'])
def test_an_unreadable_parsed_file_means_yaml(copy: Path, tmp_path: Path, content: bytes):
    (copy / documents.PARSED_DOCUMENTS).write_bytes(content)
    assert catalog_module.load(copy).agents == _without_parsed(copy, tmp_path).agents


def test_a_collection_does_not_import_yaml(installed: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    code = ("import sys\n"
            "from aitrail.collector.collect import CollectOptions, run\n"
            f"run(CollectOptions(output=None, homes=[{str(home)!r}], dry_run=True, progress=False))\n"
            "print(sorted(name for name in sys.modules if name == 'yaml' or name.startswith('cryptography')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_what_json_would_change_is_left_to_yaml(tmp_path: Path):
    (tmp_path / "dated.yaml").write_text("when: 2026-12-02\n")
    (tmp_path / "plain.yaml").write_text("name: x\n")
    (tmp_path / "int-keys.yaml").write_text("1: x\n")
    (tmp_path / "broken.yaml").write_text("a: [\n")
    assert sorted(documents.parsed_documents(tmp_path)["documents"]) == ["plain.yaml"]
