"""Codex files for the parser property tests: one target per parser id, and per file form it branches on."""

from tests.analyzer.fuzz import FuzzTarget

THREAD = "0198e2a4-7b1c-7d3e-8f40-5a6b7c8d9e01"
DATED = f".codex/sessions/2026/07/02/rollout-2026-07-02T11-14-05-{THREAD}.jsonl"
# session_index and the state database look for rollouts in the bundle by thread id
ROLLOUT = {("codex.rollouts", DATED): b'{"timestamp":"2026-07-02T09:14:05.201Z","type":"session_meta","payload":{}}\n'}

TARGETS = [
    FuzzTarget("codex.rollout.v1", "codex.rollouts", DATED, jsonl=True),
    # compressed: random bytes are not zstd, so only the whole-file rule applies
    FuzzTarget("codex.rollout.v1", "codex.rollouts_compressed", DATED + ".zst"),
    FuzzTarget("codex.rollout_untagged.v1", "codex.rollouts_untagged_flat",
               ".codex/sessions/rollout-2025-07-10T09-30-00-3f1c2a4b-6d7e-4f80-9a1b-2c3d4e5f6a7b.jsonl", jsonl=True),
    FuzzTarget("codex.rollout_legacy_json.v1", "codex.rollouts_legacy_json",
               ".codex/sessions/rollout-2025-05-02-8f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.json"),
    FuzzTarget("codex.history.v1", "codex.history", ".codex/history.jsonl", jsonl=True),
    FuzzTarget("codex.history_legacy_json.v1", "codex.history_legacy_json", ".codex/history.json"),
    FuzzTarget("codex.session_index.v1", "codex.session_index", ".codex/session_index.jsonl", jsonl=True,
               context=ROLLOUT),
    FuzzTarget("codex.state_db.v1", "codex.state_db", ".codex/state_5.sqlite", context=ROLLOUT),
    FuzzTarget("codex.config.v1", "codex.config", ".codex/config.toml"),
    FuzzTarget("codex.requirements.v1", "codex.system_requirements", "etc/codex/requirements.toml"),
    # Starlark, not JSONL: a call may span lines and comment lines hold no record
    FuzzTarget("codex.rules.v1", "codex.rules", ".codex/rules/default.rules"),
]
