"""The catalog: every shipped file validates; the schema refuses what it should."""

from __future__ import annotations

import keyword
import re
import tokenize
from pathlib import Path

import pytest
import yaml

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.schema import CatalogError, parse_agent
from tests.conftest import REPO

AGENTS = (
    "pearai", "claude-code", "codex", "gemini-cli", "cursor-cli", "cursor-ide",
    "vscode-copilot-chat", "continue", "roo-code", "cline", "opencode", "grok", "pi",
    # issue 32
    "copilot-cli", "amp", "aider", "goose", "qwen-code", "openclaw", "crush", "openhands", "kimi-cli",
    "factory-droid", "hermes", "kilo-cli", "codebuff", "mistral-vibe", "auggie", "qoder-cli",
    # issue 33
    "claude-desktop", "chatgpt-desktop", "windsurf", "antigravity", "kiro", "kilo-code", "zed", "jetbrains-ai",
    "amazon-q", "void", "trae", "augment", "warp",
)


def minimal(**changes) -> dict:
    data = {
        "schema_version": 1, "agent": "x", "name": "X", "summary": "s", "docs": "docs/agents/x.md",
        "roots": [{"id": "r", "description": "d", "paths": [".x"]}],
        "stores": [{"id": "s", "root": "r", "include": ["*.json"], "role": "transcript",
                    "format": "json", "description": "d", "parser": "x.s.v1"}],
    }
    data.update(changes)
    return data


def problems(data: dict) -> str:
    with pytest.raises(CatalogError) as info:
        parse_agent(data, "x.yaml")
    return str(info.value)


def test_shipped_catalog_validates_and_has_every_agent():
    catalog = catalog_module.load()
    assert sorted(agent.agent for agent in catalog.agents) == sorted(AGENTS)
    # Agents whose secrets live only inside files collected for other reasons (encrypted
    # VS Code SecretStorage rows in state.vscdb) have no credential file to catalogue.
    secrets_only_in_state_db = {"roo-code", "augment", "kilo-code", "trae", "void"}  # each catalog file says so
    for agent in catalog.agents:
        has_credentials = any(store.role == "credential" and store.collect == "never" for store in agent.stores)
        assert has_credentials or agent.agent in secrets_only_in_state_db, agent.agent


def test_cli_validate_exits_zero_on_shipped_catalog(cli):
    result = cli("catalog", "validate")
    assert result.exit_code == 0, result.output
    assert f"catalog valid: {len(AGENTS)} agents" in result.output


def test_minimal_file_parses():
    parse_agent(minimal(), "x.yaml")


def test_credential_tables_are_for_a_database_and_absences_say_what_and_why():
    store = {"id": "db", "root": "r", "include": ["x.db"], "role": "state_db", "format": "sqlite",
             "description": "d", "parser": "x.db.v1", "credential_tables": ["account", "credential"]}
    parsed = parse_agent(minimal(stores=[store]), "x.yaml")
    assert parsed.stores[0].credential_tables == ("account", "credential")
    assert "credential_tables is only for a sqlite store" in problems(minimal(stores=[{**store, "format": "json"}]))
    absence = {"what": "threads", "versions": "0.0.1770000000 and later", "reason": "kept on the vendor's servers"}
    assert parse_agent(minimal(absences=[absence]), "x.yaml").absences[0].reason == "kept on the vendor's servers"
    assert "absences[0]" in problems(minimal(absences=[{"what": "threads"}]))


def test_files_jsonl_names_the_credential_tables_of_a_database_and_its_companions(cli, tmp_path):
    """A database that mixes evidence and tokens is collected (it is the evidence); its record says which tables."""
    import sqlite3

    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    data = minimal(agent="probe", name="Probe", docs="docs/agents/probe.md", stores=[
        {"id": "db", "root": "r", "include": ["probe.db", "probe.db-wal"], "role": "state_db", "format": "sqlite",
         "description": "d", "parser": "probe.db.v1", "credential_tables": ["account"]},
        {"id": "notes", "root": "r", "include": ["notes.json"], "role": "settings", "format": "json",
         "description": "d", "parser": "probe.notes.v1"},
        {"id": "auth", "root": "r", "include": ["auth.json"], "role": "credential", "format": "json",
         "description": "d", "collect": "never"}])
    (catalog_dir / "probe.yaml").write_text(yaml.safe_dump(data))
    home = tmp_path / "home"
    (home / ".x").mkdir(parents=True)
    connection = sqlite3.connect(home / ".x" / "probe.db")
    connection.executescript("PRAGMA journal_mode=WAL; CREATE TABLE account(token TEXT); "
                             "CREATE TABLE message(text TEXT); INSERT INTO message VALUES ('hi');")
    (home / ".x" / "notes.json").write_text("{}")
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", catalog_dir, "--home", home, "-o", out, "--quiet")
    connection.close()
    assert result.exit_code == 0, result.output + result.stderr
    from tests.conftest import bundle_records

    records = {record["path"]: record for record in bundle_records(out)}
    assert records[".x/probe.db"]["credential_tables"] == ["account"]
    assert records[".x/probe.db-wal"]["credential_tables"] == ["account"]
    assert "credential_tables" not in records[".x/notes.json"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"schema_version": 2}, "schema_version must be 1"),
        ({"agent": "Bad_Id"}, "kebab-case"),
        ({"docs": "docs/x.md"}, "docs must be 'docs/agents/x.md'"),
        ({"roots": []}, "roots: must be a non-empty list"),
    ],
)
def test_top_level_errors(change, message):
    assert message in problems(minimal(**change))


