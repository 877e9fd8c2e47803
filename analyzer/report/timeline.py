"""One bundle's timeline (the JSONL that ``aitrail analyze`` wrote) streamed into the page's compact data.

Rows are read one line at a time and written at once, as compact JSON arrays,
to a spool file that the page embeds; what stays in memory is small per row
(session and source tables, findings as row numbers, tool-result ids for the
join, per-day counts), never the rows themselves.

A compact row is ``[time, session, turn type, tool, tool_use_id, text, source,
locator, origin, model, time kind]``: ``session`` and ``source`` index the
session and source tables, so long paths and ids are written once.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO

from aitrail.analyzer.report import tools
from aitrail.analyzer.report.findings import LIST_MAX, Findings
from aitrail.analyzer.report.secrets import SCAN_MAX, redacted_text

TEXT_MAX = 20_000  # characters of one row's text in the page; the timeline keeps all of it
ROW_LINE_MAX = 64 << 20  # a timeline line longer than this is not one analyze wrote
RECORD_TIMES = frozenset({"record", "index"})  # time kinds of the record-time chart
FILE_TIMES = frozenset({"file-mtime", "log-dir"})  # time kinds of the file-time chart
MODELS_MAX = 100  # distinct models counted per session (a real one uses a few; the column is at most 1,024 long)


@dataclass
class Session:
    """One conversation or configuration file: agent, session id (or the source file when a row has none), extent."""

    agent: str
    session_id: str
    project: str = ""
    first: str = ""
    last: str = ""
    rows: int = 0
    secondary: int = 0
    title: str = ""  # the agent's title, else the first prompt (set when the rows are read); see tools.TITLE_ROWS
    kind: str = "configuration"  # "conversation" once a row says so (tools.CONVERSATION_TURNS, _ROLES)
    models: Counter = field(default_factory=Counter)  # model -> rows
    prompt: str = field(default="", repr=False)  # the first prompt's first line, while the rows are read
    from_file: bool = False  # keyed by its source file: its rows carry no session id
    # the extent by file times (a file's modification time, an integrity row), used only when no row has a record time
    file_first: str = field(default="", repr=False)
    file_last: str = field(default="", repr=False)

    def as_list(self) -> list:
        """The session's entry in the page's session table."""
        models = [[model, rows] for model, rows in sorted(self.models.items(), key=lambda item: (-item[1], item[0]))]
        first, last = (self.first, self.last) if self.first else (self.file_first, self.file_last)
        return [self.agent, self.session_id, self.project, first, last, self.rows, self.secondary,
                self.title, self.kind, models]


@dataclass
class Digest:
    """What the report keeps of one bundle's timeline besides the spooled rows (lists capped at LIST_MAX)."""

    rows: int = 0
    sessions: list[Session] = field(default_factory=list)
    sources: list[list[str]] = field(default_factory=list)  # [member, sha256]
    commands: list[list] = field(default_factory=list)  # [row, result row or -1, command, outcome, exit code]
    files: list[list] = field(default_factory=list)  # [row, path, read|written|deleted]
    network: list[list] = field(default_factory=list)  # [row, fetch|search|command, target]
    mcp_servers: list[list] = field(default_factory=list)  # [row, server, detail]
    mcp_calls: list[list] = field(default_factory=list)  # [row, server, tool]
    subagents: list[list] = field(default_factory=list)  # [row, description]
    tokens: list[list] = field(default_factory=list)  # [session, model, input, output]
    secrets: list[list] = field(default_factory=list)  # [row, kind, redacted]
    integrity: list[list] = field(default_factory=list)  # [row, rule]
    permissions: list[int] = field(default_factory=list)
    problems: list[int] = field(default_factory=list)  # parser: rows of damaged or unreadable records
    resultless: list[int] = field(default_factory=list)  # sources whose store never records tool results
    unpaired: list[int] = field(default_factory=list)  # a call without its result, a result without its call
    activity_record: Counter = field(default_factory=Counter)  # (agent, day) -> rows timed by a record (or index)
    activity_file: Counter = field(default_factory=Counter)  # (agent, day) -> rows timed by a file or log folder
    counts: dict = field(default_factory=dict)  # exact numbers (docs/report.md); the lists above are capped
    span: list[str] = field(default_factory=lambda: ["", ""])  # first and last record-timed row
    bad_lines: int = 0
    blocks: int = 0  # rows blocks written (rows-<bundle>-<k>)

    def secondary_only(self) -> list[int]:
        """Sessions every row of which came from a secondary store."""
        return [index for index, session in enumerate(self.sessions) if session.rows == session.secondary]

    def meta(self) -> dict:
        """The bundle's page data (``meta-<bundle>``): every table and findings list, and the counts."""
        return {"sessions": [session.as_list() for session in self.sessions], "sources": self.sources,
                "commands": self.commands, "files": self.files, "network": self.network,
                "mcp_servers": self.mcp_servers, "mcp_calls": self.mcp_calls, "subagents": self.subagents,
                "tokens": self.tokens, "secrets": self.secrets, "integrity": self.integrity,
                "permissions": self.permissions, "problems": self.problems, "unpaired": self.unpaired,
                "secondary": self.secondary_only()[:LIST_MAX], "resultless": self.resultless, "counts": self.counts,
                "span": self.span}


