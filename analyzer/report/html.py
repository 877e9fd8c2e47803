"""The static parts of the page (summary, hosts, accounting, verification, charts), every bundle text escaped."""

from __future__ import annotations

from html import escape

from aitrail.analyzer.report.data import LIST_MAX, Accounting, Verification, section, text
from aitrail.analyzer.report.svg import activity_svg
from aitrail.analyzer.report.timeline import Digest, visible

FINDING_KINDS = (("commands", "Commands run (with their results)"), ("writes", "Files written or edited"),
                 ("permissions", "Permission decisions and settings"),
                 ("secondary", "Sessions recovered only from secondary stores"),
                 ("problems", "Damaged or unreadable records (parser: rows)"),
                 ("unpaired", "Tool calls without a recorded result, results without a call (the file is sound)"))


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
    """Hostname, user, mode and collection times of one bundle."""
    host, user, case = section(collection, "host"), section(collection, "user"), section(collection, "case")
    zone, collecting = section(collection, "time_zone"), section(collection, "collecting_host")
    rows = [("bundle", path_name), ("bundle SHA-256", sha256), ("case", case.get("case_id")),
            ("examiner", case.get("examiner")), ("hostname", host.get("hostname")),
            ("hostname from", host.get("hostname_source")), ("FQDN", host.get("fqdn")), ("OS", host.get("os")),
            ("time zone", zone.get("name") or zone.get("posix_rule")), ("time zone from", zone.get("source")),
            ("collected on host", collecting.get("hostname")), ("collected by account", user.get("name")),
            ("uid", user.get("uid")),
            ("mode", collection.get("mode")), ("collection started (UTC)", collection.get("started_utc")),
            ("collection finished (UTC)", collection.get("finished_utc"))]
    out = [f'<h2 id="bundle-{number}">Bundle {number + 1}: {e(host.get("hostname")) or "(no hostname)"}</h2>',
           table(("field", "value"), rows)]
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


def _file_list(title: str, total: int, entries: list[dict], columns: tuple[str, ...]) -> str:
    if not total:
        return f"<p>{escape(title)}: none.</p>"
    rows = [tuple(entry[column] for column in columns) for entry in entries]
    more = f'<p class="muted">{total - len(entries)} more not listed here.</p>' if total > len(entries) else ""
    return f"<details><summary>{escape(title)}: {total}</summary>{table(columns, rows)}{more}</details>"


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
    """Every collected file no parser read (documentary stores, companions without their database), capped."""
    entries = [{**item, "size": text(item.get("size"))} for item in items[:LIST_MAX]]
    return _file_list("Collected, not parsed (no rows come from these files; extract them by member)", len(items),
                      entries, ("agent", "store", "member", "size", "sha256", "reason"))


def timeline_section(number: int, digest: Digest) -> str:
    """The chart, the findings' collapsed sections and the session list of one bundle."""
    lengths = {"commands": len(digest.commands), "writes": len(digest.writes),
               "permissions": len(digest.permissions), "secondary": len(digest.secondary_only()),
               "problems": len(digest.problems), "unpaired": len(digest.unpaired)}
    out = [f"<h3>Activity per agent per day (UTC), {digest.rows} rows</h3>", activity_svg(digest.activity)]
    if digest.bad_lines:
        out.append(f'<p class="bad">{digest.bad_lines} timeline lines could not be read.</p>')
    out.append("<h3>Findings</h3>")
    for kind, title in FINDING_KINDS:
        out.append(f'<details class="finding" id="f{number}-{kind}" data-bundle="{number}" data-kind="{kind}">'
                   f'<summary>{escape(title)}: {lengths[kind]}</summary><div class="body"></div></details>')
    out.append(f'<h3>Sessions ({len(digest.sessions)})</h3><details class="sessions" open id="sessions-{number}" '
               f'data-bundle="{number}"><summary>conversations (open one to read it)</summary>'
               '<div class="body"></div></details>')
    return "".join(out)
