"""Where an OpenHands file sits: its conversation, whether it is a sub-agent's, its event index.

Layout (software-agent-sdk conversation/persistence_const.py:4-10, conversation/base.py:316-330,
openhands-tools task/manager.py:48,134):

    <conversations>/<conversation uuid hex>/base_state.json
    <conversations>/<conversation uuid hex>/events/event-<index, 5+ digits>-<event id>.json
    <conversations>/<parent hex>/subagents/<sub-agent hex>/{base_state.json, events/...}

A sub-agent's rows belong to its parent's session (the parent started it);
the sub-agent's own id is named in its rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the SDK's own reading of an event file name (persistence_const.EVENT_NAME_RE)
EVENT_NAME = re.compile(r"^event-(?P<idx>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")


@dataclass(frozen=True)
class Conversation:
    """The conversation directory a file belongs to, the session its rows carry, and the sub-agent if any."""

    directory: str  # the conversation's own directory (a sub-agent's directory for its files)
    session_id: str  # the top conversation's id: a sub-agent's rows are its parent's
    subagent: str  # the sub-agent conversation's id, '' for a top conversation


def conversation_of(directory: str) -> Conversation:
    """The conversation of a conversation directory path (``.../<id>`` or ``.../<parent>/subagents/<id>``)."""
    parts = directory.split("/")
    name = parts[-1] if parts else ""
    if len(parts) >= 3 and parts[-2] == "subagents":
        return Conversation(directory, parts[-3], name)
    return Conversation(directory, name, "")


def event_conversation(events_directory: str) -> Conversation:
    """The conversation of an ``events/`` directory (its parent)."""
    parent = events_directory.rsplit("/", 1)[0] if "/" in events_directory else ""
    return conversation_of(parent)


def event_index(name: str) -> int | None:
    """The index in an event file's name (``event-00042-<id>.json`` -> 42); None for another name."""
    match = EVENT_NAME.match(name)
    return int(match.group("idx")) if match else None


def event_id_of(name: str) -> str:
    """The event id in an event file's name ('' for another name)."""
    match = EVENT_NAME.match(name)
    return match.group("event_id") if match else ""


def sort_key(name: str) -> tuple[int, int, str]:
    """Event files in the SDK's order: by index (numerically: 100000 after 99999), unknown names last."""
    index = event_index(name)
    return (0, index, name) if index is not None else (1, 0, name)
