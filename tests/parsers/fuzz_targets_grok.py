"""Grok files (Grok Build and grok-dev) for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

PROJECT = ".grok/sessions/%2Fhome%2Falice%2Fsrc%2Facme-api"
SESSION = f"{PROJECT}/01981c3a-6a10-7b22-9c33-4d445e556f60"
CHAT = {("grok.chat_history", f"{SESSION}/chat_history.jsonl"): b'{"type":"user","content":"hi"}\n'}

TARGETS = [
    FuzzTarget("grok.chat_history.v1", "grok.chat_history", f"{SESSION}/chat_history.jsonl", jsonl=True),
    FuzzTarget("grok.prompt_history.v1", "grok.prompt_history", f"{PROJECT}/prompt_history.jsonl", jsonl=True),
    FuzzTarget("grok.session_search.v1", "grok.session_search", ".grok/sessions/session_search.sqlite",
               context=CHAT),
    FuzzTarget("grok.session_summary.v1", "grok.session_summary", f"{SESSION}/summary.json"),
    FuzzTarget("grok.subagent_meta.v1", "grok.subagents", f"{SESSION}/subagents/explore-1/meta.json"),
    FuzzTarget("grok.plan.v1", "grok.plans", f"{SESSION}/plan.md"),
    FuzzTarget("grok.hunk_records.v1", "grok.hunk_records", f"{SESSION}/hunk_records.jsonl", jsonl=True),
    FuzzTarget("grok.dev_db.v1", "grok.dev_db", ".grok/grok.db"),
    FuzzTarget("grok.dev_workspace_trust.v1", "grok.dev_workspace_trust", ".grok/workspace-trust.json"),
    FuzzTarget("grok.dev_delegation.v1", "grok.dev_delegations", ".grok/delegations/acme-api-3c1f9e02ab/a.json"),
    FuzzTarget("grok.dev_schedule.v1", "grok.dev_schedules", ".grok/schedules/nightly.json"),
    FuzzTarget("grok.dev_payment_log.v1", "grok.dev_payment_log", ".grok/payment_log.jsonl", jsonl=True),
]
