"""One Zed thread document (any generation) as rows: the session, model, project snapshot, messages and tokens.

[src] zed-industries/zed ``crates/agent/src/db.rs`` (``DbThread``, version
"0.3.0", ``SharedThread``) and ``crates/agent/src/legacy_thread.rs``
(``SerializedThread`` "0.2.0" / "0.1.0", ``LegacySerializedThread`` with no
version); ``ProjectSnapshot {worktree_snapshots[{worktree_path, git_state
{remote_url, head_sha, current_branch, diff}}], unsaved_buffer_paths,
timestamp}``. A message has no time of its own in any generation: its rows
carry the thread's time (``Thread.time_ns``, ``timestamp_source`` index) and
a locator that orders them; the snapshot has its own ``timestamp``.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .messages import message_rows
from .values import Thread, model_id, token_facts, without_userinfo

DIFF_CHARS = 256 * 1024  # of one worktree's diff in its row; the whole diff stays in the thread's JSON
SESSION_FACTS = ("profile", "imported", "thinking_enabled", "thinking_effort", "speed", "completion_mode",
                 "tool_use_limit_reached", "sandboxed_terminal_temp_dir")


def prepare(thread: Thread, document: dict, folder_paths: list[str]) -> None:
    """Fill the thread's model, branch and project from the document (the project from ``folder_paths`` first)."""
    thread.model = model_id(document.get("model"))[1]
    worktrees = _worktrees(document)
    thread.git_branch = next((label(_git(tree).get("current_branch")) for tree in worktrees
                              if label(_git(tree).get("current_branch"))), "")
    first_tree = next((label(tree.get("worktree_path")) for tree in worktrees if label(tree.get("worktree_path"))), "")
    thread.project_path = folder_paths[0] if folder_paths else first_tree


def thread_rows(thread: Thread, document: dict, facts: list[str], session_time: int | None,
                updated_time: int | None) -> Iterator[Draft]:
    """Every row of the thread: ``session:`` (at ``session_time``, its own), then the rest.

    ``facts`` are the row's own columns already written as ``key=value``.
    """
    title = as_text(document.get("title", document.get("summary")))
    version = as_text(document.get("version")) or "none (the oldest shape)"
    own = [f"{key}={as_text(document[key])}" for key in SESSION_FACTS if document.get(key) not in (None, "", False)]
    text = f"session: {title} (version={version}" + "".join(f", {fact}" for fact in [*facts, *own]) + ")"
    yield thread.row("system", text, thread.locator, timestamp_ns=session_time,
                     timestamp_source="record" if session_time else "none")
    yield from _subagent(thread, document)
    yield from _model(thread, document, updated_time)
    yield from _snapshot(thread, document)
    yield from _summary(thread, document)
    yield from _draft(thread, document)
    ledger = BoundedLedger()
    tokens = _request_tokens(thread, document)
    yield from message_rows(thread, document.get("messages"), ledger, tokens)
    messages = document.get("messages")
    for index in sorted(tokens):  # a request whose message is not in the thread (any more)
        if not isinstance(messages, list) or index >= len(messages):
            yield from tokens[index]
    if isinstance(document.get("cumulative_token_usage"), dict):
        yield thread.row("system", f"tokens generated: model={thread.model} "
                         f"{token_facts(document['cumulative_token_usage'])} (cumulative for the thread)",
                         thread.at("cumulative_token_usage"))
    yield from ledger.orphans()
    yield from ledger.over_limit_rows()


def _subagent(thread: Thread, document: dict) -> Iterator[Draft]:
    context = document.get("subagent_context")
    if isinstance(context, dict):
        parent = context.get("parent_thread_id")
        yield thread.row("system", f"subagent: this thread was started by thread {as_text(parent)} "
                         f"({compact(context)[:300]})", thread.at("subagent_context"))


def _model(thread: Thread, document: dict, updated_time: int | None) -> Iterator[Draft]:
    provider, name = model_id(document.get("model"))
    if name:
        yield thread.row("system", f"model: {name} (provider {provider}; the thread's model when it was last saved)",
                         thread.at("model"), timestamp_ns=updated_time,
                         timestamp_source="record" if updated_time else "none")


