"""The Continue CLI's (cn) own files in ~/.continue: input_history.json and permissions.yaml."""

from __future__ import annotations

import json
from collections.abc import Iterator

import yaml

from aitrail.analyzer.formats.idioms import file_mtime, pointer, setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import bounded
from aitrail.analyzer.view.rows import Draft, ns_from_ms

POLICIES = ("allow", "ask", "exclude")  # the only keys cn accepts (permissionsYamlLoader.ts)


def parse_input_history(ctx: ParseContext) -> Iterator[Draft]:
    """input_history.json: one ``user`` row per prompt typed into cn, at its ``timestamp`` (ms).

    The file is newest first (cn puts each prompt at the front and drops an earlier
    copy of the same text), so a prompt shows once, at the last time it was typed.
    """
    entries, problem = json_document(ctx.data, "input history", kind=list)
    if problem is not None:
        yield problem
        return
    for position, entry in enumerate(entries):
        locator = pointer(position)
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            yield bad_record(locator, "history entry without a text", json.dumps(entry)[:1000])
            continue
        moment = ns_from_ms(entry.get("timestamp"))
        yield Draft("user", entry["text"], f"{locator}/text", timestamp_ns=moment,
                    timestamp_source="record" if moment is not None else "none")


def parse_permissions(ctx: ParseContext) -> Iterator[Draft]:
    """permissions.yaml: one ``permission setting: <policy>=<pattern>`` row per tool pattern, at the file's mtime.

    ``allow`` runs a tool without asking, ``ask`` asks first, ``exclude`` hides the
    tool from the model. A key cn does not accept, or a pattern that is not text, is
    a ``parser:`` row (cn then ignores the whole file: said in the row).
    """
    document, problem = _yaml_document(ctx)
    if problem is not None:
        yield problem
        return
    if document is None:
        if ctx.config_data().strip():  # comments only: cn reads no policy from it
            yield bad_file("permissions.yaml holds no mapping (comments or an empty document only)")
        return
    if not isinstance(document, dict):
        yield bad_file(f"permissions.yaml is a YAML {type(document).__name__}, not a mapping")
        return
    for key, patterns in document.items():
        locator = pointer(key, scheme="yaml")
        if key not in POLICIES or not (patterns is None or isinstance(patterns, list)):
            yield bad_record(locator, f"key {excerpt(str(key), 80)!r} is not an allow/ask/exclude list; cn "
                                      "ignores a file with it")
            continue
        for position, pattern in enumerate(patterns or ()):
            if not isinstance(pattern, str):
                yield bad_record(f"{locator}/{position}", "tool pattern is not text")
                continue
            yield Draft("system", f"permission setting: {key}={setting_value(pattern)} (from permissions.yaml, "
                                  "file mtime)", f"{locator}/{position}", **file_mtime(ctx))


def _yaml_document(ctx: ParseContext) -> tuple[object, Draft | None]:
    """The YAML document, nesting bounded (PyYAML's composer recurses), or the row saying why not."""
    try:
        text = ctx.config_data().decode("utf-8")
        return bounded(yaml.safe_load, text), None
    except UnicodeDecodeError as exc:
        return None, bad_file(f"permissions.yaml is not UTF-8 at byte {exc.start}")
    except (yaml.YAMLError, ValueError) as exc:  # NestedTooDeep is a ValueError
        return None, bad_file(f"permissions.yaml is not YAML: {excerpt(str(exc), 200)}")
