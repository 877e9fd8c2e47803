"""The page script, part three: the search box and filters, the URL fragment, and the start of the page.

One search over every bundle: a row matches when it passes every filter
(agent, host, session, turn type, time range) and the search text is in its
text, tool name, tool-use id or model, or in its session's title, id or
project, or in its source file's name. Each row's lowercase text is made
once, the first time a search needs it; typing is debounced; the lists
show only their first page of matches. The fragment ``#q=<text>&agent=...
&bundle=<n>&session=...&turn=...&from=...&to=...&hide-system=1&open=<id>``
sets the filters when the page opens (and is kept up to date as they change).
"""

SEARCH = r"""
  var CONTROLS = {q: "q", agent: "f-agent", bundle: "f-bundle", session: "f-session", turn: "f-turn",
    from: "f-from", to: "f-to"};
  var DEBOUNCE_MS = 250, timer = null;
  function control(name) { return document.getElementById(CONTROLS[name]); }
  function hideSystemBox() { return document.getElementById("f-hide-system"); }
  function readControls() {
    FILTER.q = control("q").value.trim().toLowerCase();
    FILTER.agent = control("agent").value;
    FILTER.bundle = control("bundle").value;
    FILTER.session = control("session").value.trim().toLowerCase();
    FILTER.turn = control("turn").value;
    FILTER.from = control("from").value.trim().replace(" ", "T");  // "2026-07-02 09:00" as the rows write it
    FILTER.to = control("to").value.trim().replace(" ", "T");
    FILTER.hideSystem = hideSystemBox().checked;
  }
  function filtering() {
    return Boolean(FILTER.q || FILTER.agent || FILTER.bundle || FILTER.session || FILTER.turn || FILTER.from ||
      FILTER.to);
  }
  function lowRows(b) {  // each row's searchable text, lowercased once, the first time a search needs it
    var key = "low-" + b;
    if (!(key in cache)) {
      var all = rows(b), low = new Array(all.length);
      for (var i = 0; i < all.length; i++) {
        var r = all[i];
        low[i] = (r[5] + "\n" + r[3] + "\n" + r[4] + "\n" + r[9]).toLowerCase();
      }
      cache[key] = low;
    }
    return cache[key];
  }
  function lowTables(b) {  // the session and source tables' searchable text, lowercased once
    var key = "lowtables-" + b;
    if (!(key in cache)) {
      var m = meta(b);
      cache[key] = {
        sessions: m.sessions.map(function (x) { return (x[7] + "\n" + x[1] + "\n" + x[2]).toLowerCase(); }),
        names: m.sessions.map(function (x) { return (x[1] + "\n" + x[7]).toLowerCase(); }),
        sources: m.sources.map(function (x) { return x[0].toLowerCase(); })};
    }
    return cache[key];
  }
  function matchBundle(b) {
    // flag[i]: 0 filtered out; 1 passes the filters, not the search; 3 passes both.
    // hits[s]: matching rows of session s; shown[s]: those a conversation draws (system rows may be hidden)
    var sessions = meta(b).sessions, table = {flag: new Uint8Array(0), hits: new Int32Array(sessions.length),
      shown: new Int32Array(sessions.length), total: 0};
    if (FILTER.bundle !== "" && FILTER.bundle !== String(b)) { return table; }
    var all = rows(b), tables = lowTables(b), q = FILTER.q, low = q ? lowRows(b) : null;
    var flag = new Uint8Array(all.length), from = FILTER.from, to = FILTER.to, turn = FILTER.turn;
    var sessionOk = sessions.map(function (x, s) {
      return (!FILTER.agent || x[0] === FILTER.agent) &&
        (!FILTER.session || tables.names[s].indexOf(FILTER.session) >= 0);
    });
    for (var i = 0; i < all.length; i++) {
      var r = all[i], t = r[0];
      if (!sessionOk[r[1]] || (turn && r[2] !== turn)) { continue; }
      if ((from && !(t && t >= from)) || (to && !(t && t.slice(0, to.length) <= to))) { continue; }
      if (q && low[i].indexOf(q) < 0 && tables.sessions[r[1]].indexOf(q) < 0 && tables.sources[r[6]].indexOf(q) < 0) {
        flag[i] = 1; continue;
      }
      flag[i] = 3; table.hits[r[1]]++; table.total++;
      if (!(FILTER.hideSystem && r[2] === "system")) { table.shown[r[1]]++; }
    }
    table.flag = flag;
    return table;
  }
  function sessionsOf(b, kind) {  // the sessions (or configuration files) a list shows under the filters
    var out = [];
    meta(b).sessions.forEach(function (x, s) {
      var listed = (x[8] === "configuration" ? "configuration" : "conversation") === kind;
      if (listed && (MATCH === null || MATCH[b].shown[s] > 0)) { out.push(s); }
    });
    return out;
  }
  function fillSessions(box) {
    var b = box.getAttribute("data-bundle"), body = box.querySelector(".body");
    if (body.firstChild) { return; }
    var list = sessionsOf(b, box.getAttribute("data-kind"));
    paged(body, list.length, PAGE, function (n) {
      var existing = document.getElementById("s" + b + "-" + list[n]);  // opened by its link before the list
      return existing && existing.parentNode === body ? null : sessionView(b, list[n]);
    });
  }
  function updateStatus() {
    var status = document.getElementById("f-status"), hidden = FILTER.hideSystem ? "; system rows hidden" : "";
    if (MATCH === null) { status.textContent = "No search or filter: every row is shown" + hidden + "."; return; }
    var total = 0, sessions = 0;
    MATCH.forEach(function (table) {
      total += table.total;
      for (var s = 0; s < table.shown.length; s++) { if (table.shown[s] > 0) { sessions++; } }
    });
    status.textContent = total + " rows match, in " + sessions + " sessions and configuration files" + hidden + ".";
  }
  function refresh() {
    readControls();
    MEMO = {};
    MATCH = null;
    if (filtering()) {
      var tables = [];
      for (var b = 0; b < bundleCount(); b++) { tables.push(matchBundle(b)); }
      MATCH = tables;
    }
    updateStatus();
    document.querySelectorAll("details.finding, details.sessions").forEach(function (box) {
      var b = box.getAttribute("data-bundle"), kind = box.getAttribute("data-kind");
      var finding = box.classList.contains("finding");
      box.querySelector(".body").replaceChildren();
      box.querySelector(".match").textContent = MATCH === null ? "" :
        " \u00b7 " + (finding ? matchingFindings(b, kind) : sessionsOf(b, kind)).length + " match";
      if (box.open) { (finding ? fillFinding : fillSessions)(box); }
    });
  }
  function decode(text) {
    try { return decodeURIComponent(text); } catch (error) { return text; }  // a malformed escape stays as typed
  }
  function fragmentState(raw) {
    var state = Object.create(null);
    raw.split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) { state[decode(part.slice(0, at))] = decode(part.slice(at + 1)); }
    });
    return state;
  }
  function fragment() {
    var parts = [];
    Object.keys(CONTROLS).forEach(function (name) {
      var value = control(name).value;
      if (value) { parts.push(name + "=" + encodeURIComponent(value)); }
    });
    if (hideSystemBox().checked) { parts.push("hide-system=1"); }
    return parts.join("&");
  }
  function remember() {  // the filters in the address, so the page can be reopened (or shared) as it is
    try { history.replaceState(null, "", "#" + fragment()); } catch (error) { /* the filters apply all the same */ }
  }
  function openTarget(target) {
    var match = /^s(\d+)-(\d+)$/.exec(target);
    if (match) {
      var b = Number(match[1]), s = Number(match[2]);
      if (b >= bundleCount() || s >= meta(b).sessions.length) { return; }
      var box = document.getElementById(target);
      if (!box) {
        var list = document.getElementById((meta(b).sessions[s][8] === "configuration" ? "config-" : "sessions-") + b);
        list.open = true; fillSessions(list);
        box = document.getElementById(target);
        if (!box) {  // past the list's first page, or filtered out of it: put it first
          var body = list.querySelector(".body");
          box = sessionView(b, s); body.insertBefore(box, body.firstChild);
        }
      }
      box.open = true; box.scrollIntoView();
      return;
    }
    var node = target && document.getElementById(target);
    if (node && node.tagName === "DETAILS") { node.open = true; node.scrollIntoView(); }
  }
  function openFromHash() {
    var raw = location.hash.slice(1);
    if (raw.indexOf("=") < 0) { openTarget(decode(raw)); return; }
    var state = fragmentState(raw);  // a filter state: every control takes its value (or none)
    Object.keys(CONTROLS).forEach(function (name) { control(name).value = has(state, name) ? state[name] : ""; });
    hideSystemBox().checked = state["hide-system"] === "1";
    refresh();
    if (has(state, "open")) { openTarget(state.open); }
  }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(function () { refresh(); remember(); }, DEBOUNCE_MS);
  }
  function now() { clearTimeout(timer); refresh(); remember(); }
  ["q", "session", "from", "to"].forEach(function (name) { control(name).addEventListener("input", schedule); });
  ["agent", "bundle", "turn"].forEach(function (name) { control(name).addEventListener("change", now); });
  hideSystemBox().addEventListener("change", now);
  document.getElementById("f-clear").addEventListener("click", function () {
    Object.keys(CONTROLS).forEach(function (name) { control(name).value = ""; });
    hideSystemBox().checked = false;
    now();
  });
  document.querySelectorAll("details.finding").forEach(function (box) {
    box.addEventListener("toggle", function () { if (box.open) { fillFinding(box); } });
  });
  document.querySelectorAll("details.sessions").forEach(function (box) {
    box.addEventListener("toggle", function () { if (box.open) { fillSessions(box); } });
  });
  window.addEventListener("hashchange", openFromHash);
  refresh();  // the controls may hold values the browser restored
  openFromHash();
"""
