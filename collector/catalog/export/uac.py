"""UAC artifact files generated from the catalog: one per agent, Linux and macOS paths.

The format is UAC's own (``tclahr/uac@7376467``: ``lib/validate_artifact.sh``
reads it line by line, ``lib/parse_artifact.sh`` runs it, and
``lib/build_find_command.sh`` turns an entry into one ``find``; the AI-agent
artifacts under ``artifacts/files/applications/ai_tools/`` show the layout):
``version``, then ``artifacts:`` with one ``-`` entry per collection, keys
``description``, ``supported_os``, ``collector: file``, ``path`` (with
``%user_home%`` for every user's home), ``path_pattern`` (``find -path``),
``exclude_path_pattern`` (``find -path ... -prune``), ``max_depth``,
``file_type`` and ``ignore_date_range``. It is not YAML (``%user_home%``
cannot start a YAML scalar): ``read_artifact`` reads it as UAC does.

Each entry searches one root path of one agent. ``find -path`` patterns are
fnmatch patterns whose ``*`` also matches ``/``; for a glob without ``**``
the entry's ``max_depth`` is the glob's depth and the literal slashes then
leave no ``*`` room to span a directory, so the match is the catalog's.
A glob with ``**`` has no depth bound: a ``*`` in it may match more
directory levels than the catalog's (more files, never a credential).
Never-collected paths are ``exclude_path_pattern`` entries (pruned, so a
credential is never listed, let alone copied), and so are the root's pruned
directories.
"""

from __future__ import annotations

import re

from aitrail.collector.catalog.export.overlap import globs_overlap
from aitrail.collector.catalog.export.plan import ExportError, ExportPlan, Pattern, split_glob
from aitrail.collector.catalog.schema import AgentCatalog

UAC_OSES = {"linux": "linux", "macos": "macos"}  # the plan's OS names -> UAC's supported_os values
_UNSAFE = re.compile(r'[,"\'|#\\`$]')  # what UAC's list parser or its eval of the find command would mangle


def file_name(agent: AgentCatalog) -> str:
    """The agent's artifact file: ``aitrail_<agent id>.yaml`` (dashes as underscores, as UAC names files)."""
    return f"aitrail_{agent.agent.replace('-', '_')}.yaml"


def find_patterns(path: str) -> list[str]:
    """``find -path`` patterns (each starting ``*/``) for a home- or root-relative catalog glob."""
    variants = [[]]
    segments = split_glob(path)
    for index, segment in enumerate(segments):
        if _UNSAFE.search(segment):
            raise ExportError(f"UAC cannot carry the segment {segment!r} of {path!r}")
        if segment == "**" and index == len(segments) - 1:
            variants = [variant + ["*"] for variant in variants]
        elif segment == "**":  # no directory, or one or more (a find '*' spans slashes)
            variants = [variant + extra for variant in variants for extra in ([], ["*"])]
        else:
            variants = [variant + [segment] for variant in variants]
    return ["*/" + "/".join(variant) for variant in variants]


def _quoted_path(base: str) -> str:
    """A root path for UAC's ``path:``, segments with blanks in double quotes (as UAC's own artifacts do)."""
    if _UNSAFE.search(base):
        raise ExportError(f"UAC cannot carry the path {base!r}")
    return "/".join(f'"{segment}"' if " " in segment else segment for segment in base.split("/"))


def _literal_base(base: str) -> tuple[str, int]:
    """The root path up to its first segment with a wildcard, and how many segments follow from there.

    UAC hands ``path:`` to find as one quoted argument: a wildcard in it
    (``.config/tool*``, ``.tool/profiles/*``) would be looked for
    literally. The wildcard part goes into the path patterns and the depth.
    """
    segments = [] if base == "." else base.split("/")
    for index, segment in enumerate(segments):
        if any(char in segment for char in "*?["):
            return "/".join(segments[:index]) or ".", len(segments) - index
    return base, 0


def _entry_path(pattern: Pattern) -> str:
    base = _literal_base(pattern.base)[0]
    if pattern.scope == "system":
        return "/" + _quoted_path(base)
    return "%user_home%" if base == "." else "%user_home%/" + _quoted_path(base)


def _depth(pattern: Pattern) -> int | None:
    """The glob's depth below the entry's path, or None when a ``**`` leaves it unbounded."""
    segments = split_glob(pattern.glob)
    return None if "**" in segments else len(segments) + _literal_base(pattern.base)[1]


