"""--format ecs: a bulk body the OpenSearch and Elasticsearch bulk API reads, with ECS field names and types.

No OpenSearch or Elasticsearch server installs from a registry here, so the
body is checked against the bulk format (action and document pairs, every
line ended, one id per row) and the documents against the ECS fields used,
pinned below with their types from the ECS reference
(elastic/ecs@065887c: schemas/base.yml, event.yml, host.yml, log.yml and the
beta gen_ai.yml): a field outside this table must be under ``aitrail.``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from tests.conftest import FIXTURES
from tests.test_golden import timeline

ECS_FIELDS = {
    "@timestamp": "date", "message": "match_only_text", "tags": "keyword",
    "event.kind": "keyword", "event.module": "keyword", "event.dataset": "keyword", "event.provider": "keyword",
    "event.action": "keyword", "event.id": "keyword",
    "gen_ai.agent.name": "keyword", "gen_ai.request.model": "keyword", "gen_ai.tool.name": "keyword",
    "gen_ai.tool.call.id": "keyword",
    "host.name": "keyword", "labels.case_id": "keyword", "log.file.path": "keyword",
}
EVENT_KINDS = {"alert", "asset", "enrichment", "event", "metric", "state", "pipeline_error", "signal"}  # event.yml
DAMAGED = FIXTURES / "pi" / "damaged"  # rows with and without a time
ALL_AGENTS = FIXTURES / "demo-home"  # a home itself, with rows of four agents


def bulk(cli, tmp_path, case) -> list[str]:
    """The bulk body's lines (the last newline checked and dropped)."""
    if case == ALL_AGENTS:
        bundle, out = tmp_path / "demo.tar.zst", tmp_path / "t.ndjson"
        if not bundle.exists():
            assert cli("collect", "--home", case, "-o", bundle, "--quiet").exit_code == 0
        assert cli("analyze", bundle, "-o", out, "--quiet", "--format", "ecs").exit_code == 0
        body = out.read_text(encoding="utf-8")
    else:
        body = timeline(cli, case, tmp_path, "--format", "ecs", name="t.ndjson").decode()
    assert body.endswith("\n")
    return body[:-1].split("\n")


def flattened(document: dict, prefix: str = "") -> dict:
    """``{"a": {"b": 1}}`` as ``{"a.b": 1}``."""
    out = {}
    for key, value in document.items():
        if isinstance(value, dict):
            out.update(flattened(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def check_type(field: str, value, kind: str) -> None:
    """A value of the ECS type."""
    if kind == "date":
        assert isinstance(value, str) and value.endswith("Z"), (field, value)
        datetime.fromisoformat(value[:-1].split(".")[0] + "+00:00")
    elif field == "tags":
        assert isinstance(value, list) and all(isinstance(item, str) and item for item in value)
    else:
        assert isinstance(value, str) and value, (field, value)


def test_the_body_is_action_and_document_pairs_with_ecs_fields(cli, tmp_path):
    lines = bulk(cli, tmp_path, ALL_AGENTS)
    assert len(lines) % 2 == 0 and len(lines) > 40
    ids = []
    for action_line, document_line in zip(lines[::2], lines[1::2], strict=True):
        action, document = json.loads(action_line), json.loads(document_line)
        assert list(action) == ["create"] and list(action["create"]) == ["_id"]
        assert re.fullmatch(r"[0-9a-f]{64}", action["create"]["_id"])
        ids.append(action["create"]["_id"])
        assert "agent" not in document, "ECS agent.* is the shipper, never the AI agent"
        for field, value in flattened(document).items():
            if field.startswith("aitrail."):
                assert isinstance(value, str)
                continue
            assert field in ECS_FIELDS, field
            check_type(field, value, ECS_FIELDS[field])
        assert document["event"]["kind"] in EVENT_KINDS and document["event"]["module"] == "aitrail"
        assert document["event"]["dataset"] == "aitrail." + document["gen_ai"]["agent"]["name"].replace("-", "_")
    assert len(set(ids)) == len(ids), "one id per row"
    providers = {json.loads(line)["event"]["provider"] for line in lines[1::2]}
    assert {"claude-code", "codex", "gemini-cli", "pearai"} <= providers


def test_rows_without_a_time_are_kept_at_the_collection_time_and_tagged(cli, tmp_path):
    documents = [json.loads(line) for line in bulk(cli, tmp_path, DAMAGED)[1::2]]
    untimed = [document for document in documents if "timestamp_utc" not in document["aitrail"]]
    assert untimed and all(document["tags"] == ["aitrail-no-timestamp"] and document["@timestamp"]
                           for document in untimed)
    timed = [document for document in documents if "timestamp_utc" in document["aitrail"]]
    assert timed and all(document["@timestamp"] == document["aitrail"]["timestamp_utc"] and "tags" not in document
                         for document in timed)


def test_the_same_bundle_gives_the_same_ids_and_another_bundle_others(cli, tmp_path):
    first = bulk(cli, tmp_path, ALL_AGENTS)
    (tmp_path / "t.ndjson").unlink()
    assert first == bulk(cli, tmp_path, ALL_AGENTS)  # the same bundle analyzed again: the same body
    (tmp_path / "again").mkdir()
    other = bulk(cli, tmp_path / "again", ALL_AGENTS)  # the same home collected again: another bundle
    assert not set(first[::2]) & set(other[::2])


def test_tool_rows_carry_the_tool_under_gen_ai(cli, tmp_path):
    documents = [json.loads(line) for line in bulk(cli, tmp_path, ALL_AGENTS)[1::2]]
    tools = [document for document in documents if document["aitrail"].get("turn_type") == "tool_use"]
    assert tools and all(document["gen_ai"]["tool"]["name"] for document in tools)
    assert any(document["gen_ai"]["tool"].get("call", {}).get("id") for document in tools)
    assert any(document["event"]["action"] == "tool-call" for document in tools)
