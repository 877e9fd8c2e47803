"""Synthetic homes for bench/analyze_bench.py's largest stores: Goose, OpenClaw (SQLite) and Copilot CLI (JSONL).

Each builder writes at least ``megabytes`` of transcript JSON (uncompressed)
into a fresh home and returns what it built (``files``, ``bytes`` of JSON,
``disk_bytes`` of the files on disk and its own counts). The shapes are the
ones the agents' pages and fixtures document, never a real install's:

* Goose (docs/agents/goose.md, fixtures/goose/sqlite-current):
  ``~/.local/share/goose/sessions/sessions.db`` at schema v13
  (fixtures/goose/schema/v13-upgraded.sql), WAL mode, the newest sessions
  only in the committed -wal as a running Goose leaves them; messages hold
  ``text``, ``thinking``, ``toolRequest`` and ``toolResponse`` blocks
  (``{"status":"success","value":...}``), ``created_timestamp`` in seconds.
* OpenClaw (docs/agents/openclaw.md, fixtures/openclaw/agent-db):
  ``~/.openclaw/agents/main/agent/openclaw-agent.sqlite`` at agent schema 23
  (fixtures/openclaw/schema/agent.sql), WAL mode; ``transcript_events`` holds
  Pi session entries, those of 1 KiB to 4 MiB as checksummed level-1 zstd
  frames in ``event_zstd`` (schema 23's rule) and the smaller ones as
  ``event_json``; session keys in ``session_nodes``, one window per session
  id in ``session_windows`` (reset windows chained by ``previous_session_id``).
  The FTS5 ``session_transcript_fts`` is left empty: no parser reads it.
* Copilot CLI (docs/agents/copilot-cli.md, fixtures/copilot-cli/events-session):
  ``~/.copilot/session-state/<uuid>/events.jsonl``, large sessions of
  ``user.message``, ``assistant.turn_start``/``turn_end``,
  ``assistant.reasoning``, ``assistant.message`` with ``toolRequests``,
  ``permission.requested``/``completed`` for shell calls and
  ``tool.execution_start``/``complete`` with results of a few kilobytes.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import zstandard

REPO = Path(__file__).resolve().parent.parent
GOOSE_SCHEMA = REPO / "fixtures/goose/schema/v13-upgraded.sql"
OPENCLAW_SCHEMA = REPO / "fixtures/openclaw/schema/agent.sql"
START_S = 1_780_000_000  # 2026-05-28, the first session's start (Unix seconds)
IN_WAL = 0.03  # the share of the corpus written last and left in the -wal (not checkpointed)
ZSTD_RANGE = (1024, 4 * 1024 * 1024)  # OpenClaw compresses events of 1 KiB to 4 MiB (agent schema 23)

PROSE = ("the build fails because make all needs a target run the tests again read the file utils slug "
         "lower case dashes unicode handling npm test passing failing error stack trace module import "
         "timeout retry pool config handler request response cache index migration schema").split()
CODE = ("def return self if else for in import from class async await raise None True False "
        "request response parse config timeout = == ( ) [ ] : , . -> str int dict list").split()


def prose(rng: random.Random, count: int) -> str:
    """``count`` words of a prompt or a reply."""
    return " ".join(rng.choice(PROSE) for _ in range(count))


def output(rng: random.Random, count: int) -> str:
    """About ``count`` words of tool output: ``path:line: code`` lines, as a grep or a file view prints them."""
    lines = []
    while count > 0:
        width = rng.randint(6, 14)
        lines.append(f"src/{rng.choice(PROSE)}_{rng.randint(1, 40)}.py:{rng.randint(1, 900)}: "
                     + " ".join(rng.choice(CODE) for _ in range(width)))
        count -= width
    return "\n".join(lines)


def uuid4(rng: random.Random) -> str:
    """A random UUID v4 text from ``rng`` (reproducible)."""
    value = f"{rng.getrandbits(128):032x}"
    return f"{value[:8]}-{value[8:12]}-4{value[13:16]}-8{value[17:20]}-{value[20:32]}"


def compact(value) -> str:
    """JSON as the agents write it: no spaces."""
    return json.dumps(value, separators=(",", ":"))


def sqlite_text(seconds: float) -> str:
    """SQLite ``CURRENT_TIMESTAMP`` text (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def iso_ms(ms: int, offset: str = "Z") -> str:
    """ISO 8601 with milliseconds; ``offset`` "+02:00" gives local time at that offset."""
    shift = 0 if offset == "Z" else (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60) * (1 if offset[0] == "+" else -1)
    seconds, millis = divmod(ms + shift * 1000, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}{offset}"


def fill_database(path: Path, schema: Path, megabytes: int, add_session: Callable[[sqlite3.Connection, int], int]
                  ) -> dict:
    """A database from ``schema`` filled by ``add_session(connection, number)`` (it returns its JSON bytes).

    The sessions written after the first (1 - IN_WAL) of ``megabytes`` are
    committed in WAL mode and left in the -wal, never checkpointed: the files
    are taken while the connection is open, as a collector finds them beside
    a running agent.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(schema.read_text())
    target, total, sessions, in_wal = megabytes * 1_000_000, 0, 0, False
    while total < target:
        if not in_wal and total >= target * (1 - IN_WAL):
            connection.commit()
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA wal_autocheckpoint = 0")
            in_wal = True
        sessions += 1
        total += add_session(connection, sessions)
    connection.commit()
    wal = path.with_name(path.name + "-wal")
    main_bytes, wal_bytes = path.read_bytes(), wal.read_bytes() if wal.exists() else b""
    connection.close()  # checkpoints into the file and deletes the -wal: both are put back as they were
    path.write_bytes(main_bytes)
    if wal_bytes:
        wal.write_bytes(wal_bytes)
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    return {"files": 1, "bytes": total, "disk_bytes": len(main_bytes) + len(wal_bytes), "sessions": sessions}


# -- Goose -------------------------------------------------------------------------------------------------------

GOOSE_SESSION_COLUMNS = ("id", "name", "description", "session_type", "working_dir", "created_at", "updated_at",
                         "extension_data", "total_tokens", "input_tokens", "output_tokens",
                         "accumulated_total_tokens", "accumulated_input_tokens", "accumulated_output_tokens",
                         "accumulated_cost", "provider_name", "model_config_json", "goose_mode")
GOOSE_VISIBLE = compact({"userVisible": True, "agentVisible": True})


def goose_call(rng: random.Random, step: int, result_words: tuple[int, int]) -> tuple[dict, dict]:
    """A toolRequest block and its toolResponse block (developer__shell, a file view or a file write)."""
    call_id = f"toolu_{rng.getrandbits(64):016x}"
    kind = rng.choice(("shell", "view", "view", "write"))
    if kind == "shell":
        name, arguments, result = "developer__shell", {"command": f"rg -n {rng.choice(PROSE)} src"}, None
    elif kind == "view":
        name, arguments, result = "developer__text_editor", {"command": "view", "path": f"src/m{step}.py"}, None
    else:
        path = f"src/m{step}.py"
        name, arguments = "developer__text_editor", {"command": "write", "path": path,
                                                     "file_text": output(rng, rng.randint(*result_words))}
        result = f"Successfully wrote to {path}"
    text = result or output(rng, rng.randint(*result_words))
    request = {"type": "toolRequest", "id": call_id,
               "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}}}
    response = {"type": "toolResponse", "id": call_id,
                "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": text}],
                                                              "isError": False}}}
    return request, response


def goose_messages(rng: random.Random, session_id: str, start: int, target: int, result_words: tuple[int, int]
                   ) -> list[tuple]:
    """A session's messages rows: prompts, replies with thinking and a tool request, the tool responses."""
    rows, size, step = [], 0, 0

    def add(role: str, content: list[dict]) -> None:
        nonlocal size
        moment = start + 3 * len(rows)
        body = compact(content)
        rows.append((f"msg_{session_id}_{uuid4(rng)}", session_id, role, body, moment, sqlite_text(moment), None,
                     GOOSE_VISIBLE))
        size += len(body)

    while size < target:
        if step % 12 == 0:  # the user asks again every dozen steps
            add("user", [{"type": "text", "text": prose(rng, rng.randint(10, 60))}])
        step += 1
        request, response = goose_call(rng, step, result_words)
        blocks = [{"type": "text", "text": prose(rng, rng.randint(8, 40))}, request]
        if step % 3 == 1:
            blocks.insert(0, {"type": "thinking", "thinking": prose(rng, rng.randint(20, 80)), "signature": "sig"})
        add("assistant", blocks)
        add("user", [response])
    add("assistant", [{"type": "text", "text": prose(rng, 50)}])
    return rows


def goose_session(rng: random.Random, number: int, result_words: tuple[int, int]) -> tuple[tuple, list[tuple]]:
    """A sessions row (id ``YYYYMMDD_<n>``, model, mode, todo list, token totals) and its messages rows."""
    start = START_S + number * 5400
    session_id = f"{time.strftime('%Y%m%d', time.gmtime(start))}_{number}"
    messages = goose_messages(rng, session_id, start, rng.randint(300_000, 2_000_000), result_words)
    end = messages[-1][4]
    extensions = {"enabled_extensions.v0": {"extensions": [{"type": "builtin", "name": "developer"}]}}
    if number % 4 == 0:
        extensions["todo.v0"] = {"content": "- [x] read the failing test\n- [ ] fix the pool timeout"}
    tokens = 400 * len(messages)
    row = (session_id, prose(rng, 4), "", "user", f"/home/u/p{number % 20}", sqlite_text(start), sqlite_text(end),
           compact(extensions), tokens, tokens - tokens // 10, tokens // 10, 3 * tokens, 3 * tokens - tokens // 4,
           tokens // 4, round(tokens * 3e-6, 4), "anthropic",
           compact({"model_name": "claude-sonnet-4-5", "context_limit": 200000, "temperature": None}),
           rng.choice(("auto", "smart_approve")))
    return row, messages


def build_goose_home(home: Path, megabytes: int, result_words: tuple[int, int], seed: int = 19) -> dict:
    """Goose's sessions.db (schema v13, WAL) with sessions of 0.3-2 MB (a real one: ~1 MB, goose#8711)."""
    rng = random.Random(seed)
    counted = {"messages": 0}

    def add_session(connection: sqlite3.Connection, number: int) -> int:
        if number == 1:
            connection.executemany("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                                   [(version, "2026-03-01 09:00:00") for version in range(1, 14)])
        row, messages = goose_session(rng, number, result_words)
        connection.execute(f"INSERT INTO sessions ({', '.join(GOOSE_SESSION_COLUMNS)}) "
                           f"VALUES ({', '.join('?' * len(row))})", row)
        connection.executemany("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp,"
                               " timestamp, tokens, metadata_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", messages)
        counted["messages"] += len(messages)
        return sum(len(message[3]) + len(message[7]) for message in messages)

    stats = fill_database(home / ".local/share/goose/sessions/sessions.db", GOOSE_SCHEMA, megabytes, add_session)
    return {**stats, **counted}


# -- OpenClaw ----------------------------------------------------------------------------------------------------

OPENCLAW_KEYS = {"agent:main:main": "webchat", "agent:main:slack:channel:c04q1": "slack",  # key -> its channel
                 "agent:main:discord:channel:881": "discord", "agent:main:telegram:direct:4411": "telegram",
                 "cron:nightly-deps": "cron", "agent:main:webchat:direct:alice": "webchat"}
OPENCLAW_TOOLS = ("exec", "read", "edit", "exec", "read")
OPENCLAW_STEP_MS = 2500


def openclaw_call(rng: random.Random, step: int, result_words: tuple[int, int]) -> tuple[dict, str]:
    """A toolCall block (exec, read or edit) and its result text."""
    name = rng.choice(OPENCLAW_TOOLS)
    if name == "exec":
        arguments = {"command": f"rg -n {rng.choice(PROSE)} src"}
    elif name == "read":
        arguments = {"path": f"src/m{step}.py"}
    else:
        arguments = {"path": f"src/m{step}.py", "oldText": prose(rng, 12), "newText": prose(rng, 14)}
    text = f"Successfully replaced text in src/m{step}.py." if name == "edit" else output(
        rng, rng.randint(*result_words))
    return {"type": "toolCall", "id": f"call_{rng.getrandbits(48):012x}", "name": name, "arguments": arguments}, text


def openclaw_events(rng: random.Random, session_id: str, start_ms: int, target: int,
                    result_words: tuple[int, int]) -> list[dict]:
    """A session's Pi entries: header, model_change, prompts, replies (thinking, text, toolCall), tool results."""
    events, size, step = [], 0, 0
    model = {"provider": "anthropic", "model": "claude-sonnet-4-5"}

    def add(entry: dict) -> None:
        nonlocal size
        moment = start_ms + OPENCLAW_STEP_MS * len(events)  # entry ``seq`` is at start + seq steps
        entry = {"type": entry.pop("type"), "id": f"{rng.getrandbits(32):08x}",
                 "parentId": events[-1]["id"] if len(events) > 1 else None, "timestamp": iso_ms(moment), **entry}
        if "message" in entry:
            entry["message"]["timestamp"] = moment
        events.append(entry)
        size += len(compact(entry))

    events.append({"type": "session", "version": 3, "id": session_id, "timestamp": iso_ms(start_ms),
                   "cwd": f"/home/u/p{rng.randint(0, 19)}"})
    add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    while size < target:
        if step % 12 == 0:
            prompt = [{"type": "text", "text": prose(rng, rng.randint(10, 60))}]
            add({"type": "message", "message": {"role": "user", "content": prompt}})
        step += 1
        call, result = openclaw_call(rng, step, result_words)
        content = [{"type": "text", "text": prose(rng, rng.randint(8, 40))}, call]
        if step % 3 == 1:
            content.insert(0, {"type": "thinking", "thinking": prose(rng, rng.randint(20, 80))})
        add({"type": "message", "message": {"role": "assistant", **model, "stopReason": "toolUse",
                                            "usage": {"input": 900 * step, "output": 80}, "content": content}})
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
                                            "content": [{"type": "text", "text": result}], "isError": False}})
    add({"type": "message", "message": {"role": "assistant", **model, "stopReason": "stop",
                                        "content": [{"type": "text", "text": prose(rng, 50)}]}})
    return events


