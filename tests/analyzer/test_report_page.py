"""The report page in headless Chromium: the case page, the search and filters, folded system rows, hostile text.

Homes are fixture homes (fixtures/demo-home) and Claude Code transcripts
written here from the documented format (docs/agents/claude-code.md),
collected with ``aitrail collect`` and reported with ``aitrail report``.
Chromium dumps the DOM after the page's script ran; the filters are set
through the URL fragment the page reads (docs/report.md, "Search and filters").
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import shutil
import subprocess
import sys
import zoneinfo
from html import escape
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from aitrail.analyzer.report import case
from aitrail.analyzer.report.data import Verification
from aitrail.collector.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
AITRAIL = str(Path(sys.executable).with_name("aitrail"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on this machine")
NOTES = "laptop, seized 2026-12-01"
SESSION = "6c0e8a52-1f3d-4b7a-9e21-5d4c3b2a1f00"
PROJECT = "/home/alice/src/deploy-tools"
AWS_KEY = "AKIAZ7Q4EXAMPLE2K9WD"  # an AWS access key's shape (docs/report.md, secrets)


def _collect(home: Path, out: Path, *options: str) -> str:
    result = CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(out), "--quiet", *options])
    assert result.exit_code == 0, result.output
    return str(out)


def _report(out: Path, *bundles: str) -> Path:
    result = CliRunner().invoke(main, ["report", *bundles, "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return out


def _dom(page: Path, fragment: str = "") -> str:
    """The DOM after the script ran, without the page's script elements (the data blocks hold every text)."""
    url = page.as_uri() + (f"#{fragment}" if fragment else "")
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                           "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False)
    assert "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def _rendered(dom: str) -> str:
    return re.sub(r"<script\b.*?</script>", "", dom, flags=re.DOTALL)


def _between(dom: str, start: str, end: str) -> str:
    """The markup from one element's id to the next one's (the findings lists and session lists are siblings)."""
    head = dom.index(f'id="{start}"')
    return dom[head:dom.index(f'id="{end}"', head)]


def _meta(page: Path, number: int = 0) -> dict:
    html = page.read_text(encoding="utf-8")
    block = re.search(rf'<script type="application/json" id="meta-{number}">(.*?)</script>', html, re.DOTALL)
    return json.loads(block.group(1))


def _rows(page: Path, number: int = 0) -> list[list]:
    html = page.read_text(encoding="utf-8")
    rows: list[list] = []
    for block in re.findall(rf'<script type="application/json" id="rows-{number}-\d+">(.*?)</script>', html,
                            re.DOTALL):
        rows.extend(json.loads(block))
    return rows


def _line(kind: str, uuid: str, parent: str | None, when: str, message: dict, **extra) -> str:
    """One Claude Code transcript line (docs/agents/claude-code.md: the record every user and assistant turn has)."""
    record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": extra.pop("cwd", PROJECT),
              "sessionId": extra.pop("session", SESSION), "version": "2.1.120", "gitBranch": "main", "type": kind,
              "message": message, "uuid": uuid, "timestamp": when, **extra}
    return json.dumps(record)


def _tool_use(uuid: str, parent: str, when: str, call_id: str, command: str, **extra) -> str:
    return _line("assistant", uuid, parent, when,
                 {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                  "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}]},
                 **extra)


def _tool_result(uuid: str, parent: str, when: str, call_id: str, content: str, error: bool = False, **extra) -> str:
    return _line("user", uuid, parent, when,
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content,
                                               "is_error": error}]}, **extra)


