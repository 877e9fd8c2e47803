r"""OpenHands CLI (OpenHands/OpenHands-CLI, PyPI ``openhands``), which keeps conversations through the SDK.

The row rules are those of docs/agents/openhands.md.

* ``conversations/<uuid hex>/events/event-<index>-<event id>.json`` (and a
  sub-agent's under ``subagents/<uuid hex>/``): one pydantic Event per file,
  tagged by ``kind``; messages, calls (``ActionEvent``) joined to their
  results (``ObservationEvent``, ``UserRejectObservation``,
  ``AgentErrorEvent``) by ``tool_call_id`` across files (facts.py reads the
  conversation once per worker), control events (events.py, system_events.py).
  ``timestamp`` is local time without an offset: never given a zone; rows are
  timed by each event file's mtime.
* ``conversations/<id>/base_state.json``: session, current model, confirmation
  policy, token and cost totals (state.py).
* ``projects/<sha256(work dir)>/prompt_history.json`` (secondary) and
  ``conversations/<id>/TASKS.json`` (secondary) (history.py).
* ``agent_settings.json`` (the LLM key in plain text) and
  ``cloud/api_key.txt`` are never collected.

Sample record (an ``ActionEvent`` file)::

    {"kind":"ActionEvent","id":"5f2e8a10-...","timestamp":"2026-05-03T14:22:09.481223","source":"agent",
     "thought":[{"type":"text","text":"Run the failing test first."}],"action":{"kind":"TerminalAction",...},
     "tool_name":"terminal","tool_call_id":"toolu_01Qz","tool_call":{"id":"toolu_01Qz","name":"terminal",
     "arguments":"{\"command\": \"pytest -q\"}","origin":"completion"},"llm_response_id":"resp_8c2d"}

References: OpenHands/OpenHands-CLI@6b3838ce9083857d54c8be6e4e67e8fae82db11c openhands_cli/locations.py:5-55,
openhands_cli/stores/prompt_history.py:19-95, openhands_cli/conversations/store/local.py:114-160,
openhands_cli/setup.py:140-160; OpenHands/software-agent-sdk@611629e6999ad398dc49c761721eefe18d5e6bd9
openhands-sdk/openhands/sdk/conversation/persistence_const.py:4-10, conversation/event_store.py:184-224,
conversation/state.py:82-230,421-440, event/base.py:20-40, event/llm_convertible/{message.py:25-60,
action.py:24-80, observation.py:17-150, system.py:12-35}, event/condenser.py:11-37,
tool/schema.py:363-423, security/confirmation_policy.py:27-58, llm/utils/metrics.py:8-130,
openhands-tools/openhands/tools/task_tracker/definition.py:29-80,251-265; research/formats-more-cli-agents.md
section 8.
"""

from .events import parse_event
from .history import parse_prompt_history, parse_tasks
from .state import parse_base_state

PARSERS = (
    ("openhands.event.v1", parse_event),
    ("openhands.base_state.v1", parse_base_state),
    ("openhands.prompt_history.v1", parse_prompt_history),
    ("openhands.tasks.v1", parse_tasks),
)