def openclaw_event_row(session_id: str, seq: int, event: dict, moment: int, compressor: zstandard.ZstdCompressor
                       ) -> tuple:
    """A transcript_events row: ``event_json``, or for 1 KiB to 4 MiB a zstd frame with its length and navigation."""
    text = compact(event)
    data = text.encode()
    if not ZSTD_RANGE[0] <= len(data) <= ZSTD_RANGE[1]:
        return session_id, seq, text, moment, None, None, None
    navigation = compact({"version": 1, "report": {"kind": "canonical"}, "navigation": {}, "reset": {}, "model": {},
                          "modelBytes": len(data), "modelWithoutCheckpointBytes": len(data),
                          "withoutCustomDataBytes": len(data)})
    return session_id, seq, None, moment, compressor.compress(data), len(data), navigation


class OpenClawAgent:
    """The sessions of one agent database, each a window of a session key, reset windows chained."""

    def __init__(self, rng: random.Random, result_words: tuple[int, int]) -> None:
        self.rng, self.result_words = rng, result_words
        self.compressor = zstandard.ZstdCompressor(level=1, write_checksum=True)
        self.last_of_key: dict[str, tuple[str, int]] = {}  # session key -> its current session id, last time
        self.events = self.compressed = 0

    def add_session(self, connection: sqlite3.Connection, number: int) -> int:
        """Write one session's window and events (and its key's node, kept current); its JSON bytes."""
        key = list(OPENCLAW_KEYS)[number % len(OPENCLAW_KEYS)]
        start_ms = (START_S + number * 5400) * 1000
        session_id = f"0198{self.rng.getrandbits(112):028x}"
        session_id = f"{session_id[:8]}-{session_id[8:12]}-7{session_id[13:16]}-8{session_id[17:20]}-{session_id[20:]}"
        events = openclaw_events(self.rng, session_id, start_ms, self.rng.randint(300_000, 2_000_000),
                                 self.result_words)
        end_ms = events[-1]["message"]["timestamp"]
        rows = [openclaw_event_row(session_id, seq, event, start_ms + OPENCLAW_STEP_MS * seq, self.compressor)
                for seq, event in enumerate(events)]
        connection.executemany("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
                               "event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        previous = self.last_of_key.get(key, (None, 0))[0]
        connection.execute("INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, "
                           "created_at, updated_at, started_at, ended_at, status, chat_type, channel, model_provider, "
                           "model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'done', 'direct', ?, 'anthropic', "
                           "'claude-sonnet-4-5')", (session_id, key, previous, "reset" if previous else "initial",
                                                    start_ms, end_ms, start_ms, end_ms, OPENCLAW_KEYS[key]))
        self.last_of_key[key] = (session_id, end_ms)
        self._node(connection, key, start_ms)
        self.events += len(rows)
        self.compressed += sum(1 for row in rows if row[4] is not None)
        return sum(len(row[2]) if row[2] is not None else row[5] for row in rows)

    def _node(self, connection: sqlite3.Connection, key: str, start_ms: int) -> None:
        session_id, end_ms = self.last_of_key[key]
        entry = compact({"sessionId": session_id, "label": key.split(":")[-1], "chatType": "direct",
                         "modelOverride": "claude-sonnet-4-5", "providerOverride": "anthropic",
                         "inputTokens": 41211, "outputTokens": 3120, "totalTokens": 44331, "updatedAt": end_ms})
        connection.execute("INSERT INTO session_nodes (session_key, current_session_id, entry_json, entry_valid, "
                           "updated_at, status, created_at, created_via, created_actor_type, created_actor_id, "
                           "display_name, last_interaction_at) VALUES (?, ?, ?, 1, ?, 'done', ?, 'operator', 'human', "
                           "'profile:alice', ?, ?) ON CONFLICT (session_key) DO UPDATE SET current_session_id = "
                           "excluded.current_session_id, entry_json = excluded.entry_json, updated_at = "
                           "excluded.updated_at, last_interaction_at = excluded.last_interaction_at",
                           (key, session_id, entry, end_ms, start_ms, key.split(":")[-1], end_ms))


def build_openclaw_home(home: Path, megabytes: int, result_words: tuple[int, int], seed: int = 23) -> dict:
    """OpenClaw's per-agent database (agent schema 23, WAL) with sessions of 0.3-2 MB of event JSON."""
    agent = OpenClawAgent(random.Random(seed), result_words)

    def add_session(connection: sqlite3.Connection, number: int) -> int:
        if number == 1:
            connection.execute("INSERT INTO schema_meta VALUES ('agent', 'agent', 23, 'main', '2026.9.6', ?, ?)",
                               (START_S * 1000, START_S * 1000))
        return agent.add_session(connection, number)

    stats = fill_database(home / ".openclaw/agents/main/agent/openclaw-agent.sqlite", OPENCLAW_SCHEMA, megabytes,
                          add_session)
    return {**stats, "events": agent.events, "event_zstd": agent.compressed}


# -- Copilot CLI -------------------------------------------------------------------------------------------------

COPILOT_MODEL = "claude-sonnet-4.5"
COPILOT_OFFSET = "+02:00"  # events carry the local time with its offset
COPILOT_STEP_MS = 700


class CopilotSession:
    """One events.jsonl: a chain of events (``parentId`` the previous one's ``id``) with local times."""

    def __init__(self, rng: random.Random, session_id: str, start_ms: int) -> None:
        self.rng, self.session_id, self.start_ms = rng, session_id, start_ms
        self.lines: list[str] = []
        self.parent: str | None = None
        self.size = 0

    def add(self, kind: str, data: dict) -> None:
        """Append one event of type ``kind``."""
        event_id = uuid4(self.rng)
        moment = self.start_ms + COPILOT_STEP_MS * len(self.lines)
        line = compact({"type": kind, "id": event_id, "timestamp": iso_ms(moment, COPILOT_OFFSET),
                        "parentId": self.parent, "data": data})
        self.lines.append(line)
        self.parent = event_id
        self.size += len(line) + 1

    def tool(self, call: dict, result_words: tuple[int, int]) -> None:
        """A call's permission prompt (shell), start and completion with a result of a few kilobytes."""
        call_id, name = call["toolCallId"], call["name"]
        if name == "bash":
            request = f"perm-{call_id[-8:]}"
            self.add("permission.requested", {"requestId": request, "permissionRequest": {
                "kind": "shell", "toolCallId": call_id, "fullCommandText": call["arguments"]["command"],
                "intention": call["arguments"]["description"], "commands": [{"identifier": "rg", "readOnly": True}],
                "possiblePaths": [], "possibleUrls": [], "hasWriteFileRedirection": False,
                "canOfferSessionApproval": True}})
            self.add("permission.completed", {"requestId": request, "toolCallId": call_id,
                                              "result": {"kind": "approved"}})
        self.add("tool.execution_start", {"toolCallId": call_id, "toolName": name, "arguments": call["arguments"]})
        content = output(self.rng, self.rng.randint(*result_words))
        result = {"content": content + "\n<exited with exit code 0>"} if name == "bash" else {"content": content}
        if name == "edit":
            result = {"content": f"File {call['arguments']['path']} updated with changes.",
                      "detailedContent": f"diff --git a/{call['arguments']['path']}\n" + content}
        self.add("tool.execution_complete", {"toolCallId": call_id, "success": True, "model": COPILOT_MODEL,
                                             "result": result})


def copilot_call(rng: random.Random, step: int) -> dict:
    """A toolRequests entry: bash, view or edit."""
    call_id = f"toolu_{rng.getrandbits(64):016x}"
    name = rng.choice(("bash", "view", "view", "edit"))
    if name == "bash":
        arguments = {"command": f"rg -n {rng.choice(PROSE)} src", "description": prose(rng, 4)}
    elif name == "view":
        arguments = {"path": f"/home/u/p/src/m{step}.py"}
    else:
        arguments = {"path": f"/home/u/p/src/m{step}.py", "old_str": prose(rng, 10), "new_str": prose(rng, 12)}
    return {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}


def copilot_turn(session: CopilotSession, turn: int, result_words: tuple[int, int]) -> None:
    """A prompt, then replies with reasoning and one or two tool calls each, then the final reply."""
    rng = session.rng
    session.add("user.message", {"content": prose(rng, rng.randint(10, 60)), "agentMode": "interactive",
                                 "interactionId": f"ix-{turn}", "attachments": []})
    session.add("assistant.turn_start", {"turnId": str(turn), "interactionId": f"ix-{turn}"})
    for step in range(rng.randint(4, 14)):
        reasoning = prose(rng, rng.randint(20, 80))
        session.add("assistant.reasoning", {"reasoningId": f"rs-{turn}-{step}", "content": reasoning})
        calls = [copilot_call(rng, step) for _ in range(rng.choice((1, 1, 2)))]
        session.add("assistant.message", {"messageId": f"m-{turn}-{step}", "model": COPILOT_MODEL,
                                          "content": prose(rng, rng.randint(8, 40)), "toolRequests": calls,
                                          "reasoningText": reasoning, "turnId": str(turn)})
        for call in calls:
            session.tool(call, result_words)
    session.add("assistant.message", {"messageId": f"m-{turn}-end", "model": COPILOT_MODEL,
                                      "content": prose(rng, 50), "toolRequests": [], "turnId": str(turn)})
    session.add("assistant.turn_end", {"turnId": str(turn)})


def copilot_session(rng: random.Random, number: int, target: int, result_words: tuple[int, int]) -> CopilotSession:
    """A whole session: session.start (project and branch), turns, session.shutdown with its token totals."""
    session = CopilotSession(rng, uuid4(rng), (START_S + number * 5400) * 1000)
    project = f"/home/u/p{number % 20}"
    session.add("session.start", {"sessionId": session.session_id, "version": 1, "producer": "copilot-agent",
                                  "copilotVersion": "1.0.56", "startTime": iso_ms(session.start_ms),
                                  "selectedModel": COPILOT_MODEL, "reasoningEffort": "medium",
                                  "context": {"cwd": project, "gitRoot": project, "repository": "acme/p",
                                              "hostType": "github", "branch": "main", "headCommit": "9f2c1ab"}})
    session.add("system.message", {"content": prose(rng, 400), "role": "system"})
    turn = 0
    while session.size < target:
        copilot_turn(session, turn, result_words)
        turn += 1
    session.add("session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": turn,
                                     "codeChanges": {"linesAdded": 6, "linesRemoved": 4, "filesModified": []},
                                     "modelMetrics": {COPILOT_MODEL: {
                                         "requests": {"count": turn, "cost": turn},
                                         "usage": {"inputTokens": 61000 * turn, "outputTokens": 1900 * turn,
                                                   "cacheReadTokens": 40000 * turn, "cacheWriteTokens": 0}}},
                                     "currentModel": COPILOT_MODEL})
    return session


def build_copilot_home(home: Path, megabytes: int, result_words: tuple[int, int], seed: int = 29) -> dict:
    """Copilot CLI session directories, each an events.jsonl of 0.5-4 MB."""
    rng = random.Random(seed)
    total = files = events = 0
    while total < megabytes * 1_000_000:
        files += 1
        session = copilot_session(rng, files, rng.randint(500_000, 4_000_000), result_words)
        path = home / f".copilot/session-state/{session.session_id}/events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(session.lines) + "\n")
        last = (session.start_ms + COPILOT_STEP_MS * (len(session.lines) - 1)) / 1000
        os.utime(path, (last, last))  # last written with its last event, as the CLI leaves it
        total += session.size
        events += len(session.lines)
    return {"files": files, "bytes": total, "disk_bytes": total, "events": events}
