"""Builds fixtures/zed/legacy-lmdb's LMDB environment with the real LMDB library (py-lmdb, a test-only tool).

``python -m tests.parsers.zed_lmdb_fixture`` writes
``threads-db.1.mdb/data.mdb`` the way Zed's heed store did: one named database
``threads``, key the bincode ThreadId (u64 little-endian length, then the id),
value the SerializedThread JSON (legacy_thread.rs). The thread documents are
in THREADS below; one holds a tool result longer than a page, so the file has
overflow pages. LMDB's own lock file is not kept (it holds the builder's pid).
"""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
from pathlib import Path

TARGET = (Path(__file__).resolve().parents[2] / "fixtures" / "zed" / "legacy-lmdb" / "home" / ".local" / "share"
          / "zed" / "threads" / "threads-db.1.mdb" / "data.mdb")
LONG_OUTPUT = "\n".join(f"warning: unused variable `x{i}` in src/main.rs:{i}" for i in range(160))

THREADS = {
    "e1e1e1e1-0000-4000-8000-0000000000e1": {
        "version": "0.2.0", "summary": "Port the CLI to clap", "updated_at": "2025-02-10T14:20:00Z",
        "messages": [
            {"id": 0, "role": "user", "segments": [{"type": "text", "text": "Port the argument parsing to clap"}],
             "tool_uses": [], "tool_results": [], "context": "", "creases": [], "is_hidden": False},
            {"id": 1, "role": "assistant", "segments": [{"type": "text", "text": "Building first."}],
             "tool_uses": [{"id": "toolu_l1", "name": "terminal", "input": {"command": "cargo build"}}],
             "tool_results": [{"tool_use_id": "toolu_l1", "is_error": False, "content": LONG_OUTPUT,
                               "output": None}], "context": "", "creases": [], "is_hidden": False},
            {"id": 2, "role": "assistant",
             "segments": [{"type": "text", "text": "The build passes; clap is wired in."}],
             "tool_uses": [], "tool_results": [], "context": "", "creases": [], "is_hidden": False}],
        "initial_project_snapshot": {"worktree_snapshots": [{"worktree_path": "/home/eli/src/cli", "git_state": {
            "remote_url": None, "head_sha": "9daeafb9864cf43055ae93beb0afd6c7d144bfa4", "current_branch": "clap",
            "diff": None}}], "unsaved_buffer_paths": [], "timestamp": "2025-02-10T14:00:00Z"},
        "cumulative_token_usage": {"input_tokens": 2100, "output_tokens": 230},
        "model": {"provider": "anthropic", "model": "claude-3-5-sonnet-latest"}},
    "f2f2f2f2-0000-4000-8000-0000000000f2": {
        "summary": "Migrated chat", "updated_at": "2025-01-05T09:00:00Z",
        "messages": [
            {"id": 0, "role": "user", "text": "Summarise CHANGELOG.md", "tool_uses": [], "tool_results": []},
            {"id": 1, "role": "assistant", "text": "Three releases, all bug fixes.", "tool_uses": [],
             "tool_results": []}]},
}


def key(thread_id: str) -> bytes:
    """The bincode encoding of a ThreadId (a String newtype): u64 little-endian length, then UTF-8."""
    raw = thread_id.encode()
    return struct.pack("<Q", len(raw)) + raw


def build(target: Path = TARGET) -> None:
    """Write the environment's data.mdb at ``target`` (the directory is made)."""
    import lmdb  # test-only: the LMDB C library through py-lmdb

    with tempfile.TemporaryDirectory() as scratch:
        environment = lmdb.open(str(Path(scratch) / "env"), max_dbs=1, map_size=1 << 22)
        threads = environment.open_db(b"threads")
        with environment.begin(write=True) as txn:
            for thread_id, document in THREADS.items():
                txn.put(key(thread_id), json.dumps(document, separators=(",", ":")).encode(), db=threads)
        environment.close()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(scratch) / "env" / "data.mdb", target)


if __name__ == "__main__":
    build()