def _worktrees(document: dict) -> list[dict]:
    snapshot = document.get("initial_project_snapshot")
    trees = snapshot.get("worktree_snapshots") if isinstance(snapshot, dict) else None
    return [tree for tree in trees if isinstance(tree, dict)] if isinstance(trees, list) else []


def _git(tree: dict) -> dict:
    state = tree.get("git_state")
    return state if isinstance(state, dict) else {}


def _snapshot(thread: Thread, document: dict) -> Iterator[Draft]:
    snapshot = document.get("initial_project_snapshot")
    if not isinstance(snapshot, dict):
        return
    when = ns_from_iso(snapshot.get("timestamp"))
    timed = {"timestamp_ns": when, "timestamp_source": "record"} if when else {}
    unsaved = snapshot.get("unsaved_buffer_paths")
    unsaved_text = ", ".join(as_text(path) for path in unsaved) if isinstance(unsaved, list) else ""
    for index, tree in enumerate(_worktrees(document)):
        git = _git(tree)
        facts = [f"{key}={as_text(git[key])}" for key in ("current_branch", "head_sha") if git.get(key)]
        if git.get("remote_url"):
            facts.append(f"remote_url={without_userinfo(git['remote_url'])}")
        if unsaved_text and index == 0:
            facts.append(f"unsaved buffers: {unsaved_text}")
        where = ("initial_project_snapshot", "worktree_snapshots", index)
        yield thread.row("system", f"project snapshot: {as_text(tree.get('worktree_path'))} ({'; '.join(facts)})",
                         thread.at(*where), **timed)
        diff = git.get("diff")
        if isinstance(diff, str) and diff:
            yield thread.row("system", _diff_text(as_text(tree.get("worktree_path")), diff),
                             thread.at(*where, "git_state", "diff"), **timed)


def _diff_text(path: str, diff: str) -> str:
    head = f"project snapshot diff: {path} ({len(diff)} characters"
    if len(diff) <= DIFF_CHARS:
        return f"{head}):\n{diff}"
    return f"{head}; the first {DIFF_CHARS} shown, the rest is in the thread's JSON):\n{diff[:DIFF_CHARS]}"


def _summary(thread: Thread, document: dict) -> Iterator[Draft]:
    summary = document.get("detailed_summary")
    state = document.get("detailed_summary_state")
    if not isinstance(summary, str) and isinstance(state, dict) and isinstance(state.get("Generated"), dict):
        summary = state["Generated"].get("text")
    if isinstance(summary, str) and summary:
        yield thread.row("system", f"summary: {summary}", thread.at("detailed_summary" if "detailed_summary"
                                                                    in document else "detailed_summary_state"))


def _draft(thread: Thread, document: dict) -> Iterator[Draft]:
    draft = document.get("draft_prompt")
    if isinstance(draft, list) and draft:
        parts = [block["text"] if isinstance(block, dict) and isinstance(block.get("text"), str) else compact(block)
                 for block in draft]
        yield thread.row("system", f"draft prompt (typed, not sent): {chr(10).join(parts)}", thread.at("draft_prompt"))


def _request_tokens(thread: Thread, document: dict) -> dict[int, list[Draft]]:
    """``tokens generated:`` rows by the index of the message they follow.

    0.3.0 keys each request's usage by the id of the user message that made it;
    0.2.0 keeps a list aligned with the messages (the upgrade reads index i).
    """
    usage = document.get("request_token_usage")
    messages = document.get("messages") if isinstance(document.get("messages"), list) else []
    found: dict[int, list[Draft]] = {}
    if isinstance(usage, dict):
        index_of = {message["User"].get("id"): index for index, message in enumerate(messages)
                    if isinstance(message, dict) and isinstance(message.get("User"), dict)
                    and isinstance(message["User"].get("id"), str)}
        for key, value in usage.items():
            text = f"tokens generated: model={thread.model} {token_facts(value)} (request of user message {key})"
            found.setdefault(index_of.get(key, len(messages)), []).append(
                thread.row("system", text, thread.at("request_token_usage", key)))
    elif isinstance(usage, list):
        for index, value in enumerate(usage):
            if isinstance(value, dict) and any(value.values()):
                text = f"tokens generated: model={thread.model} {token_facts(value)} (request at message {index})"
                found.setdefault(index, []).append(thread.row("system", text, thread.at("request_token_usage", index)))
    return found
