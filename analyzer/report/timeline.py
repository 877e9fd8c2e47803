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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from aitrail.analyzer.report import tools
from aitrail.analyzer.view.rows import UNPAIRED_PREFIXES

TEXT_MAX = 20_000  # characters of one row's text in the page; the timeline keeps all of it
ROW_LINE_MAX = 64 << 20  # a timeline line longer than this is not one analyze wrote


@dataclass
class Session:
    """One conversation: agent, session id (or the source file when a row has none), extent and origins."""

    agent: str
    session_id: str
    project: str = ""
    first: str = ""
    last: str = ""
    rows: int = 0
    secondary: int = 0

    def as_list(self) -> list:
        """The session's entry in the page's session table."""
        return [self.agent, self.session_id, self.project, self.first, self.last, self.rows, self.secondary]


@dataclass
class Digest:
    """What the report keeps of one bundle's timeline besides the spooled rows."""

    rows: int = 0
    sessions: list[Session] = field(default_factory=list)
    sources: list[list[str]] = field(default_factory=list)  # [member, sha256]
    commands: list[list] = field(default_factory=list)  # [row, result row or -1, command]
    writes: list[list] = field(default_factory=list)  # [row, path]
    permissions: list[int] = field(default_factory=list)
    problems: list[int] = field(default_factory=list)  # parser: rows of damaged or unreadable records
    resultless: list[int] = field(default_factory=list)  # sources whose store never records tool results
    unpaired: list[int] = field(default_factory=list)  # a call without its result, a result without its call
    activity: Counter = field(default_factory=Counter)  # (agent, day) -> rows
    bad_lines: int = 0
    blocks: int = 0  # rows blocks written (rows-<bundle>-<k>)

    def secondary_only(self) -> list[int]:
        """Sessions every row of which came from a secondary store."""
        return [index for index, session in enumerate(self.sessions) if session.rows == session.secondary]


class _Builder:
    """Tables and joins kept while the rows stream past."""

    def __init__(self, resultless: frozenset[str] = frozenset()) -> None:
        self.digest = Digest()
        self.resultless = resultless  # stores whose format never records tool results (catalog tool_results)
        self.session_index: dict[tuple[str, str], int] = {}
        self.source_index: dict[str, int] = {}
        self.results: dict[tuple[int, str], int] = {}  # (session, tool_use_id) -> result row
        self.waiting: dict[tuple[int, str], int] = {}  # (session, tool_use_id) -> command finding

    def session(self, row: dict) -> int:
        agent, session_id = _field(row, "agent"), _field(row, "session_id")
        key = (agent, session_id or "file:" + _field(row, "source"))
        index = self.session_index.get(key)
        if index is None:
            index = self.session_index[key] = len(self.digest.sessions)
            self.digest.sessions.append(Session(agent, session_id or key[1]))
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
        session.rows += 1
        session.secondary += origin == "secondary"
        session.project = session.project or _field(row, "project_path")
        if when:
            session.first = min(session.first, when) if session.first else when
            session.last = max(session.last, when)
            digest.activity[(session.agent, when[:10])] += 1
        self._findings(number, session_number, turn, tool, call_id, text)
        if len(text) > TEXT_MAX:
            text = text[:TEXT_MAX] + f" … [{len(text) - TEXT_MAX} more characters in the timeline]"
        return [when, session_number, turn, tool, call_id, text, self.source(row), _field(row, "locator"), origin,
                _field(row, "model"), _field(row, "timestamp_source")]

    def _findings(self, number: int, session: int, turn: str, tool: str, call_id: str, text: str) -> None:
        digest = self.digest
        if text.startswith(tools.PARSER_PREFIX):
            (digest.unpaired if text.startswith(UNPAIRED_PREFIXES) else digest.problems).append(number)
        if tools.is_permission(text):
            digest.permissions.append(number)
        if turn == "tool_result" and call_id:
            key = (session, call_id)
            self.results.setdefault(key, number)
            finding = self.waiting.pop(key, None)
            if finding is not None:
                digest.commands[finding][1] = number
        elif turn == "tool_use" and tool in tools.SHELL_TOOLS:
            result = self.results.get((session, call_id), -1) if call_id else -1
            if call_id and result < 0:
                self.waiting.setdefault((session, call_id), len(digest.commands))
            digest.commands.append([number, result, _cut(tools.command_of(text))])
        elif turn == "tool_use" and tool in tools.WRITE_TOOLS:
            for path in tools.paths_of(text) or [""]:
                digest.writes.append([number, _cut(path)])


def _field(row: dict, name: str) -> str:
    value = row.get(name)
    return value if isinstance(value, str) else ""


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_MAX else text[:TEXT_MAX] + " …"


BLOCK_CHARS = 16 * 1024 * 1024  # JSON text of one rows block: far below a browser's longest string (~512 Mi)


def spool(timeline: IO[bytes], open_block: Callable[[int], IO[str]],
          resultless: frozenset[str] = frozenset()) -> Digest:
    """Read analyze's JSONL from ``timeline``; write the rows as JSON arrays of at most BLOCK_CHARS; the digest.

    Block ``k`` goes to ``open_block(k)`` (closed here): the page holds each as
    a script element of its own, so that no bundle's rows, however many, make
    one text the browser cannot parse. A line that is not a JSON object
    (analyze never writes one) is counted in ``bad_lines`` and skipped.
    """
    builder = _Builder(resultless)
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
    return builder.digest


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
