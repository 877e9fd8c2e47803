"""The page's only style sheet and script, inline; the Content-Security-Policy allows exactly these by hash.

The script (its parts in assets_core, assets_findings and assets_search,
joined here into one function) renders findings and conversations from the
page's JSON blocks when they are opened, a page at a time, filters them by
the search box and filters, and writes every bundle text with
``textContent`` (never ``innerHTML``), so a transcript holding markup shows as
text and runs nothing. The hash in the policy is of the whole joined script.
"""

from __future__ import annotations

import base64
import hashlib

from aitrail.analyzer.report.assets_core import CORE
from aitrail.analyzer.report.assets_findings import FINDINGS
from aitrail.analyzer.report.assets_search import SEARCH

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px;
color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:18px 0 6px}h2{font-size:18px;margin:26px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.failed{background:#b00020;color:#fff;padding:10px 14px;font-size:18px;font-weight:bold;margin:10px 0}
.ok{color:#176f2c;font-weight:bold}.bad{color:#b00020;font-weight:bold}.warn{color:#8a5a00;font-weight:bold}
.muted{color:#666}.prov{color:#777;font-size:11px;font-family:ui-monospace,monospace;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
details{margin:4px 0}summary{cursor:pointer}
.row{border-left:4px solid #ccc;padding:4px 8px;margin:6px 0;background:#fafafa}
.row .head{font-size:12px;color:#555}.t-user{border-color:#2f6fdf;background:#f1f6ff}
.t-assistant{border-color:#1f9d55}.t-thinking{border-color:#a06bd6}.t-system{border-color:#999;color:#444}
.t-tool_use{border-color:#d98b00}.t-tool_result{border-color:#b8860b}.sec{outline:1px dashed #c05}
.pair{display:flex;gap:8px}.pair>div{flex:1 1 50%;min-width:0}
.item{border-bottom:1px solid #eee;padding:4px 0}button{margin:6px 0}svg.chart text.axis{font-size:11px;fill:#333}
h4{font-size:13px;margin:10px 0 4px}code{font:12px ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.case table th{text-align:left;font-weight:600;width:260px}.case td.sub{padding-left:24px;color:#444}
.case ul,.bundle ul{margin:2px 0;padding-left:18px}pre.argv{margin:0}.note{white-space:pre-wrap}
.controls{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #ccc;padding:8px 0;
display:flex;flex-wrap:wrap;gap:6px;align-items:center}.controls input,.controls select{font:inherit}
#f-status{flex-basis:100%;font-size:12px}
.badge{display:inline-block;border-radius:3px;padding:0 6px;margin-right:6px;font-size:12px;background:#e4e4ea}
.b-ok{background:#d9f2df;color:#135d24}.b-bad{background:#fbe0e3;color:#8d0017}.b-deny{background:#fff0c9;color:#6b4600}
.b-none{background:#ececec;color:#555}.fhead pre.cmd{display:inline;margin:0}.where{font-size:12px}
mark{background:#ffe066;color:inherit}.hit{box-shadow:inset 3px 0 0 #e0a800}.hits{color:#8a5a00;font-weight:600}
.sysrun>summary,.fold>summary{color:#555;font-size:12px}.session .title{font-weight:600}
.rule{border-left:3px solid #7a4bb0;padding:2px 8px;margin:6px 0}.rulehead{font-weight:600}
.proves{color:#176f2c}.notproves{color:#8d0017}
"""

SCRIPT = '(function () {\n  "use strict";' + CORE + FINDINGS + SEARCH + "})();\n"


def csp_hash(source: str) -> str:
    """The CSP source expression allowing exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy() -> str:
    """Nothing from the network, no plugins, no forms; only the page's own inline script and style run."""
    return (f"default-src 'none'; script-src {csp_hash(SCRIPT)}; style-src {csp_hash(STYLE)}; img-src data:; "
            "base-uri 'none'; form-action 'none'")
