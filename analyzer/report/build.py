"""Verify, analyze and write: one bundle at a time, its rows spooled to disk, then one HTML file.

Memory holds one bundle's digest (tables, findings as row numbers) at a time
besides the small static HTML; the rows go from analyze's JSONL straight to a
spool file and from there into the page.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from html import escape

from aitrail.analyzer.engine.coordinator import AnalyzeOptions, analyze
from aitrail.analyzer.report import assets, case, html, timeline
from aitrail.analyzer.report.data import Verification, read_accounting, read_collection, section, text
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.verify import verify


@dataclass
class ReportOptions:
    """What the examiner asked of ``aitrail report``."""

    bundles: list[str]
    output: str
    force: bool = False
    public_key: str | None = None
    require_signature: bool = False
    jobs: int | None = None


@dataclass
class Prepared:
    """One bundle, verified, with its static HTML and its page data spooled to files."""

    sha256: str
    ok: bool
    static: str
    meta_path: str
    rows_path: str  # the rows blocks are rows_path.0, .1, ...
    blocks: int
    facts: case.BundleFacts  # what page one shows of this bundle
    agents: list[str]  # every agent with a row (conversations and configuration files), for the agent filter


def check_bundles(options: ReportOptions) -> tuple[list[tuple[str, str, Verification]], list[str]]:
    """Verify every bundle first: ``(sha256, path, result)`` sorted by SHA-256, and the failures' lines."""
    checked, failures = [], []
    for path in options.bundles:
        report = verify(path, options.public_key, options.require_signature)
        result = Verification(report.ok, list(report.problems), report.signature, report.signed, report.pinned,
                              list(report.warnings), report.signer_fingerprint)  # of the key that verified
        checked.append((report.bundle_sha256 or "", path, result))  # verify hashed the file ("": unreadable)
        failures += [f"{path}: {problem}" for problem in report.problems]
    return sorted(checked, key=lambda item: (item[0], item[1])), failures


def _prepare(number: int, sha256: str, path: str, result: Verification, options: ReportOptions,
             temp: str) -> Prepared:
    with BundleReader(path) as reader:
        collection, problem = read_collection(reader)
        accounting = read_accounting(reader)
    jsonl = os.path.join(temp, f"{number}.jsonl")
    # a bundle check_bundles verified without a problem is not hashed again (if the file still has that
    # SHA-256); a failed one, analyzed only with --force, is verified again and gets its verify: row
    analyzed = analyze(AnalyzeOptions(bundle=path, output=jsonl, format="jsonl", force=options.force, jobs=options.jobs,
                           progress=False, public_key=options.public_key,
                           require_signature=options.require_signature,
                           verified_sha256=sha256 if result.ok and sha256 else None))
    rows_path, meta_path = os.path.join(temp, f"{number}.rows"), os.path.join(temp, f"{number}.meta")

    def open_block(block: int):
        return open(f"{rows_path}.{block}", "w", encoding="utf-8", errors="backslashreplace")

    with open(jsonl, "rb") as source:
        digest = timeline.spool(source, open_block, resultless_stores(), store_roles())
    os.unlink(jsonl)
    meta = digest.meta()  # the contract of docs/report.md: tables, findings lists (capped), counts, span
    with open(meta_path, "w", encoding="utf-8", errors="backslashreplace") as out:
        out.write(timeline.script_json(meta))
    counts = collection.get("counts") if isinstance(collection.get("counts"), dict) else {}
    static = (f'<section class="bundle" id="section-{number}" data-bundle="{number}">'
              + html.host_section(number, os.path.basename(path), sha256, collection, problem)
              + ("" if result.ok else '<p class="failed">THIS BUNDLE FAILED VERIFICATION: it was analyzed only '
                                      'because --force was given; nothing in it can be trusted.</p>')
              + html.verification_section(result) + html.accounting_section(accounting, counts)
              + html.not_parsed_section(analyzed.not_parsed) + html.absences_section(analyzed.absences)
              + html.timeline_section(number, digest, meta) + "</section>")
    conversations = Counter(session.agent for session in digest.sessions if session.kind != "configuration")
    facts = case.BundleFacts(number, os.path.basename(path), sha256, collection, result, dict(digest.counts),
                             (digest.span[0], digest.span[1]), conversations)
    return Prepared(sha256, result.ok, static, meta_path, rows_path, digest.blocks, facts,
                    sorted({session.agent for session in digest.sessions}))


