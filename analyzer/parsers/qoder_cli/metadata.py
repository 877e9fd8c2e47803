"""Qoder's transcript entries that are not conversation: titles, modes, runtime config, token stats, leaves.

Each shape below is written by the transcript store of @qoder-ai/qodercli 1.1.52
(``appendMetadataEntry`` calls in bundle/qodercli.js): ``custom-title
{customTitle}``, ``ai-title {aiTitle}``, ``last-prompt {lastPrompt}``, ``tag
{tag}``, ``mode {mode}``, ``workspace-directories {directories}``,
``runtime-config {model, reasoningEffort, contextWindow, generation,
timestamp}`` and ``token-stats {promptTokenCount, timestamp}`` (both
``timestamp: Date.now()``, Unix **milliseconds**, unlike the ISO times of chain
entries), ``summary {leafUuid, summary}``, ``active-leaf {leafUuid, explicit,
rewound?, compactBoundaryUuid?}``, ``relocated {relocatedCwd}``,
``file-history-snapshot {messageId, snapshot, isSnapshotUpdate}``,
``content-replacement {replacements}``, ``worktree-state {worktreeSession}``.
Any other type is named with its record (``entry <type>: ...``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aitrail.analyzer.formats.idioms import as_list, plain
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import ns_from_ms

ENVELOPE = ("type", "sessionId", "uuid", "parentUuid", "timestamp", "cwd", "version", "gitBranch", "entrypoint",
            "userType", "isSidechain", "agentId")


def compact(value) -> str:
    """A value as compact JSON (strings as they are)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)


def _field(entry: dict, key: str) -> str:
    value = entry.get(key)
    return "" if value is None else compact(value)


def _runtime(entry: dict) -> str:
    facts = [f"{name}={_field(entry, key)}" for key, name in (("reasoningEffort", "reasoning effort"),
                                                              ("contextWindow", "context window"))
             if entry.get(key) is not None]
    generation = entry.get("generation")
    if generation is not None:
        facts.append(f"generation={excerpt(compact(generation), 500)}")
    return f"model: {_field(entry, 'model')} (runtime config" + (f": {', '.join(facts)}" if facts else "") + ")"


def _leaf(entry: dict) -> str:
    facts = [f"explicit={_field(entry, 'explicit')}"] if "explicit" in entry else []
    facts += [f"{key}={_field(entry, key)}" for key in ("rewound", "compactBoundaryUuid") if key in entry]
    return f"active leaf: {_field(entry, 'leafUuid')}" + (f" ({', '.join(facts)})" if facts else "")


def _snapshot(entry: dict) -> str:
    # the snapshot object's own fields are not visible in the writer: only that one was taken is said
    update = " (an update of an earlier snapshot)" if entry.get("isSnapshotUpdate") is True else ""
    return f"file history snapshot: message {_field(entry, 'messageId')}{update}"


# entry type -> its row's text
METADATA: dict[str, Callable[[dict], str]] = {
    "custom-title": lambda entry: f"title: {_field(entry, 'customTitle')} (custom-title)",
    "ai-title": lambda entry: f"title: {_field(entry, 'aiTitle')} (ai-title)",
    "last-prompt": lambda entry: f"last prompt: {_field(entry, 'lastPrompt')}",
    "tag": lambda entry: f"tag: {_field(entry, 'tag')}",
    "mode": lambda entry: f"session mode: {_field(entry, 'mode')}",
    "workspace-directories": lambda entry: f"workspace directories: {compact(as_list(entry.get('directories')))}",
    "runtime-config": _runtime,
    "token-stats": lambda entry: (f"token stats: promptTokenCount={_field(entry, 'promptTokenCount')} (the "
                                  "prompt's size in tokens, not tokens generated)"),
    "summary": lambda entry: f"summary: {_field(entry, 'summary')} (leaf {_field(entry, 'leafUuid')})",
    "active-leaf": _leaf,
    "relocated": lambda entry: f"relocated: the session continues in {_field(entry, 'relocatedCwd')}",
    "file-history-snapshot": _snapshot,
    "content-replacement": lambda entry: (f"content replacement: {len(as_list(entry.get('replacements')))} "
                                          "tool outputs replaced in the model's context"),
    "worktree-state": lambda entry: f"worktree state: {excerpt(compact(entry.get('worktreeSession')), 1000)}",
}
MS_TIMED = frozenset({"runtime-config", "token-stats"})


def metadata_text(kind: str, entry: dict) -> str:
    """The row text of a metadata entry; an unknown type names itself and shows the rest of the record."""
    render = METADATA.get(kind)
    if render is not None:
        return render(entry)
    rest = {key: value for key, value in entry.items() if key not in ENVELOPE}
    return f"entry {excerpt(kind, 80)}: {excerpt(compact(rest), 2000)}"


def metadata_time(kind: str, entry: dict) -> int | None:
    """The entry's own time when it has one: runtime-config and token-stats carry Unix ms."""
    return ns_from_ms(entry.get("timestamp")) if kind in MS_TIMED else None
