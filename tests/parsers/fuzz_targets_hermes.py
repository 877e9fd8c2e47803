"""Hermes Agent files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget
from tests.conftest import FIXTURES

STATE_DB = ".hermes/state.db"
# the history is read beside a state.db of the same home (its prompts are recognised, not repeated)
HOME_DB = {("hermes.state_db", STATE_DB): (FIXTURES / "hermes" / "state-db" / "home" / STATE_DB).read_bytes()}

TARGETS = [
    FuzzTarget("hermes.state_db.v1", "hermes.state_db", STATE_DB),
    FuzzTarget("hermes.session_snapshot.v1", "hermes.session_snapshots",
               ".hermes/sessions/session_20260705_101502_3fa9c1.json"),
    FuzzTarget("hermes.prompt_history.v1", "hermes.prompt_history", ".hermes/.hermes_history", context=HOME_DB),
    FuzzTarget("hermes.config.v1", "hermes.config", ".hermes/config.yaml"),
]
