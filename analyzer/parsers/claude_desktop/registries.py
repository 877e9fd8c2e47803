"""Cowork's space and artifact registries, and the staged uploads of pending-uploads/.

* ``spaces.json`` and ``artifacts.json`` ([obs]: one community analysis note and
  a community test fixture name the entries' fields, not the container): the
  entries are read wherever they are, as the objects with an ``id`` found in a
  top-level array or in an array or object under a top-level key. A space gives
  ``space: <name> (id=…, folders=[…], …)`` with its first folder as the project;
  an artifact ``artifact: <name> (id=…, createdBySessionId=…, …)`` in the
  session that created it, at its ``createdAt`` when that is an epoch-ms number.
  Other rows are at the file's mtime. Entries outlive the sessions they name.
* ``pending-uploads/<uuid>-<epoch_ms>_<original name>`` ([obs] IRFlow): a file
  staged for upload. Only the file NAME is read: ``pending upload: <original
  name> (staged <time>, <size> bytes, upload <uuid>; content not read)``, timed
  by the name's epoch ms. The content is the user's document: it stays in the
  bundle as evidence and never reaches a row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer
from aitrail.analyzer.formats.json_values import document_or_row, label
from aitrail.analyzer.formats.text import bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms

from .values import facts, first_string, ms_time, read_record, transcript_ids, uuid_text

SPACE_FACTS = ("id", "folders", "projects", "createdAt", "updatedAt", "memoryEnabled")
ARTIFACT_FACTS = ("id", "type", "kind", "path", "createdBySessionId", "lastModifiedBySessionId", "createdAt",
                  "updatedAt", "spaceId")
MAX_ENTRIES = 10_000
_UPLOAD = re.compile(r"^([0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})-([0-9]{13})_(.+)$", re.DOTALL)


def _entries(document) -> Iterator[tuple[tuple, dict]]:
    """(JSON pointer parts, object) of every registry entry: objects with an ``id``, one level into the document."""
    containers: list[tuple[tuple, object]] = [((), document)]
    if isinstance(document, dict):
        containers += [((key,), value) for key, value in document.items() if isinstance(value, (list, dict))]
    given = 0
    for where, container in containers:
        items = enumerate(container) if isinstance(container, list) else \
            container.items() if isinstance(container, dict) and where else ()
        for key, item in items:
            if isinstance(item, dict) and "id" in item and given < MAX_ENTRIES:
                given += 1
                yield (*where, key), item


def parse_spaces(ctx: ParseContext) -> Iterator[Draft]:
    """spaces.json: one ``space:`` row per space, its first folder as the project."""
    document = yield from document_or_row(json_document(ctx.data, ctx.source.name, kind=object))
    if document is None:
        return
    found = False
    for where, space in _entries(document):
        found = True
        name = excerpt(space["name"], 300) if isinstance(space.get("name"), str) else ""
        folder = first_string(space.get("folders"))
        yield Draft("system", f"space: {name} ({facts(space, SPACE_FACTS)}; from {ctx.source.name})",
                    pointer(*where), project_path=folder, **file_mtime(ctx))
    if not found:
        yield bad_record("json:/", "no space entries (objects with an id) found")


def parse_artifacts(ctx: ParseContext) -> Iterator[Draft]:
    """artifacts.json: one ``artifact:`` row per entry, in the session that created it."""
    document = yield from document_or_row(json_document(ctx.data, ctx.source.name, kind=object))
    if document is None:
        return
    found = False
    for where, artifact in _entries(document):
        found = True
        name = excerpt(artifact["name"], 300) if isinstance(artifact.get("name"), str) else ""
        created = ms_time(artifact.get("createdAt"))
        when = {"timestamp_ns": created, "timestamp_source": "record"} if created else file_mtime(ctx)
        yield Draft("system", f"artifact: {name} ({facts(artifact, ARTIFACT_FACTS)}; from {ctx.source.name})",
                    pointer(*where), session_id=_session_of(ctx, label(artifact.get("createdBySessionId"))), **when)
    if not found:
        yield bad_record("json:/", "no artifact entries (objects with an id) found")


def _session_of(ctx: ParseContext, desktop: str) -> str:
    """The Claude Code session id of Cowork session ``local_<uuid>`` (its record beside the registry), else the name."""
    record_source = ctx.sibling(f"{desktop}.json", "cowork_sessions") if desktop.startswith("local_") else None
    record = read_record(ctx, record_source) if record_source is not None else None
    ids = transcript_ids(record) if record is not None else []
    return ids[0][1] if ids else desktop


def parse_pending_upload(ctx: ParseContext) -> Iterator[Draft]:
    """A staged upload: its name, staging time and size; the file's content is never read."""
    name = ctx.source.name
    match = _UPLOAD.match(name)
    if match is None:
        yield Draft("system", f"pending upload: {excerpt(name, 300)} ({ctx.source.size} bytes; the name is not "
                    "<uuid>-<epoch ms>_<original name>, so it is timed by the file's mtime; content not read)",
                    "file", **file_mtime(ctx))
        return
    upload, stamp, original = match.groups()
    ns = ns_from_ms(int(stamp))
    when = {"timestamp_ns": ns, "timestamp_source": "record"} if ns else file_mtime(ctx)
    staged = format_timestamp(ns) if ns else f"epoch ms {stamp}"
    yield Draft("system", f"pending upload: {excerpt(original, 300)} (staged {staged}, {ctx.source.size} bytes, "
                f"upload {uuid_text(upload)}; content not read)", "file", **when)