class _Builder:
    """Tables and joins kept while the rows stream past."""

    def __init__(self, resultless: frozenset[str] = frozenset(), roles: Mapping[str, str] | None = None) -> None:
        self.digest = Digest()
        self.resultless = resultless  # stores whose format never records tool results (catalog tool_results)
        self.roles = roles or {}  # catalog role per store (agent.store)
        self.session_index: dict[tuple[str, str], int] = {}
        self.source_index: dict[str, int] = {}
        self.findings = Findings()

    def session(self, row: dict) -> int:
        agent, session_id = _field(row, "agent"), _field(row, "session_id")
        key = (agent, session_id or "file:" + _field(row, "source"))
        index = self.session_index.get(key)
        if index is None:
            index = self.session_index[key] = len(self.digest.sessions)
            self.digest.sessions.append(Session(agent, session_id or key[1], from_file=not session_id))
        return index

    def source(self, row: dict) -> int:
        member = _field(row, "source")
        index = self.source_index.get(member)
        if index is None:
            index = self.source_index[member] = len(self.digest.sources)
            self.digest.sources.append([member, _field(row, "source_sha256")])
            if _field(row, "store") in self.resultless:
                self.digest.resultless.append(index)
        return index

    def add(self, row: dict) -> list:
        """Account one row (session extent, findings, joins) and return its compact form."""
        number, digest = self.digest.rows, self.digest
        digest.rows += 1
        session_number = self.session(row)
        session = digest.sessions[session_number]
        when, turn, text = _field(row, "timestamp_utc"), _field(row, "turn_type"), _field(row, "text")
        tool, call_id, origin = _field(row, "tool_name"), _field(row, "tool_use_id"), _field(row, "origin")
        store, model, time_kind = _field(row, "store"), _field(row, "model"), _field(row, "timestamp_source")
        self._extent(session, row, when, origin, time_kind)
        self._describe(session, turn, text, store, model)
        self.findings.see(number, session_number, turn, tool, call_id, text, store in self.resultless)
        if len(text) > TEXT_MAX:
            text = text[:TEXT_MAX] + f" … [{len(text) - TEXT_MAX} more characters in the timeline]"
        return [when, session_number, turn, tool, call_id, text, self.source(row), _field(row, "locator"), origin,
                model, time_kind]

    def _extent(self, session: Session, row: dict, when: str, origin: str, time_kind: str) -> None:
        session.rows += 1
        session.secondary += origin == "secondary"
        session.project = session.project or _field(row, "project_path")
        if not when:
            return
        if time_kind in RECORD_TIMES:  # a session's extent is its records' (file times reach the collection day)
            session.first = min(session.first, when) if session.first else when
            session.last = max(session.last, when)
        else:
            session.file_first = min(session.file_first, when) if session.file_first else when
            session.file_last = max(session.file_last, when)
        if time_kind in RECORD_TIMES:
            self.digest.activity_record[(session.agent, when[:10])] += 1
        elif time_kind in FILE_TIMES:
            self.digest.activity_file[(session.agent, when[:10])] += 1
        if time_kind == "record":
            span = self.digest.span
            span[0] = min(span[0], when) if span[0] else when
            span[1] = max(span[1], when)

    def _describe(self, session: Session, turn: str, text: str, store: str, model: str) -> None:
        """The session's kind, title, first prompt and models, from one of its rows."""
        # rows without a session id (a settings file, a state database's keys, a log) are a file, not a
        # conversation, unless one of them is a turn; a session id of a store not among the configuration roles is
        if session.kind != "conversation" and (turn in tools.CONVERSATION_TURNS or (
                not session.from_file and self.roles.get(store) not in tools.CONFIGURATION_ROLES)):
            session.kind = "conversation"
        if model and (model in session.models or len(session.models) < MODELS_MAX):
            session.models[model] += 1
        if turn == "user":
            if not session.prompt and text.strip():  # a secret typed in it is shown redacted, as in the findings
                line = tools.first_line(tools.unmarked(text.lstrip()), SCAN_MAX)
                session.prompt = tools.one_line(redacted_text(line))
        elif turn == "system":
            title = tools.title_of(session.agent, text)
            if title:
                session.title = tools.one_line(redacted_text(title))  # the last one: a rename, a later title

    def finish(self) -> Digest:
        """Settle titles, outcomes and counts once every row is read."""
        digest, findings = self.digest, self.findings
        counts = findings.finish()
        for name in ("commands", "files", "network", "mcp_servers", "mcp_calls", "subagents", "secrets",
                     "integrity", "permissions", "problems", "unpaired"):
            setattr(digest, name, findings.lists[name])
        digest.tokens = findings.token_list()
        conversations = 0
        for session in digest.sessions:
            session.title = session.title or session.prompt
            conversations += session.kind == "conversation"
        counts.update({"sessions": conversations, "configuration": len(digest.sessions) - conversations,
                       "recovered_sessions": len(digest.secondary_only()), "rows": digest.rows})
        digest.counts = counts
        return digest


