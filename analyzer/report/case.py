"""Page one of the report: the case across every bundle, as static HTML with every bundle text escaped.

The case id(s), the subjects (per bundle: host, homes, locations and their
users, kept apart from the account that ran the collector), the agents, the
time span in UTC and in each subject's time zone, the counts summed over the
bundles, the collection notes, the collector's version and command line, and
each bundle's verification and signer. Everything read from collection.json
is hostile: types are checked, lists are capped at ``LIST_MAX``.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import zoneinfo
from collections import Counter
from dataclasses import dataclass, field
from html import escape

from aitrail.analyzer.report.data import LIST_MAX, Verification, section, text
from aitrail.analyzer.report.timeline import visible

# The counts of page one, in order: (key in Digest.counts, label). Outcomes follow "commands".
COUNT_LABELS = (("sessions", "conversations (sessions)"), ("configuration", "configuration files"),
                ("prompts", "prompts (user rows)"), ("commands", "commands"),
                ("files_written", "files written or edited"), ("files_read", "files read"),
                ("files_deleted", "files deleted"), ("denials", "denials (by the user, by a rule, by a setting)"),
                ("network", "network and web uses"), ("mcp_calls", "MCP tool calls"), ("subagents", "sub-agent runs"),
                ("secrets", "secrets in prompts"),
                ("recovered_sessions", "sessions recovered only from secondary stores"),
                ("integrity", "integrity findings"), ("problems", "damaged or unreadable records"),
                ("rows", "timeline rows"))
OUTCOMES = ("ran", "failed", "denied by user", "blocked by rule", "no result recorded", "not recorded by store")
IANA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]{0,40}(/[A-Za-z0-9_+\-]{1,40}){0,3}")  # tz database key shape
DAY_SECONDS = 86_400


@dataclass
class BundleFacts:
    """What page one needs of one bundle: its metadata, its verification and its digest's counts."""

    number: int
    name: str
    sha256: str
    collection: dict
    verification: Verification
    counts: dict = field(default_factory=dict)
    span: tuple[str, str] = ("", "")
    agents: Counter = field(default_factory=Counter)  # agent -> conversations (configuration files not counted)


def e(value) -> str:
    """Escaped display text of any bundle value (bidi and control characters made visible)."""
    return escape(visible(text(value)), quote=True)


