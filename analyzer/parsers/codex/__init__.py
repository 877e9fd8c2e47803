"""OpenAI Codex CLI: rollouts of every format generation, prompt history, thread index, permission state.

The row rules are those of docs/agents/codex.md:

* rollouts (``sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl[.zst]``,
  ``archived_sessions/``, the flat untagged files and the TypeScript CLI's
  ``rollout-<date>-<id>.json``): one row per item, calls joined to results by
  ``call_id``, the prompt/reply/reasoning recorded twice kept once
  (rollout.py, items.py);
* ``history.jsonl`` / ``history.json`` (secondary), ``session_index.jsonl`` and
  ``state_5.sqlite`` (secondary): prompts and threads, a ``session:`` row for a
  thread whose rollout is not in the bundle (index.py);
* ``config.toml``, ``requirements.toml`` and ``rules/*.rules``: ``permission
  setting:`` and ``model:`` rows (config.py).

Sample records::

    {"timestamp":"2026-07-02T09:14:05.243Z","type":"response_item","payload":{"type":"message","role":"user",...}}
    {"session":{"timestamp":"2025-05-02T10:41:07.512Z","id":"8f0c1a2b-...","instructions":""},"items":[...]}
    {"session_id":"01981c3a-...","ts":1782983645,"text":"The login endpoint times out under load."}

References: openai/codex@ed6e5cf919 codex-rs/protocol/src/protocol.rs:2825-2833,2975-2980,
codex-rs/rollout/src/recorder.rs:1360-1391; openai/codex@75febbdefa codex-cli/src/utils/storage/save-rollout.ts:9-42;
openai/codex@5c48600bb3 codex-rs/core/src/rollout/recorder.rs:36-60 (research/formats-cli-agents.md section 2).
"""

from .config import parse_config, parse_requirements, parse_rules
from .index import parse_history, parse_history_legacy_json, parse_session_index, parse_state_db
from .rollout import parse_rollout, parse_rollout_legacy_json, parse_rollout_untagged

PARSERS = tuple((parser_id, parse) for parser_id, parse in (
    ("codex.rollout.v1", parse_rollout),
    ("codex.rollout_untagged.v1", parse_rollout_untagged),
    ("codex.rollout_legacy_json.v1", parse_rollout_legacy_json),
    ("codex.history.v1", parse_history),
    ("codex.history_legacy_json.v1", parse_history_legacy_json),
    ("codex.session_index.v1", parse_session_index),
    ("codex.state_db.v1", parse_state_db),
    ("codex.config.v1", parse_config),
    ("codex.requirements.v1", parse_requirements),
    ("codex.rules.v1", parse_rules),
))

# The prompt histories, the session index and the state database's threads name sessions; rollouts hold them.
_ROLLOUTS = ("codex.rollout.v1", "codex.rollout_untagged.v1", "codex.rollout_legacy_json.v1")
SESSIONS_NAMED = tuple((naming, _ROLLOUTS) for naming in (
    "codex.history.v1", "codex.history_legacy_json.v1", "codex.session_index.v1", "codex.state_db.v1"))
