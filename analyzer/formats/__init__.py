"""Shapes several agents share: JSONL files, VS Code state.vscdb, the Cline task
folder, Continue sessions. No agent is named here; parsers pass what differs.
"""
