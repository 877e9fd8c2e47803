"""Kimi CLI files for the parser property tests (names of the fixtures, so they can be cut short)."""

import json

from tests.analyzer.fuzz import FuzzTarget

BUCKET = "903ad2b29b7162b4d9cddec5f68d1c1a"
SDIR = f".kimi/sessions/{BUCKET}/6b1f0e2a-9c4d-4e8f-a1b2-c3d4e5f60718"
INDEX = {("kimi-cli.work_dirs", ".kimi/kimi.json"): json.dumps(
    {"work_dirs": [{"path": "/home/ren/shop", "kaos": "local"}]}).encode()}
STATE = {("kimi-cli.session_state", f"{SDIR}/state.json"): b'{"plan_slug": "silver-surfer"}', **INDEX}
TASK = f"{SDIR}/tasks/b-5e1a"

TARGETS = [
    FuzzTarget("kimi_cli.wire.v1", "kimi-cli.wire", f"{SDIR}/wire.jsonl", jsonl=True, context=INDEX),
    FuzzTarget("kimi_cli.wire.v1", "kimi-cli.subagent_wire", f"{SDIR}/subagents/agent-7f3c/wire.jsonl", jsonl=True,
               context=INDEX),
    FuzzTarget("kimi_cli.context.v1", "kimi-cli.context", f"{SDIR}/context.jsonl", jsonl=True, context=INDEX),
    FuzzTarget("kimi_cli.context.v1", "kimi-cli.legacy_context",
               f".kimi/sessions/{BUCKET}/11111111-2222-4333-8444-555555555555.jsonl", jsonl=True, context=INDEX),
    FuzzTarget("kimi_cli.work_dirs.v1", "kimi-cli.work_dirs", ".kimi/kimi.json"),
    FuzzTarget("kimi_cli.session_state.v1", "kimi-cli.session_state", f"{SDIR}/state.json", context=INDEX),
    FuzzTarget("kimi_cli.session_state.v1", "kimi-cli.session_state", f"{SDIR}/metadata.json", context=INDEX),
    FuzzTarget("kimi_cli.subagent_meta.v1", "kimi-cli.subagent_meta", f"{SDIR}/subagents/agent-7f3c/meta.json",
               context=INDEX),
    FuzzTarget("kimi_cli.background_task.v1", "kimi-cli.background_tasks", f"{TASK}/spec.json", context=INDEX),
    FuzzTarget("kimi_cli.background_task.v1", "kimi-cli.background_tasks", f"{TASK}/runtime.json",
               context={("kimi-cli.background_tasks", f"{TASK}/spec.json"): b'{"tool_call_id": "Shell:1"}', **INDEX}),
    FuzzTarget("kimi_cli.user_history.v1", "kimi-cli.user_history", f".kimi/user-history/{BUCKET}.jsonl",
               jsonl=True, context=INDEX),
    FuzzTarget("kimi_cli.plan.v1", "kimi-cli.plans", ".kimi/plans/silver-surfer.md", context=STATE),
]