def _excludes(plan: ExportPlan, pattern: Pattern) -> list[str]:
    """The never-collected paths under this root path (any agent) and the root's own pruned directories."""
    reach = "**" if pattern.base == "." else f"{pattern.base}/**"
    found: list[str] = []
    for never in plan.never:
        if never.scope == pattern.scope and globs_overlap(reach, never.path):
            found += find_patterns(never.path)
    for prune in plan.prunes:
        if (prune.agent, prune.root, prune.base) == (pattern.agent, pattern.root, pattern.base):
            found += find_patterns(prune.path)
    return list(dict.fromkeys(found))


def _list(items: list[str], quoted: bool = True) -> str:
    return "[" + ", ".join(f'"{item}"' if quoted else item for item in items) + "]"


def agent_entries(plan: ExportPlan, agent: AgentCatalog) -> list[dict[str, object]]:
    """One agent's entries: one per (root path, OSes, depth), its globs as path patterns."""
    groups: dict[tuple, list[Pattern]] = {}
    for pattern in plan.agent_patterns(agent.agent):
        oses = tuple(UAC_OSES[name] for name in pattern.oses if name in UAC_OSES)
        if oses:
            groups.setdefault((pattern.scope, pattern.base, pattern.root, oses, _depth(pattern)), []).append(pattern)
    entries = []
    for (_scope, base, _root, oses, depth), patterns in groups.items():
        stores = list(dict.fromkeys(pattern.store for pattern in patterns))
        entry: dict[str, object] = {
            "description": _description(agent, stores, base),
            "supported_os": list(oses),
            "collector": "file",
            "path": _entry_path(patterns[0]),
            "path_pattern": list(dict.fromkeys(p for pattern in patterns for p in find_patterns(pattern.path))),
        }
        excludes = list(dict.fromkeys(item for pattern in patterns for item in _excludes(plan, pattern)))
        if excludes:
            entry["exclude_path_pattern"] = excludes
        if depth is not None:
            entry["max_depth"] = depth
        entry["file_type"] = ["f"]
        entry["ignore_date_range"] = True
        entries.append(entry)
    return entries


def _description(agent: AgentCatalog, stores: list[str], base: str) -> str:
    where = "the home" if base == "." else base
    text = f"{agent.name}: aitrail stores {', '.join(stores)} under {where}."
    return text.replace("#", "")  # UAC drops everything after a '#' on a line


def artifact_text(plan: ExportPlan, entries: list[dict[str, object]]) -> str:
    """The text of one UAC artifact file."""
    lines = [plan.header("uac").rstrip("\n"), f"version: {plan.version}", "", "artifacts:"]
    for entry in entries:
        lines.append("  -")
        for key, value in entry.items():
            if isinstance(value, list):
                text = _list(value, quoted=key not in ("supported_os", "file_type"))  # UAC writes these bare
            elif isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = str(value)
            lines.append(f"    {key}: {text}")
    return "\n".join(lines) + "\n"


def export(plan: ExportPlan) -> dict[str, str]:
    """Every file of the UAC export (README.md aside), by name."""
    files = {}
    for agent in plan.agents:
        entries = agent_entries(plan, agent)
        if entries:
            files[file_name(agent)] = artifact_text(plan, entries)
    return files


def read_artifact(text: str) -> tuple[str, list[dict[str, str]]]:
    """(version, entries) of a UAC artifact file, read as UAC's validator reads it (values left as text).

    As lib/validate_artifact.sh does: everything after a ``#`` is dropped,
    lines are trimmed and blank ones skipped, each line is a key and a value,
    a ``-`` line starts an entry. Lists stay in their ``[...]`` form; see
    ``list_items``.
    """
    version = ""
    entries: list[dict[str, str]] = []
    in_artifacts = False
    for raw in text.splitlines():
        line = re.sub(r"#.*$", "", raw).strip()
        if not line:
            continue
        if line == "-":
            if not in_artifacts:
                raise ValueError("an entry before 'artifacts:'")
            entries.append({})
            continue
        key, _, value = line.partition(" ")
        if not key.endswith(":"):
            raise ValueError(f"not a 'key: value' line: {raw!r}")
        key, value = key[:-1], value.strip()
        if key == "artifacts" and not value:
            in_artifacts = True
        elif not entries:
            if key != "version":
                raise ValueError(f"{key!r} outside an entry")
            version = value
        elif key in entries[-1]:
            raise ValueError(f"{key!r} twice in one entry")
        else:
            entries[-1][key] = value
    return version, entries


def list_items(value: str) -> list[str]:
    """The items of a ``[...]`` list as UAC's _array_to_psv splits them (quotes removed)."""
    if not (value.startswith("[") and value.endswith("]")):
        raise ValueError(f"{value!r} is not a list")
    items = [item.strip() for item in value[1:-1].split(",")]
    return [item.replace('"', "").replace("'", "") for item in items if item]