def _deploy_session(home: Path) -> None:
    """A session with a prompt, a command that ran, one the user refused, and permission-mode system rows."""
    folder = home / ".claude" / "projects" / "-home-alice-src-deploy-tools"
    folder.mkdir(parents=True)
    mode = json.dumps({"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION})
    lines = [mode, mode.replace("default", "acceptEdits"),
             _line("user", "d1", None, "2026-08-10T14:00:00.000Z",
                   {"role": "user", "content": "Check the staging health endpoint, then clean the build."}),
             _tool_use("d2", "d1", "2026-08-10T14:00:04.000Z", "toolu_health",
                       "curl -s https://staging.example.com/health"),
             _tool_result("d3", "d2", "2026-08-10T14:00:05.000Z", "toolu_health", "status: degraded"),
             _tool_use("d4", "d3", "2026-08-10T14:00:09.000Z", "toolu_clean", "rm -rf dist/staging"),
             _tool_result("d5", "d4", "2026-08-10T14:00:12.000Z", "toolu_clean",
                          "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
                          "it was a file edit, the new_string was NOT written to the file). STOP what you are doing "
                          "and wait for the user to tell you how to proceed.", error=True),
             _line("assistant", "d6", "d5", "2026-08-10T14:00:15.000Z",
                   {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                    "content": [{"type": "text", "text": "Staging reports degraded; I left the build in place."}]}),
             _line("user", "d7", "d6", "2026-08-10T14:01:00.000Z",
                   {"role": "user", "content": f"Upload it with the key {AWS_KEY} then."})]
    (folder / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """fixtures/demo-home plus the deploy session, collected with a case id, notes and the subject's time zone."""
    base = tmp_path_factory.mktemp("page")
    home = base / "home"
    shutil.copytree(FIXTURES / "demo-home", home)
    _deploy_session(home)
    bundle = str(base / "demo.tar.zst")  # by the installed command, so that its command line is collect's own
    subprocess.run([AITRAIL, "collect", "--home", str(home), "-o", bundle, "--quiet", "--case", "42", "--notes", NOTES,
                    "--time-zone", "Europe/Berlin"], check=True, capture_output=True)
    codex = _collect(FIXTURES / "codex/untagged-v1/home", base / "codex.tar.zst", "--case", "42")
    page = _report(base / "demo.html", bundle)
    return {"base": base, "bundle": bundle, "codex": codex, "page": page}


def _session_index(page: Path, session_id: str, number: int = 0) -> int:
    return next(index for index, entry in enumerate(_meta(page, number)["sessions"]) if entry[1] == session_id)


def _counts_table(dom: str) -> dict[str, int]:
    table = re.search(r'<table class="counts">(.*?)</table>', dom, re.DOTALL).group(1)
    return {label: int(value) for label, value in
            re.findall(r'<tr><td(?: class="?sub"?)?>([^<]+)</td><td class="?n"?>(\d+)</td>', table)}


# -- page one ----------------------------------------------------------------------------------------------------

@needs_chromium
def test_the_case_page_shows_the_case_its_subject_and_the_numbers(demo, tmp_path):
    page = demo["page"]
    dom = _dom(page)
    case_html = _between(dom, "case", "search")
    meta = _meta(page)
    counts = meta["counts"]
    rows = _rows(page)
    shown = _counts_table(case_html)
    # the numbers: the page data's exact counts, and those a reader can recount from the rows themselves
    assert shown["timeline rows"] == counts["rows"] == len(rows)
    assert shown["prompts (user rows)"] == counts["prompts"] == sum(1 for row in rows if row[2] == "user")
    assert shown["conversations (sessions)"] == counts["sessions"] == sum(
        1 for entry in meta["sessions"] if entry[8] == "conversation")
    assert shown["configuration files"] == counts["configuration"] > 0
    assert shown["commands"] == counts["commands"] == len(meta["commands"]) >= 5
    for outcome in case.OUTCOMES:
        assert shown[outcome] == counts["commands_by_outcome"].get(outcome, 0)
    assert shown["denied by user"] >= 1 and shown["ran"] >= 1  # rm -rf dist/staging refused; curl ran
    for label, key in (("files written or edited", "files_written"), ("network and web uses", "network"),
                       ("denials (by the user, by a rule, by a setting)", "denials"),
                       ("sessions recovered only from secondary stores", "recovered_sessions"),
                       ("integrity findings", "integrity")):
        assert shown[label] == counts[key]
    assert shown["network and web uses"] >= 1  # the curl
    # the case, its notes, the subject apart from the collecting account, the collector and its command line
    assert "<th>case</th><td>42</td>" in case_html and NOTES in case_html
    assert "/home" in case_html and "subject users" in case_html
    assert "collecting account (ran the collector; not the subject)" in case_html
    collection = json.loads(subprocess.run(["tar", "--zstd", "-xOf", demo["bundle"], "aitrail/collection.json"],
                                           capture_output=True, check=True).stdout)
    assert collection["tool"]["collector_sha256"] in case_html and collection["tool"]["version"] in case_html
    assert escape(shlex.join(collection["command_line"]), quote=False) in case_html  # each argument quoted
    assert f"--case 42 --notes '{NOTES}' --time-zone Europe/Berlin</pre>" in case_html
    assert '<span class="ok">VALID</span> · unsigned' in case_html
    # the time span in UTC and in the subject's zone (Berlin is UTC+2 in summer)
    first, last = meta["span"]
    assert first and f"{first} → {last}" in case_html
    berlin = dt.datetime.fromisoformat(first.replace("Z", "+00:00")).astimezone(zoneinfo.ZoneInfo("Europe/Berlin"))
    assert berlin.isoformat(timespec="seconds") in case_html
    assert "Europe/Berlin (IANA zone" in case_html


def test_two_bundles_are_summed_with_a_column_each(demo, tmp_path):
    page = _report(tmp_path / "two.html", demo["bundle"], demo["codex"])
    html = page.read_text(encoding="utf-8")
    table = _counts_table(html[html.index('<table class="counts">'):])
    rows = sum(_meta(page, number)["counts"]["rows"] for number in range(2))
    assert table["timeline rows"] == rows
    assert re.search(rf"<td>timeline rows</td><td class=n>{rows}</td><td class=n>\d+</td><td class=n>\d+</td>", html)
    assert "(the bundles name different cases)" not in html  # both were collected as case 42


def test_time_zones_are_converted_by_name_or_by_the_recorded_offset_and_say_which():
    berlin, how = case.subject_zone({"time_zone": {"name": "Europe/Berlin", "utc_offset_seconds": 3600}})
    assert "IANA" in how and case.local_time("2026-07-02T09:14:05.112Z", berlin) == "2026-07-02T11:14:05+02:00"
    assert case.local_time("2026-01-02T09:14:05Z", berlin) == "2026-01-02T10:14:05+01:00"  # daylight saving applied
    fixed, how = case.subject_zone({"time_zone": {"name": "W. Europe Standard Time", "utc_offset_seconds": 3600}})
    assert "offset recorded" in how and case.local_time("2026-07-02T09:14:05Z", fixed) == "2026-07-02T10:14:05+01:00"
    stated, how = case.subject_zone({"time_zone": {"name": "W. Europe Standard Time", "name_found": "Etc/UTC",
                                                    "utc_offset_seconds": 0}})
    assert stated is None and "belongs to the zone found" in how  # the workstation's offset is not the subject's
    for hostile in ({"name": "../../../etc/passwd"}, {"name": "/etc/localtime"}, {"name": 7},
                    {"name": "Europe/Nowhere"}, {"utc_offset_seconds": 10**12}, {"utc_offset_seconds": True},
                    "Europe/Berlin", None):
        zone, how = case.subject_zone({"time_zone": hostile})
        assert zone is None and how == "not recorded"
    assert case.local_time("not a time", berlin) == "" and case.local_time("2026-07-02T09:14:05", berlin) == ""


def test_the_command_line_is_quoted_as_a_shell_would_and_hostile_values_are_text():
    assert case.command_line({"command_line": ["aitrail", "collect", "--notes", "a b'c", "-o", "x.tar.zst"]}) == \
        "aitrail collect --notes 'a b'\"'\"'c' -o x.tar.zst"
    assert case.command_line({"command_line": "aitrail collect"}) == "aitrail collect"
    assert case.command_line({"command_line": ["aitrail", 3]}) == ""
    facts = case.BundleFacts(0, "b", "0" * 64, {"homes": "not a list", "locations": [1, None, {"base": 5}],
                                                "host": [], "tool": {"frozen": "yes"}, "case": {"case_id": ["x"]}},
                             Verification(True, [], "unsigned", False, False, []), {"rows": "many"}, ("", ""))
    page = case.case_section([facts])
    assert "none given at collection" in page and "<td class=n>0</td>" in page


def test_the_subject_users_are_the_homes_users_never_the_collecting_account():
    collection = {"homes": [{"label": "alice", "path": "/home/alice", "user": "alice"},
                            {"label": "bob", "path": "/Users/bob", "user": "bob", "found_by": "Users/*"}],
                  "locations": [{"base": "/home/alice", "kind": "home", "user": "alice"},
                                {"base": "/etc/claude-code", "kind": "system", "label": "managed settings"}],
                  "user": {"name": "root", "uid": 0}, "collecting_host": {"hostname": "workstation"}}
    assert case.subject_users(collection) == ["alice", "bob"]
    homes = case.homes_html(collection)
    assert "/Users/bob" in homes and "found by Users/*" in homes and "/etc/claude-code" in homes
    assert homes.count("/home/alice") == 1  # a location that is a home is not listed twice
    assert case.collecting_account(collection) == "root · uid 0 · on workstation"


# -- search and filters --------------------------------------------------------------------------------------------

@needs_chromium
def test_typing_filters_the_findings_and_the_sessions(demo):
    page = demo["page"]
    deploy = _session_index(page, SESSION)
    dom = _rendered(_dom(page, "q=" + quote("rm -rf dist") + "&open=f0-commands"))
    commands = _between(dom, "f0-commands", "f0-written")
    assert "<mark>rm -rf dist</mark>/staging" in commands
    assert "curl -s" not in commands and "npm test" not in commands and "rm -rf build" not in commands
    assert "denied by user" in commands  # the refused command's outcome badge
    total = len(_meta(page)["commands"])
    assert f'<span class="count">{total}</span><span class="match"> · 1 match</span>' in commands
    sessions = _between(dom, "sessions-0", "config-0")
    assert f'id="s0-{deploy}"' in sessions and "0199a2b4" not in sessions  # only sessions with a matching row
    assert "rows match, in" in dom
    # a matching session opens on its matching rows, highlighted
    dom = _rendered(_dom(page, "q=" + quote("rm -rf dist") + f"&open=s0-{deploy}"))
    conversation = dom[dom.index(f'id="s0-{deploy}"'):]
    rows = _meta(page)["sessions"][deploy][5]
    assert f"Showing the rows that match the search and filters: 1 of {rows}." in conversation
    assert "<mark>rm -rf dist</mark>" in conversation and "show the whole conversation" in conversation
    body = conversation.split("</summary>", 1)[1]  # the title (the first prompt) is in the summary
    assert "Check the staging health endpoint" not in body and "Staging reports degraded" not in body


@needs_chromium
def test_the_filters_keep_an_agent_a_time_range_a_turn_type_and_a_host(demo, tmp_path):
    page = demo["page"]
    commands = _between(_rendered(_dom(page, "agent=codex&open=f0-commands")), "f0-commands", "f0-written")
    assert "bash -lc" in commands and "rm -rf" not in commands and "curl -s" not in commands
    commands = _between(_rendered(_dom(page, "from=2026-08-10&to=2026-08-10T14&open=f0-commands")),
                        "f0-commands", "f0-written")
    assert "rm -rf dist" in commands and "curl -s" in commands and "bash -lc" not in commands
    assert "npm test" not in commands
    dom = _rendered(_dom(page, f"turn=user&open=s0-{_session_index(page, SESSION)}"))
    conversation = dom[dom.index(f'id="s0-{_session_index(page, SESSION)}"'):]
    assert "Check the staging health endpoint" in conversation and "Staging reports degraded" not in conversation
    two = _report(tmp_path / "two.html", demo["bundle"], demo["codex"])
    codex = next(number for number in range(2)
                 if not any(entry[1] == SESSION for entry in _meta(two, number)["sessions"]))
    other = 1 - codex  # the demo bundle: filtered out by the host filter
    dom = _rendered(_dom(two, f"bundle={codex}&open=f{other}-commands"))
    commands = _between(dom, f"f{other}-commands", f"f{other}-written")
    assert '<span class="match"> · 0 match</span>' in commands and "rm -rf" not in commands
    kept = re.search(r'<span class="match"> · (\d+) match</span>', _between(dom, f"f{codex}-commands",
                                                                          f"f{codex}-written"))
    assert int(kept.group(1)) == len(_meta(two, codex)["commands"]) > 0  # the host kept has every command



@needs_chromium
def test_hiding_system_rows_leaves_them_out_and_otherwise_they_fold(demo):
    page = demo["page"]
    deploy = _session_index(page, SESSION)
    rows = _rows(page)
    system = [row[5] for row in rows if row[1] == deploy and row[2] == "system"]
    assert len(system) >= 2  # the two permission-mode lines, at least
    folded = _rendered(_dom(page, f"s0-{deploy}"))
    conversation = folded[folded.index(f'id="s0-{deploy}"'):]
    assert re.search(r'<details class="fold sysrun"><summary>\d+ system rows: ', conversation)
    assert "Check the staging health endpoint" in conversation
    hidden = _rendered(_dom(page, f"hide-system=1&open=s0-{deploy}"))
    conversation = hidden[hidden.index(f'id="s0-{deploy}"'):]
    assert f"{len(system)} system rows hidden" in conversation and "sysrun" not in conversation
    assert "Check the staging health endpoint" in conversation
    assert not any(text.split("\n")[0] in conversation for text in system)
    assert "system rows hidden." in hidden  # the status line says so


@needs_chromium
def test_a_secret_in_a_prompt_is_listed_redacted_with_its_provenance(demo):
    page = demo["page"]
    dom = _rendered(_dom(page, "f0-secrets"))
    secrets = _between(dom, "f0-secrets", "f0-integrity")
    assert '<span class="badge b-bad">AWS access key</span><code>AKIA…20</code>' in secrets
    assert f"{SESSION}.jsonl · line:9" in secrets  # the prompt's member and locator
    assert "show the whole prompt (it holds the secret)" in secrets
    assert AWS_KEY not in dom  # nowhere on the page until the examiner opens the row
    opened = _rendered(_dom(page, f"s0-{_session_index(page, SESSION)}"))
    assert AWS_KEY in opened  # the conversation is the evidence: opened, it shows the prompt as recorded


@needs_chromium
def test_network_models_and_integrity_lists_and_the_two_activity_charts(demo):
    from aitrail.analyzer.integrity.rules import RULES

    page = demo["page"]
    meta = _meta(page)
    network = _between(_rendered(_dom(page, "f0-network")), "f0-network", "f0-mcp_servers")
    assert "https://staging.example.com/health" in network and '<span class="badge">command</span>' in network
    models = _between(_rendered(_dom(page, "f0-models")), "f0-models", "f0-secrets")
    deploy = meta["sessions"][_session_index(page, SESSION)]
    assert f"models: claude-sonnet-4-5-20250929 ({deploy[9][0][1]} rows)" in models
    integrity = _between(_rendered(_dom(page, "f0-integrity")), "f0-integrity", "f0-permissions")
    rules = sorted({rule for _, rule in meta["integrity"]})
    assert rules and all(rule in RULES for rule in rules)
    for rule in rules:
        count = sum(1 for _, found in meta["integrity"] if found == rule)
        assert f'<div class="rulehead">{rule}: {count}</div>' in integrity
        assert f'<div class="proves">proves: {escape(RULES[rule].proves, quote=False)}</div>' in integrity
        assert f"does not prove: {escape(RULES[rule].does_not_prove, quote=False)}" in integrity
    static = page.read_text(encoding="utf-8")
    assert "<h4>Record times</h4><svg" in static and "<h4>File times</h4><svg" in static
    assert 'fill="#3b6ea5"' in static and 'fill="#c27c0e"' in static  # drawn apart, in two colours


# -- hostile text --------------------------------------------------------------------------------------------------

def _payload(field: str) -> str:
    return f"<img src=x onerror=\"document.title='pwned-{field}'\"><script>document.title='pwned-{field}-2'</script>"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Markup in a prompt, a session title and id, a project path, a file name, the hostname, case id and notes."""
    base = tmp_path_factory.mktemp("hostile")
    home = base / "home"
    folder = home / ".claude" / "projects" / "-home-alice-x"
    folder.mkdir(parents=True)
    name = "<img src=x onerror=document.title='pwned-file'>"  # no slash: a legal file name
    project = "/home/alice/" + _payload("project")
    lines = [json.dumps({"type": "custom-title", "customTitle": _payload("title"), "sessionId": name}),
             _line("user", "h1", None, "2026-08-11T10:00:00.000Z", {"role": "user", "content": _payload("prompt")},
                   cwd=project, session=name),
             _tool_use("h2", "h1", "2026-08-11T10:00:02.000Z", "toolu_x", "curl " + _payload("command"),
                       cwd=project, session=name),
             _line("user", "h3", "h2", "2026-08-11T10:00:03.000Z", {"role": "user", "content": "open \u202efdp.exe"},
                   cwd=project, session=name)]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    bundle = _collect(home, base / "h.tar.zst", "--case", _payload("case"), "--notes", _payload("notes") + " \u202e!",
                      "--hostname", _payload("host"), "--examiner", _payload("examiner"))
    return _report(base / "h.html", bundle)


@needs_chromium
def test_markup_in_any_field_runs_nowhere(hostile):
    meta = _meta(hostile)
    fragments = ["", "q=pwned", "q=" + quote("<img"), "hide-system=1&q=onerror"]
    fragments += [f"s0-{number}" for number in range(len(meta["sessions"]))]
    fragments += [f"q=pwned&open=s0-{number}" for number in range(len(meta["sessions"]))]
    fragments += [f"f0-{kind}" for kind in ("commands", "network", "permissions", "problems", "unpaired", "integrity")]
    for fragment in fragments:
        dom = _dom(hostile, fragment)
        assert "<title>aitrail report</title>" in dom, f"a script ran with #{fragment}"
        rendered = _rendered(dom)
        assert "<img" not in rendered and "<script>document" not in rendered, f"markup rendered with #{fragment}"
    page = _rendered(_dom(hostile, "s0-0"))  # unfiltered: no <mark> splits the texts
    for field in ("prompt", "project", "title", "case", "notes", "host", "examiner"):
        assert f"document.title='pwned-{field}'" in page, f"the {field} is not shown as text"
    assert "&lt;img src=x onerror=document.title='pwned-file'&gt;" in page  # the file name, as text


@needs_chromium
def test_a_right_to_left_override_shows_as_visible_text(hostile):
    meta = _meta(hostile)
    rows = _rows(hostile)
    session = next(row[1] for row in rows if "fdp.exe" in row[5])
    dom = _rendered(_dom(hostile, f"s0-{session}"))
    assert "open \\u202efdp.exe" in dom and "\u202e" not in dom
    assert "\\u202e!" in dom.split('id="search"')[0]  # in the notes on page one
    assert meta["sessions"][session][1]
