"""The page script, part one: data blocks, rows, provenance, conversations with system rows folded, sessions.

Part of the one inline script (``assets.SCRIPT`` joins the parts inside one
function, so they share its names); every bundle text is written with
``textContent`` or as a text node, never as markup.
"""

CORE = r"""
  var PAGE = 200, CONVERSATION_PAGE = 400, MARKS_MAX = 100, cache = {};
  // the search and filters (assets_search): FILTER holds them, MATCH the per-bundle match tables or null
  var FILTER = {q: "", agent: "", bundle: "", session: "", turn: "", from: "", to: "", hideSystem: false};
  var MATCH = null, MEMO = {};  // MEMO: each findings list's matches, kept until the filters change
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
  function plural(count, noun) { return count + " " + noun + (count === 1 ? "" : "s"); }
  function has(object, key) { return Object.prototype.hasOwnProperty.call(object, key); }
  function meta(b) { return data("meta-" + b); }
  function bundleCount() {
    if (!("bundles" in cache)) { var n = 0; while (document.getElementById("meta-" + n)) { n++; } cache.bundles = n; }
    return cache.bundles;
  }
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
        if (r[2] === "tool_result" && r[4]) { var k = s + "\u0000" + r[4]; if (!has(results, k)) { results[k] = i; } }
      }
      cache[key] = {bySession: bySession, results: results};
    }
    return cache[key];
  }
  function isHit(b, i) { return MATCH === null || MATCH[b].flag[i] === 3; }
  function marked(tag, cls, text) {  // the text, every match of the search in a <mark> (text nodes only)
    var node = el(tag, cls), q = FILTER.q, low = q ? text.toLowerCase() : "";
    // a lowercase form of another length (a few scripts) would shift the marks: such text is shown unmarked
    if (!q || low.length !== text.length || low.indexOf(q) < 0) { node.textContent = text; return node; }
    var at = 0, hit, marks = 0;
    while ((hit = low.indexOf(q, at)) >= 0 && marks < MARKS_MAX) {
      node.appendChild(document.createTextNode(text.slice(at, hit)));
      node.appendChild(el("mark", "", text.slice(hit, hit + q.length)));
      at = hit + q.length; marks++;
    }
    node.appendChild(document.createTextNode(text.slice(at)));
    return node;
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
    if (MATCH !== null && isHit(b, i)) { box.className += " hit"; }
    var head = [r[0] || "(no time)", r[2]];
    if (r[3]) { head.push(r[3]); }
    if (r[4]) { head.push("id " + r[4]); }
    if (r[9]) { head.push(r[9]); }
    if (r[8] === "secondary") { head.push("secondary store"); }
    box.appendChild(el("div", "head", head.join(" \u00b7 ")));
    if (r[2] === "thinking") {
      var fold = el("details"); fold.appendChild(el("summary", "", "thinking (" + r[5].length + " characters)"));
      fold.appendChild(marked("pre", "", r[5])); box.appendChild(fold);
    } else { box.appendChild(marked("pre", "", r[5])); }
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
        var button = el("button", "more", "show " + Math.min(size, count - shown) + " more (" + (count - shown) +
          " left)");
        button.addEventListener("click", function () { button.remove(); more(); });
        container.appendChild(button);
      }
    }
    if (count === 0) { container.appendChild(el("p", "muted", "none")); } else { more(); }
  }
  function lazyFold(label, count, render) {  // a <details> whose rows are drawn the first time it is opened
    var box = el("details", "fold"), body = el("div");
    box.appendChild(el("summary", "", label)); box.appendChild(body);
    box.addEventListener("toggle", function () {
      if (box.open && !body.firstChild) { paged(body, count, CONVERSATION_PAGE, render); }
    });
    return box;
  }
  function systemRun(b, run) {  // consecutive system rows, folded into one "N system rows" line
    var first = rows(b)[run[0]][5].split("\n")[0];
    var box = lazyFold(plural(run.length, "system row") + ": " + first.slice(0, 120),
      run.length, function (n) { return rowView(b, run[n]); });
    box.className += " sysrun";
    if (MATCH !== null) { box.open = true; }  // a filtered conversation holds only matches: show them
    return box;
  }
  function units(b, s, onlyHits) {  // what a conversation draws: rows, call/result pairs, runs of system rows
    var ix = index(b), list = ix.bySession[s] || [], all = rows(b), out = [], used = {}, run = null, hidden = 0;
    for (var n = 0; n < list.length; n++) {
      var i = list[n], r = all[i];
      if (used[i] || (onlyHits && !isHit(b, i))) { continue; }
      if (r[2] === "system") {
        if (FILTER.hideSystem) { hidden++; continue; }
        if (run) { run.push(i); } else { run = [i]; out.push({system: run}); }
        continue;
      }
      run = null;
      if (r[2] === "tool_use" && r[4]) {
        var key = s + "\u0000" + r[4], result = has(ix.results, key) ? ix.results[key] : -1;
        if (result >= 0) { used[result] = true; }
        out.push({call: i, result: result});
      } else { out.push({row: i}); }
    }
    return {units: out, hidden: hidden};
  }
  function conversation(b, s, container, onlyHits) {
    var made = units(b, s, onlyHits), list = made.units;
    if (made.hidden) { container.appendChild(el("p", "muted", plural(made.hidden, "system row") + " hidden")); }
    paged(container, list.length, CONVERSATION_PAGE, function (n) {
      var unit = list[n];
      if (unit.system) { return systemRun(b, unit.system); }
      if (unit.call !== undefined) { return pair(b, unit.call, unit.result); }
      return rowView(b, unit.row);
    });
  }
  function fillConversation(b, s, body) {
    var matching = MATCH === null ? 0 : MATCH[b].shown[s];
    if (matching > 0) {  // a session opened while searching shows the rows that match, the whole on request
      var line = el("p", "muted", "Showing the rows that match the search and filters: " + matching + " of " +
        meta(b).sessions[s][5] + ". ");
      var whole = el("button", "", "show the whole conversation");
      whole.addEventListener("click", function () { body.replaceChildren(); conversation(b, s, body, false); });
      line.appendChild(whole); body.appendChild(line);
    }
    conversation(b, s, body, matching > 0);
  }
  function sessionName(b, s) {
    var x = meta(b).sessions[s];
    return x[7] ? x[7] : "(untitled) " + x[1];
  }
  function sessionLabel(b, s) {
    var x = meta(b).sessions[s];
    return x[0] + " \u00b7 " + x[1] + (x[2] ? " \u00b7 " + x[2] : "") + " \u00b7 " + (x[3] || "no time") +
      (x[4] && x[4] !== x[3] ? " \u2192 " + x[4] : "") + " \u00b7 " + x[5] + " rows" +
      (x[6] ? " (" + x[6] + " from secondary stores)" : "");
  }
  function sessionView(b, s, anonymous) {  // anonymous: a copy in a findings list, not the #s<b>-<s> target
    var box = el("details", "session"), summary = el("summary"), body = el("div");
    if (!anonymous) { box.id = "s" + b + "-" + s; }
    summary.appendChild(marked("span", "title", sessionName(b, s)));
    summary.appendChild(el("span", "muted", " \u00b7 " + sessionLabel(b, s)));
    if (MATCH !== null) {
      summary.appendChild(el("span", "hits", " \u00b7 " + plural(MATCH[b].shown[s], "matching row")));
    }
    box.appendChild(summary); box.appendChild(body);
    box.addEventListener("toggle", function () {
      if (box.open && !body.firstChild) { fillConversation(b, s, body); }
    });
    return box;
  }
  function sessionLink(b, s) {
    var link = el("a", "", "session: " + sessionName(b, s).slice(0, 80));
    link.href = "#s" + b + "-" + s;
    return link;
  }
"""
