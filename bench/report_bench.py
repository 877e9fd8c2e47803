"""How fast Chromium opens an `aitrail report` page: load, first paint of the summary, opening a session, search.

    python bench/report_bench.py --megabytes 220      # the dense corpus: about 500,000 rows
    python bench/report_bench.py --profile claude --megabytes 21   # about 60,000 Claude Code rows

Builds a home of bench/analyze_bench.py (`dense` unless --profile says
otherwise), collects it, writes the report (timed), then drives headless
Chromium over the DevTools protocol (needs the `websocket-client` package,
bench only): it navigates to the page and times `DOMContentLoaded` and
`load` from the browser's own Navigation Timing, then opens one session and
one findings list by their links and times how long until their rows are in
the DOM; then types into the search box (the value set and an `input` event
sent, as a key press does) and times until the page says how many rows match:
a first search (the rows parsed and lowercased once), a second one, and an
agent filter; and reads the renderer's JS heap. Last, a fresh browser opens
the page with the search in its fragment (``#q=error``) and times from
navigation start until the matches are counted: load and filter together.
Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze_bench import build_home  # noqa: E402

AITRAIL = str(Path(sys.executable).with_name("aitrail"))


class Browser:
    """Headless Chromium on a DevTools port, one page, commands answered in order."""

    def __init__(self, port: int = 9334):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="report-bench-chromium-")
        self.process = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={port}",
             f"--user-data-dir={self.profile}", "--remote-allow-origins=*", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
                target = next(page for page in pages if page.get("type") == "page")
                break
            except (OSError, StopIteration, ValueError):
                time.sleep(0.1)
        self.socket = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=600)
        self.next_id = 0

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                return message.get("result", {})

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def close(self) -> None:
        self.socket.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


WAIT_FOR = """new Promise(resolve => { const t0 = performance.now(); location.hash = %s;
  (function poll() { const box = document.getElementById(%s);
    if (box && box.querySelector('.row, li, .pair')) { resolve(performance.now() - t0); }
    else if (performance.now() - t0 > 120000) { resolve(-1); } else { setTimeout(poll, 20); } })(); })"""


TYPE = """new Promise(resolve => { const status = document.getElementById('f-status');
  status.textContent = "";  // the page writes it again when the search is done, even if the count is the same
  const box = document.getElementById(%s); box.value = %s; const t0 = performance.now();
  box.dispatchEvent(new Event(%s));
  (function poll() { if (/rows match/.test(status.textContent)) {
      resolve([performance.now() - t0, status.textContent]); }
    else if (performance.now() - t0 > 120000) { resolve([-1, status.textContent]); } else { setTimeout(poll, 5); } })();
})"""


def search(browser: Browser, control: str, value: str, event: str) -> tuple[float, str]:
    """Milliseconds from a change of one control to the page's count of matching rows, and that count."""
    took, status = browser.evaluate(TYPE % (json.dumps(control), json.dumps(value), json.dumps(event)))
    return round(took), status


LOADED_FILTERED = """new Promise(resolve => { (function poll() {
  const status = document.getElementById('f-status');
  if (status && /rows match/.test(status.textContent)) { resolve(performance.now()); }
  else if (performance.now() > 120000) { resolve(-1); } else { setTimeout(poll, 5); } })(); })"""


def load_filtered(page: Path, query: str) -> int:
    """Milliseconds from navigation start until a page opened with ``#q=<query>`` shows its matches."""
    browser = Browser(9335)
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", url=f"file://{page}#q={query}")
        while browser.evaluate("document.readyState") != "complete":
            time.sleep(0.05)
        return round(browser.evaluate(LOADED_FILTERED))
    finally:
        browser.close()


def open_page(page: Path) -> dict:
    """Navigation timings of the page, then the time to open one session and one findings list."""
    browser = Browser()
    try:
        browser.call("Page.enable")
        started = time.perf_counter()
        browser.call("Page.navigate", url=f"file://{page}")
        while browser.evaluate("document.readyState") != "complete":
            time.sleep(0.05)
        wall = time.perf_counter() - started
        timing = browser.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])")
        navigation = json.loads(timing or "{}")
        session = browser.evaluate("(document.querySelector('[id^=sessions-] .body') ? 's0-0' : '')")
        opened = browser.evaluate(WAIT_FOR % (json.dumps("#" + session), json.dumps(session))) if session else None
        findings = browser.evaluate(WAIT_FOR % (json.dumps("#f0-commands"), json.dumps("f0-commands")))
        first, first_status = search(browser, "q", "error", "input")  # includes the 250 ms debounce
        second, _ = search(browser, "q", "timeout", "input")
        agent = browser.evaluate("document.querySelector('#f-agent option:nth-child(2)').value")
        browser.evaluate("document.getElementById('q').value = ''")  # the agent change below reads it too
        by_agent, _ = search(browser, "f-agent", agent, "change")  # no debounce for a select
        heap = browser.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
        return {"load_wall_s": round(wall, 2),
                "first_search_ms": first, "first_search_status": first_status, "second_search_ms": second,
                "agent_filter_ms": by_agent,
                "dom_content_loaded_ms": round(navigation.get("domContentLoadedEventEnd", 0)),
                "load_event_ms": round(navigation.get("loadEventEnd", 0)),
                "open_session_ms": None if opened is None else round(opened),
                "open_commands_ms": round(findings), "js_heap_mb": round((heap or 0) / 1e6)}
    finally:
        browser.close()


def rows_of(page: Path) -> int:
    """The timeline rows in the page, from page one's count (a static table)."""
    with open(page, encoding="utf-8") as handle:
        head = handle.read(1 << 20)
    match = re.search(r"<td>timeline rows</td><td class=n>(\d+)</td>", head)
    return int(match.group(1)) if match else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=220)
    parser.add_argument("--profile", default="dense", help="a home profile of bench/analyze_bench.py")
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "out" / "report")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    stats = build_home(args.work / "home", args.megabytes, args.profile)
    bundle = args.work / "b.tar.zst"
    subprocess.run([AITRAIL, "collect", "--home", str(args.work / "home"), "-o", str(bundle), "--quiet"], check=True)
    page = args.work / "r.html"
    started = time.perf_counter()
    subprocess.run([AITRAIL, "report", str(bundle), "-o", str(page)], check=True, stderr=subprocess.DEVNULL)
    written = time.perf_counter() - started
    result = {"corpus": stats, "report_wall_s": round(written, 1), "page_mb": round(os.path.getsize(page) / 1e6),
              "rows": rows_of(page), **open_page(page), "load_and_search_ms": load_filtered(page, "error")}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
