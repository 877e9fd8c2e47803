"""The static parts of the page (summary, hosts, accounting, verification, charts), every bundle text escaped."""

from __future__ import annotations

from collections import Counter
from html import escape

from aitrail.analyzer.report import case
from aitrail.analyzer.report.data import LIST_MAX, Accounting, Verification, section, text
from aitrail.analyzer.report.svg import FILE_COLOUR, RECORD_COLOUR, activity_svg
from aitrail.analyzer.report.timeline import Digest, visible

# Findings lists of a bundle, in page order: (kind, title). The page script knows how to draw each kind.
FINDING_KINDS = (("commands", "Commands, with their outcome and result"), ("written", "Files written or edited"),
                 ("read", "Files read"), ("deleted", "Files deleted"), ("network", "Network and web access"),
                 ("mcp_servers", "MCP servers configured"), ("mcp_calls", "MCP tool calls"),
                 ("subagents", "Sub-agent runs"), ("models", "Models and tokens per session"),
                 ("secrets", "Secrets typed or pasted into prompts (shown redacted)"),
                 ("integrity", "Integrity findings, by rule"),
                 ("permissions", "Permission decisions and settings"),
                 ("secondary", "Sessions recovered only from secondary stores"),
                 ("problems", "Parser problems: damaged or unreadable records"),
                 ("unpaired", "No result recorded: tool calls without a result, results without a call "
                              "(the file is sound; some agents keep no results)"))
# The exact count of a list in Digest.counts (its meta list is capped); kinds not here count their list.
COUNT_OF = {"commands": "commands", "written": "files_written", "read": "files_read", "deleted": "files_deleted",
            "network": "network", "mcp_servers": "mcp_servers", "mcp_calls": "mcp_calls", "subagents": "subagents",
            "secrets": "secrets", "integrity": "integrity", "permissions": "permissions",
            "secondary": "recovered_sessions", "problems": "problems", "unpaired": "unpaired"}
FILE_ACTIONS = {"written": "written", "read": "read", "deleted": "deleted"}
TURN_TYPES = ("user", "assistant", "thinking", "tool_use", "tool_result", "system")


def e(value) -> str:
    """Escaped display text of any bundle value."""
    return escape(visible(text(value)), quote=True)


