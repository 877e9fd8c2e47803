"""Kilo CLI files for the parser property tests: one target per parser id."""

from tests.analyzer.fuzz import FuzzTarget

DATA = ".local/share/kilo"
STATE = ".local/state/kilo"

TARGETS = [
    FuzzTarget("kilo_cli.db.v1", "kilo-cli.kilo_db", f"{DATA}/kilo.db"),
    FuzzTarget("kilo_cli.prompt_history.v1", "kilo-cli.prompt_history", f"{STATE}/prompt-history.jsonl", jsonl=True),
    FuzzTarget("kilo_cli.prompt_stash.v1", "kilo-cli.prompt_stash", f"{STATE}/prompt-stash.jsonl", jsonl=True),
    FuzzTarget("kilo_cli.model_state.v1", "kilo-cli.model_state", f"{STATE}/model.json"),
    FuzzTarget("kilo_cli.config.v1", "kilo-cli.global_config", ".config/kilo/kilo.jsonc"),
    FuzzTarget("kilo_cli.plan.v1", "kilo-cli.plans", f"{DATA}/plans/1783328600000-swift-crane.md"),
]
