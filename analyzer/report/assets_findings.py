"""The page script, part two: the findings lists, each drawn from the bundle's meta block when opened.

A finding rests on a row (commands on the call and its result; files,
network, MCP, sub-agents, secrets, integrity on the row that says it); a
search or filter keeps the findings whose row passes (see assets_search).
Secrets are shown by their redacted form only; their row is drawn only when
the examiner opens it.
"""

FINDINGS = r"""
  var OUTCOME_CLASS = {"ran": "b-ok", "failed": "b-bad", "denied by user": "b-deny", "blocked by rule": "b-deny",
    "no result recorded": "b-none", "not recorded by store": "b-none"};
  var SESSION_KINDS = {secondary: true, models: true};  // lists of sessions, not of rows
  var ACTIONS = {written: "written", read: "read", deleted: "deleted"};
  function badge(text, cls) { return el("span", cls ? "badge " + cls : "badge", text); }
  function agentOf(b, i) { return meta(b).sessions[rows(b)[i][1]][0]; }
  function rowFold(b, i, label) { return lazyFold(label, 1, function () { return rowView(b, i); }); }
  function findingItem(b, i, parts) {  // one finding: badges and text, agent, session link, provenance
    var item = el("div", "item"), head = el("div", "fhead");
    parts.forEach(function (part) { head.appendChild(part); });
    item.appendChild(head);
    var where = el("div", "where");
    where.appendChild(el("span", "muted", agentOf(b, i) + " \u00b7 " + (rows(b)[i][0] || "no time") + " \u00b7 "));
    where.appendChild(sessionLink(b, rows(b)[i][1]));
    item.appendChild(where);
    item.appendChild(provenance(b, rows(b)[i]));
    return item;
  }
  function tokensOf(b) {
    var key = "tokens-" + b;
    if (!(key in cache)) {
      var bySession = {};
      (meta(b).tokens || []).forEach(function (t) { (bySession[t[0]] || (bySession[t[0]] = [])).push(t); });
      cache[key] = bySession;
    }
    return cache[key];
  }
  var RENDER = {
    commands: function (b, f) {
      var outcome = f[3] || "no result recorded";
      var exit = f[4] === null || f[4] === undefined ? "" : " \u00b7 exit " + f[4];
      var item = findingItem(b, f[0], [badge(outcome + exit, OUTCOME_CLASS[outcome] || "b-none"),
        marked("pre", "cmd", "$ " + f[2])]);
      item.appendChild(pair(b, f[0], f[1]));
      return item;
    },
    files: function (b, f) {
      var r = rows(b)[f[0]];
      var item = findingItem(b, f[0], [badge(f[2]), marked("code", "", f[1] || "(no path recognised)"),
        el("span", "muted", "  \u2190 " + (r[3] || r[2]))]);
      item.appendChild(rowFold(b, f[0], "the row"));
      return item;
    },
    network: function (b, f) {
      var item = findingItem(b, f[0], [badge(f[1]), marked("code", "", f[2] || "(no target recognised)")]);
      item.appendChild(rowFold(b, f[0], "the row"));
      return item;
    },
    mcp_servers: function (b, f) {
      var item = findingItem(b, f[0], [badge("server"), marked("code", "", f[1]),
        marked("span", "", " " + (f[2] || ""))]);
      item.appendChild(rowFold(b, f[0], "the settings row"));
      return item;
    },
    mcp_calls: function (b, f) {
      var item = findingItem(b, f[0], [badge(f[1] || "(server not named)"), marked("code", "", f[2])]);
      item.appendChild(rowFold(b, f[0], "the call"));
      return item;
    },
    subagents: function (b, f) {
      var item = findingItem(b, f[0], [badge("sub-agent"), marked("span", "", f[1] || "(no description)")]);
      item.appendChild(rowFold(b, f[0], "the row"));
      return item;
    },
    secrets: function (b, f) {  // the redacted form only; the whole row only when the examiner opens it
      var item = findingItem(b, f[0], [badge(f[1], "b-bad"), el("code", "", f[2])]);
      item.appendChild(rowFold(b, f[0], "show the whole prompt (it holds the secret)"));
      return item;
    },
    models: function (b, s) {
      var x = meta(b).sessions[s], item = el("div", "item"), models = x[9] || [];
      item.appendChild(sessionLink(b, s));
      item.appendChild(el("div", "muted", x[0]));
      item.appendChild(el("div", "", "models: " + (models.length ? models.map(function (m) {
        return m[0] + " (" + m[1] + " rows)"; }).join(", ") : "none recorded")));
      var tokens = has(tokensOf(b), s) ? tokensOf(b)[s] : [];
      item.appendChild(el("div", "", "tokens: " + (tokens.length ? tokens.map(function (t) {
        return (t[1] || "(model not named)") + ": " + t[2] + " in, " + t[3] + " out"; }).join("; ") :
        "not recorded by this store")));
      return item;
    },
    rows: function (b, i) {
      var item = el("div", "item"), where = el("div", "where");
      where.appendChild(el("span", "muted", agentOf(b, i) + " \u00b7 "));
      where.appendChild(sessionLink(b, rows(b)[i][1]));
      item.appendChild(where);
      item.appendChild(rowView(b, i));
      return item;
    },
    secondary: function (b, s) { return sessionView(b, s, true); }
  };
  function findingList(b, kind) {  // the meta list behind one findings kind
    var m = meta(b), key = "list-" + kind + "-" + b;
    if (has(ACTIONS, kind)) {
      if (!(key in cache)) { cache[key] = (m.files || []).filter(function (f) { return f[2] === ACTIONS[kind]; }); }
      return cache[key];
    }
    if (kind === "models") {
      if (!(key in cache)) {
        var tokens = tokensOf(b), list = [];
        m.sessions.forEach(function (x, s) { if ((x[9] && x[9].length) || has(tokens, s)) { list.push(s); } });
        cache[key] = list;
      }
      return cache[key];
    }
    return m[kind] || [];
  }
  function renderer(kind) {
    if (has(ACTIONS, kind)) { return RENDER.files; }
    return has(RENDER, kind) ? RENDER[kind] : RENDER.rows;
  }
  function ownText(f) {  // a finding's own strings (command, path, target, outcome ...), for the search
    var parts = [];
    for (var k = 0; k < f.length; k++) { if (typeof f[k] === "string") { parts.push(f[k]); } }
    return parts.join("\n").toLowerCase();
  }
  function findingPasses(b, kind, f) {
    if (MATCH === null) { return true; }
    var table = MATCH[b];
    if (has(SESSION_KINDS, kind)) { return table.hits[f] > 0; }
    var i = typeof f === "number" ? f : f[0];
    if (!(table.flag[i] & 1)) { return false; }  // agent, host, session, turn type, time: on the finding's row
    if (table.flag[i] & 2) { return true; }  // the search matches the row (or there is no search)
    if (kind === "commands" && f[1] >= 0 && (table.flag[f[1]] & 2)) { return true; }  // or the command's result
    return typeof f !== "number" && ownText(f).indexOf(FILTER.q) >= 0;
  }
  function matchingFindings(b, kind) {
    var list = findingList(b, kind), key = kind + "-" + b;
    if (MATCH === null) { return list; }
    if (!has(MEMO, key)) { MEMO[key] = list.filter(function (f) { return findingPasses(b, kind, f); }); }
    return MEMO[key];
  }
  function fillIntegrity(body, b, list) {  // grouped by rule, each with what it proves and what it does not
    var rules = data("rules") || {}, groups = new Map();
    list.forEach(function (f) { if (!groups.has(f[1])) { groups.set(f[1], []); } groups.get(f[1]).push(f[0]); });
    if (!groups.size) { body.appendChild(el("p", "muted", "none")); return; }
    Array.from(groups.keys()).sort().forEach(function (rule) {
      var group = el("div", "rule"), rowsOf = groups.get(rule);
      group.appendChild(el("div", "rulehead", rule + ": " + rowsOf.length));
      if (has(rules, rule)) {
        group.appendChild(el("div", "proves", "proves: " + rules[rule][0]));
        group.appendChild(el("div", "notproves", "does not prove: " + rules[rule][1]));
      }
      group.appendChild(lazyFold("the " + rowsOf.length + " rows", rowsOf.length,
        function (n) { return RENDER.rows(b, rowsOf[n]); }));
      body.appendChild(group);
    });
  }
  function fillFinding(box) {
    var b = box.getAttribute("data-bundle"), kind = box.getAttribute("data-kind"), body = box.querySelector(".body");
    if (body.firstChild) { return; }
    var list = matchingFindings(b, kind), whole = findingList(b, kind).length;
    var exact = Number(box.querySelector(".count").textContent);
    if (exact > whole) {  // the meta lists are capped; the count in the heading is exact
      body.appendChild(el("p", "warn", "The page holds the first " + whole + " of " + exact + "."));
    }
    if (kind === "integrity") { fillIntegrity(body, b, list); return; }
    var render = renderer(kind);
    paged(body, list.length, PAGE, function (n) { return render(b, list[n]); });
  }
"""