def table(header: tuple[str, ...], rows: list[tuple], numeric: int = 0) -> str:
    """An HTML table; the last ``numeric`` columns are right-aligned numbers."""
    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    body = []
    for row in rows:
        cells = [f'<td{" class=n" if index >= len(row) - numeric else ""}>{e(cell)}</td>'
                 for index, cell in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def host_section(number: int, path_name: str, sha256: str, collection: dict, problem: str | None) -> str:
    """One bundle's subject (host, homes, users, time zone) and, labelled apart, the account that collected it."""
    host, case_info = section(collection, "host"), section(collection, "case")
    zone, collecting = section(collection, "time_zone"), section(collection, "collecting_host")
    rows = [("bundle", path_name), ("bundle SHA-256", sha256), ("case", case_info.get("case_id")),
            ("examiner", case_info.get("examiner")), ("collection notes", case_info.get("notes")),
            ("hostname", host.get("hostname")), ("hostname from", host.get("hostname_source")),
            ("FQDN", host.get("fqdn")), ("OS", host.get("os")),
            ("time zone", zone.get("name") or zone.get("posix_rule")), ("time zone from", zone.get("source"))]
    subject = [("homes collected", case.homes_html(collection)), ("subject users", case.users_html(collection)),
               ("collecting account (ran the collector; not the subject)", case.collecting_account(collection)),
               ("collecting host", e(collecting.get("hostname")))]
    times = [("mode", collection.get("mode")), ("collection started (UTC)", collection.get("started_utc")),
             ("collection finished (UTC)", collection.get("finished_utc"))]
    body = "".join(f"<tr><td>{escape(label)}</td><td>{e(value)}</td></tr>" for label, value in rows)
    body += "".join(f"<tr><td>{escape(label)}</td><td>{markup}</td></tr>" for label, markup in subject)
    body += "".join(f"<tr><td>{escape(label)}</td><td>{e(value)}</td></tr>" for label, value in times)
    out = [f'<h2 id="bundle-{number}">Bundle {number + 1}: {e(host.get("hostname")) or "(no hostname)"}</h2>',
           f"<table><tr><th>field</th><th>value</th></tr>{body}</table>"]
    if problem:
        out.append(f'<p class="bad">collection.json could not be read: {e(problem)}</p>')
    return "".join(out)


def verification_section(result: Verification) -> str:
    """The verify result and the signature state, failures listed."""
    state = '<span class="ok">VALID</span>' if result.ok else '<span class="bad">FAILED</span>'
    if result.signed:
        signature = "signed" + (" (pinned to the examiner's key)" if result.pinned else " (UNPINNED: verified only "
                                                                                           "under the key recorded in "
                                                                                           "the bundle)")
    else:
        signature = "unsigned"
    out = [f"<h3>Verification</h3><p>{state} · signature: {e(signature)} · {e(result.signature)}",
           f"<br>signer fingerprint: {e(result.fingerprint) or 'none'}</p>"]
    if result.problems:
        out.append("<ul>" + "".join(f'<li class="bad">{e(problem)}</li>' for problem in result.problems) + "</ul>")
    if result.warnings:
        out.append("<ul>" + "".join(f'<li class="warn">{e(warning)}</li>' for warning in result.warnings) + "</ul>")
    return "".join(out)


def _file_list(title: str, total: int, entries: list[dict], columns: tuple[str, ...], shown: bool = False) -> str:
    if not total:
        return f"<p>{escape(title)}: none.</p>"
    rows = [tuple(entry.get(column) for column in columns) for entry in entries]
    more = f'<p class="muted">{total - len(entries)} more not listed here.</p>' if total > len(entries) else ""
    opening = "<details open>" if shown else "<details>"
    return f"{opening}<summary>{escape(title)}: {total}</summary>{table(columns, rows)}{more}</details>"


def accounting_section(accounting: Accounting, counts: dict) -> str:
    """Count matched = collected + skipped + failed per agent, with the credentials, too-large files and failures."""
    rows = [(agent, c["matched"], c["collected"], c["skipped"], c["failed"])
            for agent, c in accounting.per_agent.items()]
    total = accounting.totals()
    rows.append(("all agents", total["matched"], total["collected"], total["skipped"], total["failed"]))
    out = ["<h3>Collection accounting (aitrail/files.jsonl)</h3>",
           table(("agent", "matched", "collected", "skipped", "failed"), rows, numeric=4)]
    declared = tuple(counts.get(key) for key in ("matched", "collected", "skipped", "failed"))
    if declared != (total["matched"], total["collected"], total["skipped"], total["failed"]):
        out.append(f'<p class="bad">collection.json counts differ: {e(" / ".join(map(text, declared)))}</p>')
    out.append(_file_list("Credentials catalogued and never collected", accounting.counts["never_collect"],
                          accounting.never_collected, ("agent", "path", "reason")))
    out.append(_file_list("Too large (not read)", accounting.counts["too_large"], accounting.too_large,
                          ("agent", "path", "size")))
    if accounting.counts["not_read_would_download"]:  # only macOS looks for them: "none" would claim a check
        out.append(_file_list("Cloud placeholders (not read: reading would download them)",
                              accounting.counts["not_read_would_download"], accounting.not_downloaded,
                              ("agent", "path", "size")))
    out.append(_file_list("Failures", accounting.counts["failed"], accounting.failures,
                          ("agent", "path", "outcome", "errno", "error")))
    if accounting.bad_records:
        out.append("<ul>" + "".join(f'<li class="bad">{e(problem)}</li>' for problem in accounting.bad_records)
                   + "</ul>")
    return "".join(out)


def not_parsed_section(items: list[dict]) -> str:
    """Every collected file no parser read, capped; the files no analyzer can read (encrypted, opaque) first."""
    opaque = [item for item in items if item.get("opaque")]
    others = [item for item in items if not item.get("opaque")]
    out = ""
    if opaque:
        entries = [{**item, "size": text(item.get("size"))} for item in opaque[:LIST_MAX]]
        out += _file_list("Stores that cannot be read (encrypted or opaque: they exist, this large and this recent, "
                          "and nothing was parsed from them)", len(opaque), entries,
                          ("agent", "store", "member", "size", "modified_utc", "sha256", "reason"), shown=True)
    entries = [{**item, "size": text(item.get("size"))} for item in others[:LIST_MAX]]
    return out + _file_list("Collected, not parsed (no rows come from these files; extract them by member)",
                            len(others), entries, ("agent", "store", "member", "size", "sha256", "reason"))


def absences_section(items: list[dict]) -> str:
    """What the agents present keep nowhere on disk (catalog ``absences``): a known absence, never 'no activity'."""
    if not items:
        return ""
    rows = "".join(f"<li><b>{e(item.get('agent'))}</b> {e(item.get('versions'))}: {e(item.get('what'))} "
                   f"({e(item.get('reason'))})</li>" for item in items)
    return ("<h3>Known absences</h3><p>Kept nowhere on disk by these versions: an empty timeline of them is not "
            f"'no activity'.</p><ul>{rows}</ul>")


def finding_count(meta: dict, kind: str) -> int:
    """The exact number of entries of one findings list (its meta list may be capped)."""
    counts = meta.get("counts") if isinstance(meta.get("counts"), dict) else {}
    exact = counts.get(COUNT_OF.get(kind, ""))
    if isinstance(exact, int):
        return exact
    if kind in FILE_ACTIONS:
        return sum(1 for entry in meta.get("files", []) if entry[2] == FILE_ACTIONS[kind])
    if kind == "models":
        with_tokens = {entry[0] for entry in meta.get("tokens", [])}
        return sum(1 for number, entry in enumerate(meta.get("sessions", [])) if entry[9] or number in with_tokens)
    return len(meta.get(kind, []))


def _session_kinds(meta: dict) -> Counter:
    return Counter("configuration" if entry[8] == "configuration" else "conversation"
                   for entry in meta.get("sessions", []))


def timeline_section(number: int, digest: Digest, meta: dict) -> str:
    """The two activity charts, the findings' collapsed lists, the sessions and the configuration files."""
    out = [f"<h3>Activity per agent per day (UTC), {digest.rows} rows</h3>",
           '<p class="muted">Rows timed by their own records (blue) and rows timed only by a file\'s modification '
           "time (orange: settings, logs, indexes) are drawn apart: file times gather on the day the files were "
           "last written or copied.</p>",
           "<h4>Record times</h4>", activity_svg(digest.activity_record, RECORD_COLOUR, "rows with a record time"),
           "<h4>File times</h4>", activity_svg(digest.activity_file, FILE_COLOUR, "rows timed by a file")]
    if digest.bad_lines:
        out.append(f'<p class="bad">{digest.bad_lines} timeline lines could not be read.</p>')
    out.append("<h3>Findings</h3>")
    for kind, title in FINDING_KINDS:
        out.append(f'<details class="finding" id="f{number}-{kind}" data-bundle="{number}" data-kind="{kind}">'
                   f'<summary>{escape(title)}: <span class="count">{finding_count(meta, kind)}</span>'
                   '<span class="match"></span></summary><div class="body"></div></details>')
    kinds = _session_kinds(meta)
    out.append(f'<h3>Sessions ({kinds["conversation"]})</h3><details class="sessions" open id="sessions-{number}" '
               f'data-bundle="{number}" data-kind="conversation"><summary>conversations, titled by the agent or by '
               'their first prompt (open one to read it)<span class="match"></span></summary>'
               '<div class="body"></div></details>')
    out.append(f'<h3>Configuration files ({kinds["configuration"]})</h3><details class="sessions" '
               f'id="config-{number}" data-bundle="{number}" data-kind="configuration"><summary>settings, permission '
               'state, memory, project maps, logs and usage files: only system rows<span class="match"></span>'
               '</summary><div class="body"></div></details>')
    return "".join(out)


def controls(agents: list[str], bundles: list[tuple[int, str]]) -> str:
    """The search box and filters; the page script reads them (and an initial state from the URL fragment)."""
    agent_options = "".join(f'<option value="{e(agent)}">{e(agent)}</option>' for agent in agents)
    bundle_options = "".join(f'<option value="{number}">Bundle {number + 1}: {e(host) or "(no hostname)"}</option>'
                             for number, host in bundles)
    turn_options = "".join(f'<option value="{turn}">{turn}</option>' for turn in TURN_TYPES)
    return ('<section class="controls" id="search" aria-label="search and filters">'
            '<input type="search" id="q" placeholder="search findings and conversations" size="34" '
            'autocomplete="off" spellcheck="false">'
            f'<select id="f-agent" title="agent"><option value="">every agent</option>{agent_options}</select>'
            f'<select id="f-bundle" title="host (bundle)"><option value="">every host</option>{bundle_options}</select>'
            '<input type="text" id="f-session" placeholder="session id or title" size="16" autocomplete="off">'
            f'<select id="f-turn" title="turn type"><option value="">every turn type</option>{turn_options}</select>'
            '<input type="text" id="f-from" placeholder="from (UTC) 2026-07-01" size="15" autocomplete="off">'
            '<input type="text" id="f-to" placeholder="to (UTC) 2026-07-31T18" size="15" autocomplete="off">'
            '<label><input type="checkbox" id="f-hide-system"> hide system rows</label>'
            '<button type="button" id="f-clear">clear</button>'
            '<div id="f-status" class="muted" aria-live="polite">Type to search; the page needs JavaScript for '
            "findings, conversations and search.</div></section>")
