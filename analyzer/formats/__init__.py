"""Shapes several agents share, and the row idioms every agent writes the same way.

JSONL files, VS Code state.vscdb, the Cline task folder, Continue sessions; the
call ledger, file-mtime time, pointer locators, setting values. No agent is
named here; parsers pass what differs.
"""
