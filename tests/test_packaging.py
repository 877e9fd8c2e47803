"""The wheel carries every module: setup.py's package list covers every folder with Python code.

A hand-written package list once left analyzer/parsers/ and analyzer/formats/
out of the wheel, so a fresh `pip install .` could collect but not analyze.
`.ci/run` runs the README's first command from a built wheel; this test says
which folder would be missing, without building one.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import setuptools

from tests.conftest import REPO

MAPPED = {"collector": "aitrail.collector", "analyzer": "aitrail.analyzer", "catalog": "aitrail.catalog"}


def _setup_arguments(monkeypatch) -> dict:
    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(REPO)
    runpy.run_path(str(REPO / "setup.py"), run_name="__main__")
    return captured


def test_every_folder_with_python_code_is_a_package_of_the_wheel(monkeypatch):
    arguments = _setup_arguments(monkeypatch)
    packages = set(arguments["packages"])
    expected = set()
    for folder, name in MAPPED.items():
        for path in (REPO / folder).rglob("*.py"):
            relative = path.parent.relative_to(REPO / folder)
            expected.add(".".join((name, *relative.parts)) if relative.parts else name)
    missing = sorted(expected - packages)
    assert not missing, f"not in the wheel: {missing} (a folder without __init__.py?)"
    assert {"aitrail.analyzer.parsers", "aitrail.analyzer.formats", "aitrail.collector.bundle"} <= packages
    assert arguments["package_dir"] == {name: folder for folder, name in MAPPED.items()}


def test_the_catalog_files_are_package_data():
    text = (REPO / "pyproject.toml").read_text()
    assert '"aitrail.catalog" = ["*.yaml"]' in text
    assert list(Path(REPO / "catalog").glob("*.yaml"))
