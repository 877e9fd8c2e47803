"""OpenHands files for the parser property tests (names of the cli-conversation fixture, to cut them short)."""

import json

from tests.analyzer.fuzz import FuzzTarget

CONV = ".openhands/conversations/9c1e4b7a2f6d4e8a9b0c1d2e3f4a5b6c"
EVENTS = f"{CONV}/events"
STATE = {("openhands.conversation_state", f"{CONV}/base_state.json"): json.dumps(
    {"id": "9c1e4b7a", "workspace": {"working_dir": "/home/ren/fxdesk"}, "agent": {"llm": {"model": "m"}}}).encode()}
ANSWER = f"{EVENTS}/event-00005-6a3f9b21-4c5d-4e6f-9071-8293a4b5c6d7.json"
SIBLINGS = {**STATE, ("openhands.conversation_events", ANSWER):
            b'{"kind":"ObservationEvent","tool_name":"terminal","tool_call_id":"toolu_01Qz","observation":{}}'}

TARGETS = [
    FuzzTarget("openhands.event.v1", "openhands.conversation_events",
               f"{EVENTS}/event-00004-5f2e8a10-3b4c-4d5e-8f60-718293a4b5c6.json", context=SIBLINGS),
    FuzzTarget("openhands.event.v1", "openhands.subagent_events",
               f"{CONV}/subagents/3f0a9b8c7d6e4f5a8b9c0d1e2f3a4b5c/events/"
               "event-00000-21f5b1ed-0819-4acb-8c3d-4e5f60718293.json"),
    FuzzTarget("openhands.base_state.v1", "openhands.conversation_state", f"{CONV}/base_state.json",
               context={("openhands.conversation_events", f"{EVENTS}/event-00001-4e1d7b09.json"):
                        b'{"kind":"MessageEvent","source":"user","llm_message":{"content":"hi"}}'}),
    FuzzTarget("openhands.prompt_history.v1", "openhands.prompt_history",
               ".openhands/projects/166540a5c337d63c20e6181aea137f875954e8e8b84439616bfd7bd22d8b6471/"
               "prompt_history.json", context=STATE),
    FuzzTarget("openhands.tasks.v1", "openhands.task_list", f"{CONV}/TASKS.json", context=STATE),
]