@pytest.mark.parametrize(
    "store_change, message",
    [
        ({"incldue": ["a"]}, "unknown key 'incldue'"),
        ({"role": "chat"}, "'role' is 'chat'"),
        ({"format": "xml"}, "'format' is 'xml'"),
        ({"root": "nowhere"}, "root 'nowhere' is not defined"),
        ({"parser": "y.s.v1"}, "must start with 'x'"),
        ({"parser": "x.s"}, "must look like"),
        ({"role": "credential"}, "must say collect: never"),
        ({"collect": "never", "parser": None}, "only for role: credential"),
        ({"role": "credential", "collect": "never"}, "cannot name a parser"),
        ({"include": ["/etc/passwd"]}, "absolute glob"),
        ({"include": ["a/../b"]}, "'..' segment"),
        ({"include": ["a/b**"]}, "'**' must be a whole segment"),
        ({"include": ["a/{b,c"]}, "unbalanced"),
        ({"include": "a"}, "list of non-empty strings"),
    ],
)
def test_store_errors_name_file_store_and_key(store_change, message):
    data = minimal()
    data["stores"][0].update(store_change)
    text = problems(data)
    assert message in text
    assert text.startswith("x.yaml: ")


@pytest.mark.parametrize(("paths", "missing"), [
    (["tmp/qlog"], "'tmp/qlog' needs its macOS twin 'private/tmp/qlog'"),
    (["var/folders/*/*/T/x"], "'var/folders/*/*/T/x' needs its macOS twin 'private/var/folders/*/*/T/x'"),
    (["private/tmp/x"], "'private/tmp/x' needs its twin 'tmp/x'"),
])
def test_a_system_path_under_tmp_or_var_names_its_private_twin(paths, missing):
    root = {"id": "r", "description": "d", "paths": paths, "scope": "system"}
    assert missing in problems(minimal(roots=[root]))
    parse_agent(minimal(roots=[{**root, "paths": sorted({*paths, *(
        f"private/{path}" if not path.startswith("private/") else path[8:] for path in paths)})}]), "x.yaml")


def test_every_problem_is_reported_not_only_the_first():
    data = minimal()
    data["stores"][0].update({"role": "chat", "format": "xml", "extra": 1})
    assert len(problems(data).splitlines()) == 3


def test_duplicate_yaml_keys_are_refused(tmp_path):
    text = yaml.safe_dump(minimal()) + "name: again\n"
    (tmp_path / "x.yaml").write_text(text)
    with pytest.raises(CatalogError, match="duplicate key 'name'"):
        catalog_module.load(tmp_path)


def test_file_name_must_match_agent(tmp_path):
    (tmp_path / "y.yaml").write_text(yaml.safe_dump(minimal()))
    with pytest.raises(CatalogError, match="must match the file name"):
        catalog_module.load(tmp_path)


def test_parser_id_belongs_to_one_agent(tmp_path):
    first = minimal()
    second = minimal(agent="x2", docs="docs/agents/x2.md")
    second["stores"][0]["parser"] = "x.s.v1"
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(first))
    (tmp_path / "x2.yaml").write_text(yaml.safe_dump(second))
    with pytest.raises(CatalogError, match="must start with 'x2'"):
        catalog_module.load(tmp_path)


def test_catalog_digest_changes_with_any_byte(tmp_path):
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(minimal()))
    before = catalog_module.load(tmp_path).digest
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(minimal(name="Y")))
    assert catalog_module.load(tmp_path).digest != before


def test_catalog_directory_holds_data_only():
    for path in (REPO / "catalog").iterdir():
        assert path.suffix == ".yaml", f"{path.name}: catalog/ holds YAML only"


def test_collector_code_names_no_agent():
    """The walker and bundle code know no agent: everything comes from the catalog."""
    # 'continue' is also an English word and a Python keyword: look for its directory name instead
    names = tuple(agent for agent in AGENTS if agent != "continue") + ("claude", "copilot", "cursor", "gemini")
    pattern = re.compile(r"\b(" + "|".join(re.escape(name) for name in names) + r")\b|\.continue\b", re.I)
    for path in Path(REPO / "collector").rglob("*.py"):
        with open(path, "rb") as handle:
            for token in tokenize.tokenize(handle.readline):
                if token.type == tokenize.NAME and keyword.iskeyword(token.string):
                    continue  # the Python keyword 'continue' is not the agent
                if pattern.search(token.string):
                    raise AssertionError(f"{path.name}:{token.start[0]} names an agent: {token.line.strip()}")


def test_show_prints_home_relative_globs(cli):
    result = cli("catalog", "show", "pearai")
    assert result.exit_code == 0
    assert "include  .pearai/sessions/*.json" in result.output
    assert "NEVER COLLECTED" in result.output


def test_show_unknown_agent_is_a_usage_error(cli):
    result = cli("catalog", "show", "nope")
    assert result.exit_code == 2