def _number(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _entries(value) -> list[dict]:
    """A collection.json list of objects, capped; anything else is no list."""
    return [item for item in value[:LIST_MAX] if isinstance(item, dict)] if isinstance(value, list) else []


def _more(value) -> str:
    extra = len(value) - LIST_MAX if isinstance(value, list) else 0
    return f'<li class="muted">{extra} more not listed here</li>' if extra > 0 else ""


def subject_users(collection: dict) -> list[str]:
    """The users whose homes were collected (homes[].user, locations[].user), never the collecting account."""
    users = [text(entry.get("user")) for key in ("homes", "locations") for entry in _entries(collection.get(key))]
    return sorted({user for user in users if user})


def homes_html(collection: dict) -> str:
    """Each home collected (label, path on the subject, user, how it was found) and locations that are not homes."""
    homes = _entries(collection.get("homes"))
    items = [f"<li>{e(home.get('label'))}: <code>{e(home.get('path'))}</code>"
             + (f" · user {e(home.get('user'))}" if text(home.get("user")) else "")
             + (f" · found by {e(home.get('found_by'))}" if text(home.get("found_by")) else "") + "</li>"
             for home in homes]
    paths = {text(home.get("path")) for home in homes}
    others = [location for location in _entries(collection.get("locations"))
              if text(location.get("base")) not in paths]
    items += [f"<li>{e(location.get('kind')) or 'location'} {e(location.get('label'))}: "
              f"<code>{e(location.get('base'))}</code>"
              + (f" · user {e(location.get('user'))}" if text(location.get("user")) else "") + "</li>"
              for location in others]
    if not items:
        return '<span class="muted">none recorded</span>'
    return "<ul>" + "".join(items) + _more(collection.get("homes")) + "</ul>"


def users_html(collection: dict) -> str:
    """The subject's users, or why none is named."""
    users = subject_users(collection)
    if users:
        return e(", ".join(users))
    return '<span class="muted">not recorded (homes given by path carry no user; see their labels)</span>'


def collecting_account(collection: dict) -> str:
    """The account that ran the collector and the machine it ran on, labelled as such."""
    user, host = section(collection, "user"), section(collection, "collecting_host")
    parts = [e(user.get("name")) or "(unknown)"]
    if text(user.get("uid")):
        parts.append(f"uid {e(user.get('uid'))}")
    if text(user.get("sudo_user")):
        parts.append(f"via sudo from {e(user.get('sudo_user'))}")
    if text(host.get("hostname")):
        parts.append(f"on {e(host.get('hostname'))}")
    return " · ".join(parts)


def subject_zone(collection: dict) -> tuple[dt.tzinfo | None, str]:
    """The subject's time zone and how it was taken: an IANA zone by zoneinfo, else the recorded offset."""
    zone = section(collection, "time_zone")
    name, offset = zone.get("name"), zone.get("utc_offset_seconds")
    if isinstance(name, str) and IANA_NAME.fullmatch(name):
        try:
            return zoneinfo.ZoneInfo(name), f"{name} (IANA zone, converted with this workstation's tz database)"
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            pass  # not a zone this workstation knows: the recorded offset, if any, is all there is
    found = zone.get("name_found")
    if isinstance(found, str) and found != name:  # the examiner named another zone: the offset is the found one's
        return None, (f"{text(name)}: not an IANA zone known here, and the recorded offset belongs to the zone "
                      f"found ({found}), not to this one; times are shown in UTC only")
    if isinstance(offset, int) and not isinstance(offset, bool) and abs(offset) < DAY_SECONDS:
        fixed = dt.timezone(dt.timedelta(seconds=offset))
        named = f"{text(name)} is not an IANA zone known here; " if text(name) else "no zone name; "
        return fixed, (f"UTC{_offset(offset)}, the offset recorded at collection ({named}"
                       "a daylight-saving change in between is not applied)")
    return None, "not recorded"


def _offset(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _parse_utc(value: str) -> dt.datetime | None:
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def local_time(value: str, zone: dt.tzinfo | None) -> str:
    """A UTC timeline time shown in ``zone`` (seconds, with its offset); "" when either is missing."""
    moment = _parse_utc(value) if value else None
    if moment is None or zone is None:
        return ""
    try:
        return moment.astimezone(zone).isoformat(timespec="seconds")
    except (OverflowError, ValueError):
        return ""


def case_span(facts: list[BundleFacts]) -> tuple[str, str]:
    """First and last record-timed UTC time over every bundle ("" when no row has one)."""
    firsts = [(_parse_utc(item.span[0]), item.span[0]) for item in facts if item.span[0]]
    lasts = [(_parse_utc(item.span[1]), item.span[1]) for item in facts if item.span[1]]
    firsts = [pair for pair in firsts if pair[0]]
    lasts = [pair for pair in lasts if pair[0]]
    return (min(firsts)[1] if firsts else "", max(lasts)[1] if lasts else "")


def command_line(collection: dict) -> str:
    """The collector's argv as a shell would quote it; text when it is not a list of strings."""
    argv = collection.get("command_line")
    if isinstance(argv, list) and all(isinstance(arg, str) for arg in argv):
        return shlex.join(argv)
    return text(argv)


def _row(label: str, value_html: str) -> str:
    return f"<tr><th>{escape(label)}</th><td>{value_html}</td></tr>"


def _bundle_link(item: BundleFacts) -> str:
    host = section(item.collection, "host")
    return f'<a href="#bundle-{item.number}">Bundle {item.number + 1}</a> ({e(host.get("hostname")) or "no hostname"})'


def counts_table(facts: list[BundleFacts]) -> str:
    """The digest counts summed over bundles, with one column per bundle when there are several."""
    many = len(facts) > 1
    head = "<tr><th>count</th><th>all bundles</th>" + (
        "".join(f"<th>Bundle {item.number + 1}</th>" for item in facts) if many else "") + "</tr>"
    lines = []

    def line(label: str, values: list[int], indent: bool = False) -> None:
        cells = f"<td class=n>{sum(values)}</td>" + ("".join(f"<td class=n>{value}</td>" for value in values)
                                                     if many else "")
        lines.append(f'<tr><td{" class=sub" if indent else ""}>{escape(label)}</td>{cells}</tr>')

    for key, label in COUNT_LABELS:
        line(label, [_number(item.counts.get(key)) for item in facts])
        if key == "commands":
            by_outcome = [item.counts.get("commands_by_outcome") for item in facts]
            by_outcome = [value if isinstance(value, dict) else {} for value in by_outcome]
            for outcome in OUTCOMES:
                line(outcome, [_number(value.get(outcome)) for value in by_outcome], indent=True)
    return f'<table class="counts">{head}{"".join(lines)}</table>'


def _case_ids(facts: list[BundleFacts]) -> str:
    ids = sorted({text(section(item.collection, "case").get("case_id")) for item in facts} - {""})
    if not ids:
        return '<span class="muted">none given at collection</span>'
    warning = ' <span class="warn">(the bundles name different cases)</span>' if len(ids) > 1 else ""
    return e(", ".join(ids)) + warning


def _examiners(facts: list[BundleFacts]) -> str:
    names = sorted({text(section(item.collection, "case").get("examiner")) for item in facts} - {""})
    return e(", ".join(names)) if names else '<span class="muted">none given at collection</span>'


def _agents(facts: list[BundleFacts]) -> str:
    total: Counter = Counter()
    for item in facts:
        total.update(item.agents)
    if not total:
        return '<span class="muted">no agent rows</span>'
    return e(", ".join(f"{agent} ({count} conversations)" for agent, count in sorted(total.items())))


def _notes(facts: list[BundleFacts]) -> str:
    notes = [(item, text(section(item.collection, "case").get("notes"))) for item in facts]
    items = [f"<li>{_bundle_link(item)}: <span class=note>{e(note)}</span></li>" for item, note in notes if note]
    return "<ul>" + "".join(items) + "</ul>" if items else '<span class="muted">none given at collection</span>'


def subject_table(item: BundleFacts) -> str:
    """One bundle's subject: host, homes, users, time zone and span, apart from the collecting account."""
    collection = item.collection
    host = section(collection, "host")
    zone, how = subject_zone(collection)
    first, last = item.span
    local = (f"{local_time(first, zone)} → {local_time(last, zone)}" if first and zone
             else '<span class="muted">not known</span>')
    rows = [_row("bundle", _bundle_link(item)),
            _row("host", f"{e(host.get('hostname')) or '(no hostname)'}"
                 + (f' <span class="muted">({e(host.get("hostname_source"))})</span>'
                    if text(host.get("hostname_source")) else "")),
            _row("OS", e(host.get("os"))),
            _row("homes collected", homes_html(collection)),
            _row("subject users", users_html(collection)),
            _row("time zone", e(how)),
            _row("time span (UTC)", f"{e(first)} → {e(last)}" if first else '<span class="muted">not known</span>'),
            _row("time span (subject's time zone)", local),
            _row("collecting account (ran the collector; not the subject)", collecting_account(collection))]
    return f'<table class="subject">{"".join(rows)}</table>'


def collector_table(item: BundleFacts) -> str:
    """The collector that made one bundle, its command line, its times, and the bundle's verification."""
    collection, result = item.collection, item.verification
    tool = section(collection, "tool")
    frozen = tool.get("frozen")
    state = '<span class="ok">VALID</span>' if result.ok else '<span class="bad">FAILED</span>'
    if result.signed:
        signer = ("signed, pinned to the examiner's key" if result.pinned
                  else "signed, UNPINNED (verified only under the key the bundle records)")
        signer += f" · signer {e(result.fingerprint) or 'unknown'}"
    else:
        signer = "unsigned"
    rows = [_row("bundle", _bundle_link(item) + f" · SHA-256 <code>{e(item.sha256)}</code>"),
            _row("verification", f"{state} · {signer}"),  # signer: fixed words and the escaped fingerprint
            _row("collector", f"{e(tool.get('name'))} {e(tool.get('version'))}"
                 + (" (frozen build)" if frozen is True else " (from source)" if frozen is False else "")),
            _row("collector SHA-256", f"<code>{e(tool.get('collector_sha256'))}</code>"),
            _row("command line", f'<pre class="argv">{e(command_line(collection))}</pre>'),
            _row("collected (UTC)", f"{e(collection.get('started_utc'))} → {e(collection.get('finished_utc'))}"
                 f" · mode {e(collection.get('mode'))}")]
    return f'<table class="collector">{"".join(rows)}</table>'


def case_section(facts: list[BundleFacts]) -> str:
    """Page one: the case, its subjects, counts, notes, collectors and verification, over every bundle."""
    first, last = case_span(facts)
    span = f"{e(first)} → {e(last)}" if first else '<span class="muted">no row has a record time</span>'
    summary = [_row("case", _case_ids(facts)), _row("examiner", _examiners(facts)),
               _row("bundles", str(len(facts))), _row("agents", _agents(facts)),
               _row("time span (UTC, record times)", span), _row("collection notes", _notes(facts))]
    out = ['<section class="case" id="case"><h2>Case</h2>', f'<table class="summary">{"".join(summary)}</table>',
           "<h3>Counts</h3>", counts_table(facts), "<h3>Subjects</h3>"]
    out += [subject_table(item) for item in facts]
    out.append("<h3>Collection and verification</h3>")
    out += [collector_table(item) for item in facts]
    out.append("</section>")
    return "".join(out)
