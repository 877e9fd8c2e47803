"""grok-dev's JSON side files: workspace trust, background delegations, schedules, the payment log.

* ``workspace-trust.json`` ``{version: 1, workspaces: {<realpath>: {sandboxMode, updatedAt}}}``:
  one ``permission setting: sandboxMode=...`` row per folder, at its updatedAt.
* ``delegations/<project>/<id>.json`` (StoredDelegation): ``delegation:``,
  ``delegation prompt:`` (written by the parent model, not typed) and
  ``delegation result:`` / ``delegation error:`` rows. ``sandboxSettings`` is
  never shown: grok-dev's sandbox settings can carry secrets.
* ``schedules/<id>.json`` (StoredSchedule): one ``task:`` row with its instruction.
* ``payment_log.jsonl`` (PaymentAuditRecord): one ``payment:`` row per attempt.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .values import as_text, json_file


def _at(value, ctx: ParseContext) -> dict:
    moment = ns_from_iso(value)
    return {"timestamp_ns": moment, "timestamp_source": "record"} if moment is not None else file_mtime(ctx)


@json_file("workspace-trust.json")
def parse_workspace_trust(ctx: ParseContext, document: dict) -> Iterator[Draft]:
    """workspace-trust.json: the sandbox mode remembered for each trusted folder."""
    workspaces = document.get("workspaces")
    if not isinstance(workspaces, dict):
        yield bad_record("json:/workspaces", "no workspaces object", as_text(workspaces))
        return
    for folder, entry in workspaces.items():
        locator = pointer("workspaces", folder)
        if not isinstance(entry, dict) or "sandboxMode" not in entry:
            yield bad_record(locator, "trust entry without a sandboxMode", as_text(entry))
            continue
        yield Draft("system", f"permission setting: sandboxMode={setting_value(entry['sandboxMode'])} "
                              f"(from workspace-trust.json, for {folder})", locator, project_path=folder,
                    **_at(entry.get("updatedAt"), ctx))


DELEGATION_FACTS = ("agent", "status", "sandboxMode", "maxToolRounds", "maxTokens", "batchApi", "pid",
                    "completedAt", "notifiedAt", "title", "outputPath")


@json_file("delegation file")
def parse_delegation(ctx: ParseContext, record: dict) -> Iterator[Draft]:
    """delegations/<project>/<id>.json: a background explore run, its prompt and its outcome."""
    columns = {"session_id": as_text(record.get("id")), "project_path": as_text(record.get("cwd")),
               "model": as_text(record.get("model"))}
    started = _at(record.get("startedAt"), ctx)
    facts = ", ".join(f"{key}={as_text(record[key])}" for key in DELEGATION_FACTS if record.get(key) not in (None, ""))
    yield Draft("system", f"delegation: {as_text(record.get('description'))} ({facts})", "file", **columns, **started)
    if isinstance(record.get("prompt"), str):
        yield Draft("system", f"delegation prompt: {record['prompt']}", "json:/prompt", **columns, **started)
    ended = _at(record.get("completedAt"), ctx) if record.get("completedAt") else started
    for key in ("summary", "error"):
        if record.get(key):
            label = "result" if key == "summary" else "error"
            yield Draft("system", f"delegation {label}: {as_text(record[key])}", f"json:/{key}", **columns, **ended)


SCHEDULE_FACTS = ("cron", "enabled", "model", "directory", "maxToolRounds", "lastRunAt", "updatedAt")


@json_file("schedule file")
def parse_schedule(ctx: ParseContext, record: dict) -> Iterator[Draft]:
    """schedules/<id>.json: a scheduled headless run as one ``task:`` row, at its createdAt."""
    facts = " | ".join(f"{key}={as_text(record[key])}" for key in SCHEDULE_FACTS if record.get(key) not in (None, ""))
    text = f"task: schedule {as_text(record.get('name'))} | instruction={as_text(record.get('instruction'))} | {facts}"
    yield Draft("system", text, "file", session_id=as_text(record.get("id")),
                project_path=as_text(record.get("directory")), model=as_text(record.get("model")),
                **_at(record.get("createdAt"), ctx))


def parse_payment_log(ctx: ParseContext) -> Iterator[Draft]:
    """payment_log.jsonl: one ``payment:`` row per payment the agent attempted, blocked ones included."""
    yield from each_line(ctx, _payment_row)


def _payment_row(line: Line) -> Iterator[Draft]:
    record = line.value
    if "status" not in record:
        yield bad_line(line.number, "payment record without a status", line.raw)
        return
    value = {key: as_text(record.get(key)) for key in ("amount", "asset", "chain", "network", "domain", "method",
                                                       "url", "txHash", "id")}
    text = (f"payment: {as_text(record['status'])} {value['amount']} {value['asset']} on "
            f"{value['chain']}/{value['network']} to {value['domain']} ({value['method']} {value['url']}; "
            f"txHash={value['txHash'] or 'none'}; id={value['id']})")
    moment = ns_from_iso(record.get("createdAt"))
    yield Draft("system", text, line.locator, timestamp_ns=moment,
                timestamp_source="record" if moment is not None else "none",
                session_id=as_text(record.get("sessionId")))
