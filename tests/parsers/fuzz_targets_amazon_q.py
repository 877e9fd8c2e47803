"""Amazon Q Developer CLI files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

DATA = ".local/share/amazon-q"

TARGETS = [
    FuzzTarget("amazon_q.data_db.v1", "amazon-q.data_db", f"{DATA}/data.sqlite3"),
    FuzzTarget("amazon_q.settings.v1", "amazon-q.settings", f"{DATA}/settings.json"),
    FuzzTarget("amazon_q.agent.v1", "amazon-q.agents", ".aws/amazonq/cli-agents/reviewer.json"),
    FuzzTarget("amazon_q.mcp.v1", "amazon-q.mcp", ".aws/amazonq/mcp.json"),
]