def _field(row: dict, name: str) -> str:
    value = row.get(name)
    return value if isinstance(value, str) else ""


BLOCK_CHARS = 16 * 1024 * 1024  # JSON text of one rows block: far below a browser's longest string (~512 Mi)


def spool(timeline: IO[bytes], open_block: Callable[[int], IO[str]],
          resultless: frozenset[str] = frozenset(), roles: Mapping[str, str] | None = None) -> Digest:
    """Read analyze's JSONL from ``timeline``; write the rows as JSON arrays of at most BLOCK_CHARS; the digest.

    Block ``k`` goes to ``open_block(k)`` (closed here): the page holds each as
    a script element of its own, so that no bundle's rows, however many, make
    one text the browser cannot parse. A line that is not a JSON object
    (analyze never writes one) is counted in ``bad_lines`` and skipped.
    """
    builder = _Builder(resultless, roles)
    out, written = open_block(0), 0
    out.write("[")
    try:
        for line in timeline:
            if not line.strip():
                continue
            try:
                row = json.loads(line) if len(line) <= ROW_LINE_MAX else None
            except (ValueError, RecursionError):
                row = None
            if not isinstance(row, dict):
                builder.digest.bad_lines += 1
                continue
            text = script_json(builder.add(row))
            if written and written + len(text) > BLOCK_CHARS:
                out.write("]")
                out.close()
                builder.digest.blocks += 1
                out, written = open_block(builder.digest.blocks), 0
                out.write("[")
            out.write(("," if written else "") + text)
            written += len(text) + 1
        out.write("]")
    finally:
        out.close()
    builder.digest.blocks += 1
    return builder.finish()


# Characters that change how the text around them is shown, or are not shown at all: controls,
# bidirectional overrides and isolates (``-home-alice-\u202efdp.exe`` displays as ``...exe.pdf``),
# zero-width characters. The page shows each as the visible text ``\uXXXX``; newlines and tabs stay.
_INVISIBLE = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), 0x061C, 0x180E,
              *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0xFEFF]
VISIBLE = {code: f"\\u{code:04x}" for code in _INVISIBLE}


def visible(value):
    r"""``value`` with every invisible or reordering character in its strings written as ``\uXXXX``."""
    if isinstance(value, str):
        return value.translate(VISIBLE)
    if isinstance(value, list):
        return [visible(item) for item in value]
    if isinstance(value, dict):
        return {key: visible(item) for key, item in value.items()}
    return value


def script_json(value) -> str:
    r"""JSON that cannot end or alter the ``<script>`` element it sits in.

    Every ``<`` is written ``\u003c`` (so neither ``</script`` nor ``<!--``
    can appear), and U+2028/U+2029 are escaped for older JavaScript parsers.
    """
    encoded = json.dumps(visible(value), ensure_ascii=False, separators=(",", ":"))
    return encoded.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
