"""Opaque stores (catalog ``opaque``): collected and sealed, never parsed, and named with size, time and reason."""

from __future__ import annotations

import json
import os

import yaml

from tests.collector.test_catalog import minimal, parse_agent, problems

REASON = "encrypted at rest (AES-256-GCM; the key is in the macOS Keychain)"


def test_opaque_is_only_for_a_documentary_store_without_parser():
    store = {"id": "sealed", "root": "r", "include": ["*.data"], "role": "transcript", "format": "binary",
             "description": "d", "parser": None, "origin": "documentary", "opaque": REASON}
    assert parse_agent(minimal(stores=[store]), "x.yaml").stores[0].opaque == REASON
    assert "opaque is only for a documentary store" in problems(minimal(stores=[{**store, "parser": "x.sealed.v1"}]))
    assert "opaque is only for a documentary store" in problems(minimal(stores=[{**store, "origin": "primary"}]))
    assert "'opaque' must be a non-empty string" in problems(minimal(stores=[{**store, "opaque": ""}]))


def sealed_bundle(cli, tmp_path):
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    data = minimal(agent="probe", name="Probe", docs="docs/agents/probe.md", stores=[
        {"id": "sealed", "root": "r", "include": ["conversations-v3-*/*.data"], "role": "transcript",
         "format": "binary", "description": "d", "parser": None, "origin": "documentary", "opaque": REASON},
        {"id": "notes", "root": "r", "include": ["notes.md"], "role": "memory", "format": "markdown",
         "description": "d", "parser": None, "origin": "documentary"}])
    (catalog_dir / "probe.yaml").write_text(yaml.safe_dump(data))
    home = tmp_path / "home"
    sealed = home / ".x" / "conversations-v3-1f2e" / "c0ffee.data"
    sealed.parent.mkdir(parents=True)
    sealed.write_bytes(os.urandom(4096))
    os.utime(sealed, (1_767_225_600, 1_767_225_600))  # 2026-01-01T00:00:00Z
    (home / ".x" / "notes.md").write_text("remember\n")
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", catalog_dir, "--home", home, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    return out


def test_an_opaque_file_is_named_in_files_jsonl_summary_stderr_timeline_and_report(cli, tmp_path):
    from tests.conftest import bundle_records

    bundle = sealed_bundle(cli, tmp_path)
    records = {record["path"]: record for record in bundle_records(bundle)}
    assert records[".x/conversations-v3-1f2e/c0ffee.data"]["opaque"] == REASON
    assert "opaque" not in records[".x/notes.md"]

    timeline, summary = tmp_path / "t.jsonl", tmp_path / "s.json"
    result = cli("analyze", bundle, "-o", timeline, "--format", "jsonl", "--summary", summary)
    assert result.exit_code == 0, result.output + result.stderr
    entries = {entry["path"]: entry for entry in json.loads(summary.read_text())["not_parsed"]}
    sealed = entries[".x/conversations-v3-1f2e/c0ffee.data"]
    assert (sealed["opaque"], sealed["size"], sealed["modified_utc"]) == (True, 4096, "2026-01-01T00:00:00.000Z")
    assert sealed["reason"] == f"cannot be read: {REASON}"
    assert entries[".x/notes.md"]["opaque"] is False
    assert "cannot be read: data/" in result.stderr and f"modified 2026-01-01T00:00:00.000Z; cannot be read: {REASON}" \
        in result.stderr
    rows = [json.loads(line) for line in timeline.read_text().splitlines()]
    row = next(row for row in rows if row["source"].endswith("c0ffee.data"))
    assert row["text"].startswith(f"integrity: not parsed: cannot be read: {REASON}; 4096 bytes, SHA-256 ")
    assert (row["timestamp_utc"], row["timestamp_source"]) == ("2026-01-01T00:00:00.000Z", "file-mtime")

    report = tmp_path / "r.html"
    result = cli("report", bundle, "-o", report)
    assert result.exit_code == 0, result.output + result.stderr
    page = report.read_text()
    assert "Stores that cannot be read" in page and "<details open><summary>Stores that cannot be read" in page
    assert REASON in page and "2026-01-01T00:00:00.000Z" in page