@functools.lru_cache(maxsize=1)
def resultless_stores() -> frozenset[str]:
    """Stores (``agent.store``) whose format never records tool results, by the installed catalog."""
    from aitrail.collector import catalog

    try:
        agents = catalog.load().agents
    except catalog.CatalogError:  # the page then says "no result recorded" everywhere, as before
        return frozenset()
    return frozenset(f"{agent.agent}.{store.id}" for agent in agents for store in agent.stores
                     if store.tool_results == "not_recorded")


@functools.lru_cache(maxsize=1)
def store_roles() -> dict[str, str]:
    """The catalog role of every store (``agent.store``): it tells conversations from configuration files."""
    from aitrail.collector import catalog

    try:
        agents = catalog.load().agents
    except catalog.CatalogError:  # then every session is listed as a conversation
        return {}
    return {f"{agent.agent}.{store.id}": store.role for agent in agents for store in agent.stores}


def _copy(path: str, out) -> None:
    with open(path, encoding="utf-8") as source:
        shutil.copyfileobj(source, out, 1 << 20)


def integrity_rules() -> dict[str, list[str]]:
    """Each integrity rule's one-line "what it proves" and "what it does not", from the analyzer's table."""
    try:
        from aitrail.analyzer.integrity.rules import RULES
    except ImportError:  # an analyzer without integrity rules: the page groups the rows by rule, without the texts
        return {}
    return {str(rule): [str(texts[0]), str(texts[1])] for rule, texts in sorted(RULES.items())}


def _head(prepared: list[Prepared]) -> str:
    failed = [item for item in prepared if not item.ok]
    banner = (f'<p class="failed">VERIFICATION FAILED for {len(failed)} of {len(prepared)} bundles; this report was '
              "made with --force.</p>" if failed else "")
    hosts = [(number, text(section(item.facts.collection, "host").get("hostname")))
             for number, item in enumerate(prepared)]
    contents = "".join(f'<li><a href="#bundle-{number}">Bundle {number + 1}</a>: {html.e(host) or "(no hostname)"} · '
                       f"SHA-256 {item.sha256}</li>" for (number, host), item in zip(hosts, prepared, strict=True))
    agents = sorted({agent for item in prepared for agent in item.agents})
    policy = escape(assets.content_security_policy(), quote=False)  # its quotes are ' only; the attribute uses "
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>aitrail report</title><style>{assets.STYLE}</style></head><body>"
            f"<h1>aitrail report</h1>{banner}{case.case_section([item.facts for item in prepared])}"
            f"<h2>Bundles</h2><p>{len(prepared)} bundle(s), in order of their SHA-256:</p><ul>{contents}</ul>"
            + html.controls(agents, hosts))


def write_report(options: ReportOptions, checked: list[tuple[str, str, Verification]]) -> list[Prepared]:
    """Write the page for bundles ``check_bundles`` checked (the caller refuses failed ones unless forced)."""
    with tempfile.TemporaryDirectory(prefix="aitrail-report-") as temp:
        prepared = [_prepare(number, sha256, path, result, options, temp)
                    for number, (sha256, path, result) in enumerate(checked)]
        with open(options.output, "x", encoding="utf-8", newline="\n") as out:
            out.write(_head(prepared))
            for item in prepared:
                out.write(item.static)
            out.write(f'<script type="application/json" id="rules">{timeline.script_json(integrity_rules())}</script>')
            for number, item in enumerate(prepared):
                out.write(f'<script type="application/json" id="meta-{number}">')
                _copy(item.meta_path, out)
                out.write("</script>")
                for block in range(item.blocks):
                    out.write(f'<script type="application/json" id="rows-{number}-{block}">')
                    _copy(f"{item.rows_path}.{block}", out)
                    out.write("</script>")
            out.write(f"<script>{assets.SCRIPT}</script></body></html>\n")
    return prepared
