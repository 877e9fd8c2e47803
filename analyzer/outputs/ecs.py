"""``--format ecs``: the timeline as an OpenSearch / Elasticsearch bulk body with ECS field names.

Each row is two NDJSON lines, an action and a document, each ending with a
newline (the last included), as the bulk API reads them
(``POST /<index or data stream>/_bulk``, ``Content-Type: application/x-ndjson``):

* the action is ``{"create": {"_id": ...}}``: ``create`` is what a data
  stream takes, and on an index it makes a second ingest of the same bundle
  a conflict per row, never a duplicate. ``_id`` is the SHA-256 of the
  bundle's digest and the row's ``event_id`` (64 hex digits): the same row of
  the same bundle always has the same id, and two hosts whose files are
  byte-identical (whose rows share an event_id) still get two documents.
* the document follows the Elastic Common Schema: ``@timestamp`` (a row with
  no time of its own, or one outside what the Timesketch export can hold,
  gets the collection's start and a tag, as in the Timesketch export),
  ``message``, ``event.*`` (``kind`` event, ``module`` aitrail, ``dataset``
  ``aitrail.<agent>``, ``provider`` the agent, ``action`` what happened,
  ``id`` the event_id), ``gen_ai.*`` for the agent (its name, the model,
  the tool and its call id: **never** ECS ``agent.*``, which names the
  shipper, such as Beats or Elastic Agent), ``host.name``,
  ``labels.case_id``, ``log.file.path`` (the bundle member the row came
  from: provenance stays out of ``file.*``, which describes the subject of
  an event), ``tags``, and everything else of the row under ``aitrail.*``
  (session, project, branch, turn type, the whole text, store, source digest,
  locator, timestamp source, origin, bundle digest, the row's own time).

Empty values are left out. ``gen_ai`` is a beta field set of ECS
(``elastic/ecs@065887c schemas/gen_ai.yml``); tests/analyzer/test_ecs.py
pins the fields used here with their ECS types.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from aitrail.analyzer.outputs import timesketch
from aitrail.analyzer.view.rows import COLUMNS

_INDEX = {name: COLUMNS.index(name) for name in COLUMNS}


def document_id(bundle_sha256: str, event_id: str) -> str:
    """The bulk ``_id`` of a row: SHA-256 over the bundle's digest and the row's event_id."""
    return hashlib.sha256(f"{bundle_sha256}\0{event_id}".encode()).hexdigest()


def action_name(description: str) -> str:
    """``event.action`` from a Timesketch description: ``Tool call (session time)`` -> ``tool-call``."""
    return description.split(" (", 1)[0].strip().lower().replace(" ", "-").replace("'", "")


def document(row: tuple, context: dict) -> dict:
    """The ECS document of one timeline row (empty values left out)."""
    value = row.__getitem__
    event = timesketch.event(row, context)
    agent = value(_INDEX["agent"])
    doc: dict = {
        "@timestamp": event["datetime"],
        "message": event["message"],
        "event": _clean({"kind": "event", "module": "aitrail", "dataset": f"aitrail.{agent.replace('-', '_')}",
                         "provider": agent, "action": action_name(event["timestamp_desc"]),
                         "id": value(_INDEX["event_id"])}),
        "gen_ai": _clean({"agent": {"name": agent}, "request": _clean({"model": value(_INDEX["model"])}),
                          "tool": _clean({"name": value(_INDEX["tool_name"]),
                                          "call": _clean({"id": value(_INDEX["tool_use_id"])})})}),
        "host": _clean({"name": context.get("hostname", "")}),
        "labels": _clean({"case_id": context.get("case_id", "")}),
        "log": {"file": {"path": value(_INDEX["source"])}},
        "tags": event["tag"],
        "aitrail": _clean({
            "timestamp_utc": value(_INDEX["timestamp_utc"]), "timestamp_source": value(_INDEX["timestamp_source"]),
            "session_id": value(_INDEX["session_id"]), "project_path": value(_INDEX["project_path"]),
            "git_branch": value(_INDEX["git_branch"]), "turn_type": value(_INDEX["turn_type"]),
            "text": value(_INDEX["text"]), "store": value(_INDEX["store"]),
            "source_sha256": value(_INDEX["source_sha256"]), "locator": value(_INDEX["locator"]),
            "origin": value(_INDEX["origin"]), "bundle_sha256": context.get("bundle_sha256", ""),
            "data_type": event["data_type"],
        }),
    }
    return {key: item for key, item in doc.items() if item not in ({}, [], "")}


def _clean(fields: dict) -> dict:
    """``fields`` without empty strings and empty objects."""
    return {key: item for key, item in fields.items() if item not in ("", {}, None)}


def renderer(context: dict) -> Callable[[tuple], str]:
    """Rows as bulk action and document pairs."""
    bundle = context.get("bundle_sha256", "")

    def render(row: tuple) -> str:
        action = {"create": {"_id": document_id(bundle, row[_INDEX["event_id"]])}}
        return (json.dumps(action, separators=(",", ":")) + "\n"
                + json.dumps(document(row, context), ensure_ascii=False, separators=(",", ":")) + "\n")

    return render
