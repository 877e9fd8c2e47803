"""The page's only style sheet and script, inline; the Content-Security-Policy allows exactly these by hash.

The script renders findings and conversations from the page's JSON blocks
when they are opened, a page at a time, and writes every bundle text with
``textContent`` (never ``innerHTML``), so a transcript holding markup shows as
text and runs nothing.
"""

from __future__ import annotations

import base64
import hashlib

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
"""

SCRIPT = r"""
(function () {
  "use strict";
  var PAGE = 200, CONVERSATION_PAGE = 400, cache = {};
  function data(id) {
    if (!(id in cache)) {
      var node = document.getElementById(id);
      cache[id] = node ? JSON.parse(node.textContent) : null;
    }
    return cache[id];
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function meta(b) { return data("meta-" + b); }
  function rows(b) {  // a bundle's rows come in blocks of at most 16 Mi characters each
    var id = "rows-" + b;
    if (!(id in cache)) {
      var all = [], block;
      for (var k = 0; (block = data(id + "-" + k)) !== null; k++) {
        for (var i = 0; i < block.length; i++) { all.push(block[i]); }
        cache[id + "-" + k] = [];  // parsed once, held once: in the joined array
      }
      cache[id] = all;
    }
    return cache[id];
  }
  function index(b) {
    var key = "index-" + b;
    if (!(key in cache)) {
      var all = rows(b), bySession = [], results = {};
      for (var i = 0; i < all.length; i++) {
        var r = all[i], s = r[1];
        (bySession[s] || (bySession[s] = [])).push(i);
        if (r[2] === "tool_result" && r[4]) { var k = s + "\u0000" + r[4]; if (!(k in results)) { results[k] = i; } }
      }
      cache[key] = {bySession: bySession, results: results};
    }
    return cache[key];
  }
  function provenance(b, r) {
    var source = meta(b).sources[r[6]];
    var line = el("div", "prov", source[0] + " \u00b7 " + r[7] + " \u00b7 sha256 " + source[1].slice(0, 12));
    line.title = "member " + source[0] + "\nlocator " + r[7] + "\nsha256 " + source[1] +
      "\ntime " + (r[0] || "none") + " (" + r[10] + ")\norigin " + r[8];
    return line;
  }
  function rowView(b, i) {
    var r = rows(b)[i], box = el("div", "row t-" + r[2] + (r[8] === "secondary" ? " sec" : ""));
    var head = [r[0] || "(no time)", r[2]];
    if (r[3]) { head.push(r[3]); }
    if (r[4]) { head.push("id " + r[4]); }
    if (r[9]) { head.push(r[9]); }
    if (r[8] === "secondary") { head.push("secondary store"); }
    box.appendChild(el("div", "head", head.join(" \u00b7 ")));
    if (r[2] === "thinking") {
      var fold = el("details"); fold.appendChild(el("summary", "", "thinking (" + r[5].length + " characters)"));
      fold.appendChild(el("pre", "", r[5])); box.appendChild(fold);
    } else { box.appendChild(el("pre", "", r[5])); }
    box.appendChild(provenance(b, r));
    return box;
  }
  function pair(b, call, result) {
    var both = el("div", "pair"), left = el("div"), right = el("div");
    left.appendChild(rowView(b, call));
    if (result >= 0) { right.appendChild(rowView(b, result)); }
    else if (meta(b).resultless.indexOf(rows(b)[call][6]) >= 0) {
      right.appendChild(el("div", "row muted", "result not recorded by this store (its format keeps none)"));
    } else { right.appendChild(el("div", "row muted", "no result recorded")); }
    both.appendChild(left); both.appendChild(right);
    return both;
  }
  function paged(container, count, size, render) {
    var shown = 0;
    function more() {
      var end = Math.min(count, shown + size);
      for (; shown < end; shown++) { var node = render(shown); if (node) { container.appendChild(node); } }
      if (shown < count) {
        var button = el("button", "", "show " + Math.min(size, count - shown) + " more (" + (count - shown) + " left)");
        button.addEventListener("click", function () { button.remove(); more(); });
        container.appendChild(button);
      }
    }
    if (count === 0) { container.appendChild(el("p", "muted", "none")); } else { more(); }
  }
  function conversation(b, s, container) {
    var ix = index(b), list = ix.bySession[s] || [], all = rows(b), shown = {};
    paged(container, list.length, CONVERSATION_PAGE, function (n) {
      var i = list[n], r = all[i];
      if (shown[i]) { return null; }
      if (r[2] === "tool_use" && r[4]) {
        var result = ix.results[s + "\u0000" + r[4]];
        if (result !== undefined) { shown[result] = true; return pair(b, i, result); }
        return pair(b, i, -1);
      }
      return rowView(b, i);
    });
  }
  function sessionLabel(b, s) {
    var x = meta(b).sessions[s];
    return x[0] + " \u00b7 " + x[1] + (x[2] ? " \u00b7 " + x[2] : "") + " \u00b7 " + (x[3] || "no time") +
      (x[4] && x[4] !== x[3] ? " \u2192 " + x[4] : "") + " \u00b7 " + x[5] + " rows" +
      (x[6] ? " (" + x[6] + " from secondary stores)" : "");
  }
  function sessionView(b, s) {
    var box = el("details", "session"), body = el("div");
    box.id = "s" + b + "-" + s;
    box.appendChild(el("summary", "", sessionLabel(b, s)));
    box.appendChild(body);
    box.addEventListener("toggle", function () {
      if (box.open && !body.firstChild) { conversation(b, s, body); }
    });
    return box;
  }
  function sessionLink(b, s) {
    var link = el("a", "", "session " + meta(b).sessions[s][1]);
    link.href = "#s" + b + "-" + s;
    return link;
  }
  var FINDINGS = {
    commands: function (b, f) {
      var item = el("div", "item");
      item.appendChild(el("pre", "", "$ " + f[2]));
      item.appendChild(sessionLink(b, rows(b)[f[0]][1]));
      item.appendChild(pair(b, f[0], f[1]));
      return item;
    },
    writes: function (b, f) {
      var item = el("div", "item"), r = rows(b)[f[0]];
      var line = (f[1] || "(no path recognised)") + "  \u2190 " + r[3] + " at " + (r[0] || "no time");
      item.appendChild(el("pre", "", line));
      item.appendChild(sessionLink(b, r[1]));
      item.appendChild(provenance(b, r));
      return item;
    },
    rows: function (b, i) {
      var item = el("div", "item");
      item.appendChild(sessionLink(b, rows(b)[i][1]));
      item.appendChild(rowView(b, i));
      return item;
    },
    sessions: function (b, s) { return sessionView(b, s); }
  };
  function fillFinding(box) {
    var b = box.getAttribute("data-bundle"), kind = box.getAttribute("data-kind"), body = box.querySelector(".body");
    if (body.firstChild) { return; }
    var list = meta(b)[kind], render = FINDINGS[kind] || FINDINGS.rows;
    if (kind === "permissions" || kind === "problems" || kind === "unpaired") { render = FINDINGS.rows; }
    if (kind === "secondary") { render = FINDINGS.sessions; }
    paged(body, list.length, PAGE, function (n) { return render(b, list[n]); });
  }
  function fillSessions(box) {
    var b = box.getAttribute("data-bundle"), body = box.querySelector(".body");
    if (body.firstChild) { return; }
    paged(body, meta(b).sessions.length, PAGE, function (s) {
      return document.getElementById("s" + b + "-" + s) ? null : sessionView(b, s);
    });
  }
  function openFromHash() {
    var hash = decodeURIComponent(location.hash.slice(1)), match = /^s(\d+)-(\d+)$/.exec(hash);
    if (match) {
      var b = match[1], s = Number(match[2]);
      if (!meta(b) || s >= meta(b).sessions.length) { return; }
      var box = document.getElementById(hash);
      if (!box) {
        var list = document.getElementById("sessions-" + b).querySelector(".body");
        box = sessionView(b, s); list.insertBefore(box, list.firstChild);
      }
      box.open = true; box.scrollIntoView();
      return;
    }
    var target = hash && document.getElementById(hash);
    if (target && target.tagName === "DETAILS") { target.open = true; target.scrollIntoView(); }
  }
  document.querySelectorAll("details.finding").forEach(function (box) {
    box.addEventListener("toggle", function () { if (box.open) { fillFinding(box); } });
  });
  document.querySelectorAll("details.sessions").forEach(function (box) {
    box.addEventListener("toggle", function () { if (box.open) { fillSessions(box); } });
    if (box.open) { fillSessions(box); }
  });
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
})();
"""


def csp_hash(source: str) -> str:
    """The CSP source expression allowing exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy() -> str:
    """Nothing from the network, no plugins, no forms; only the page's own inline script and style run."""
    return (f"default-src 'none'; script-src {csp_hash(SCRIPT)}; style-src {csp_hash(STYLE)}; img-src data:; "
            "base-uri 'none'; form-action 'none'")
