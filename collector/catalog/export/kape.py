r"""KAPE targets generated from the catalog: one ``.tkape`` per agent and the compound ``AITrail.tkape``.

The shape follows ``EricZimmerman/KapeFiles@f6656622``
``Targets/TargetTemplate.template`` and ``Targets/TargetGuide.guide`` (the
keys, which are required, ``%user%`` for every user folder, ``*`` as a folder
or file name wildcard, ``Recursive`` defaulting to false),
``Targets/CompoundTargetTemplate.template`` and ``Targets/Compound/KapeTriage.tkape``
(a compound lists other targets by file name), and the AI targets merged
later (``Targets/Apps/ClaudeCode.tkape`` and ``Targets/Compound/AICodingAgents.tkape``
at ``13c564b3``: Category ``Apps``, ``C:\\Users\\%user%\\...`` paths).

KAPE is Windows-only, so only the paths the plan gives Windows are written.
A catalog glob becomes Path + FileMask + Recursive exactly: the directory
segments are the Path (``*`` wildcards allowed), the last segment the
FileMask, and a ``**`` just before the file name, or as the last segment,
is ``Recursive: true`` (KAPE searches the Path and every folder below it).
Anything else (``**`` elsewhere, ``?`` or a ``[...]`` class in a folder name,
a class in a file name) is an ExportError naming the glob.

KAPE has no exclusion, so a glob that could match a never-collected store
(``plan.require_no_credential``) stops the export; tests check every written
Path + FileMask against the catalog's credentials again, from the files.
"""

from __future__ import annotations

import dataclasses
import re

from aitrail.collector.catalog.export import yamltext
from aitrail.collector.catalog.export.plan import ExportError, ExportPlan, Pattern, guid, split_glob
from aitrail.collector.catalog.schema import AgentCatalog

CATEGORY = "Apps"
COMPOUND = "AITrail.tkape"
HOME = "C:\\Users\\%user%\\"
# TargetGuide.guide: the keys of a target file and of each entry of its Targets list (True: required)
FILE_KEYS = {"Description": True, "Author": True, "Version": True, "Id": True, "RecreateDirectories": True,
             "Targets": True}
TARGET_KEYS = {"Name": True, "Category": True, "Path": True, "Recursive": False, "FileMask": False,
               "AlwaysAddToQueue": False, "SaveAsFileName": False, "MinSize": False, "MaxSize": False,
               "Comment": False}
_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def file_name(agent: AgentCatalog) -> str:
    """The agent's target file: AITrail + the agent id in CamelCase (``some-agent`` -> AITrailSomeAgent)."""
    return "AITrail" + "".join(part.capitalize() for part in agent.agent.split("-")) + ".tkape"


_CLASS = re.compile(r"\[[^\]/]*\]")


def widened(pattern: Pattern) -> Pattern:
    """The pattern with each character class of its last segment as ``?``: KAPE's FileMask has no classes.

    One character for one character: the mask takes every name the class
    took and a few more (``[0-9]`` becomes any character), never fewer; the
    credential check then runs on the widened glob.
    """
    head, _, last = pattern.glob.rpartition("/")
    if "[" not in last:
        return pattern
    return dataclasses.replace(pattern, glob=(head + "/" if head else "") + _CLASS.sub("?", last))


def target_parts(pattern: Pattern) -> tuple[str, str | None, bool]:
    """(Path, FileMask or None for every file, Recursive) of one Windows pattern; ExportError if KAPE cannot."""
    segments = split_glob(pattern.path)
    if segments[-1] == "**":
        folders, mask, recursive = segments[:-1], None, True
    elif len(segments) > 1 and segments[-2] == "**":
        folders, mask, recursive = segments[:-2], segments[-1], True
    else:
        folders, mask, recursive = segments[:-1], segments[-1], False
    for folder in folders:
        if folder == "**" or "?" in folder or "[" in folder:
            raise ExportError(f"KAPE cannot express the folder {folder!r} of {pattern.qualified}'s glob "
                              f"{pattern.path!r}")
    if mask is not None and "[" in mask:
        raise ExportError(f"KAPE's FileMask cannot express the class in {mask!r} "
                          f"({pattern.qualified}: {pattern.path!r})")
    prefix = HOME if pattern.scope == "home" else "C:\\"
    path = prefix + "".join(folder + "\\" for folder in folders)
    return path, (None if mask == "*" else mask), recursive


def _comment(text: str) -> str:
    return " ".join(text.split())


def _first_sentence(text: str) -> str:
    sentence = _comment(text).split(". ", 1)[0]
    return sentence if sentence.endswith(".") else sentence + "."


def agent_targets(plan: ExportPlan, agent: AgentCatalog) -> list[dict]:
    """The Targets entries of one agent: one per distinct (Path, FileMask, Recursive), stores merged."""
    merged: dict[tuple[str, str | None, bool], list[Pattern]] = {}
    for pattern in plan.for_os("windows", tuple(plan.agent_patterns(agent.agent))):
        pattern = widened(pattern)
        plan.require_no_credential(pattern, "KAPE")
        merged.setdefault(target_parts(pattern), []).append(pattern)
    entries = []
    for (path, mask, recursive), patterns in merged.items():
        stores = list(dict.fromkeys(pattern.store for pattern in patterns))
        entry: dict = {"Name": f"{agent.name}: {', '.join(stores)}", "Category": CATEGORY, "Path": path}
        if recursive:
            entry["Recursive"] = True
        if mask is not None:
            entry["FileMask"] = mask
        described = agent.store(stores[0]).description
        entry["Comment"] = _comment(f"aitrail stores {', '.join(agent.agent + '.' + s for s in stores)}. {described}")
        entries.append(entry)
    return entries


def _documentation(plan: ExportPlan, agent: AgentCatalog | None) -> str:
    lines = ["", "# Documentation", f"# aitrail catalog sha256:{plan.digest}; docs/catalog-export.md."]
    never = [never for never in plan.never if agent is None or never.agent == agent.agent]
    if never:
        lines.append("# Never collected (no Path + FileMask here can match them; KAPE has no exclusion):")
        lines += [f"#   {path}" for path in sorted({never.path for never in never if "windows" in never.oses})]
    notes = [note for note in plan.roots if agent is not None and note.agent == agent.agent]
    for note in notes:
        where = ", ".join(note.env + note.settings)
        if note.exported:
            lines.append(f"# Root {note.root}: default paths only; it can also be moved by {where}")
        else:
            lines.append(f"# Root {note.root} ({', '.join(note.stores)}): not exportable: set by {where}")
    return "\n".join(lines) + "\n"


def target_file(plan: ExportPlan, agent: AgentCatalog, targets: list[dict]) -> str:
    """The text of one agent's ``.tkape``."""
    document = {"Description": f"{agent.name}: the records aitrail collects. {_first_sentence(agent.summary)}",
                "Author": "aitrail catalog export", "Version": 1.0, "Id": guid(f"kape:{agent.agent}"),
                "RecreateDirectories": True, "Targets": targets}
    return plan.header("kape") + yamltext.dump(document) + _documentation(plan, agent)


def compound_file(plan: ExportPlan, members: list[tuple[AgentCatalog, str]]) -> str:
    """The text of ``AITrail.tkape``: every agent's target by file name."""
    targets = [{"Name": agent.name, "Category": CATEGORY, "Path": name} for agent, name in members]
    names = ", ".join(agent.name for agent, _ in members)
    document = {"Description": f"AI coding agents, as aitrail's catalog names their files: {names}",
                "Author": "aitrail catalog export", "Version": 1.0, "Id": guid("kape:compound"),
                "RecreateDirectories": True, "Targets": targets}
    return plan.header("kape") + yamltext.dump(document) + _documentation(plan, None)


def export(plan: ExportPlan) -> dict[str, str]:
    """Every file of the KAPE export (README.md aside), by name."""
    files: dict[str, str] = {}
    members = []
    for agent in plan.agents:
        targets = agent_targets(plan, agent)
        if targets:
            name = file_name(agent)
            files[name] = target_file(plan, agent, targets)
            members.append((agent, name))
    if members:
        files[COMPOUND] = compound_file(plan, members)
    return files


def validate_target(data: object, known_files: set[str]) -> list[str]:
    """Problems of a parsed .tkape against TargetGuide.guide's keys (a compound names known target files)."""
    if not isinstance(data, dict):
        return ["not a mapping"]
    problems = [f"unknown key {key!r}" for key in data if key not in FILE_KEYS]
    problems += [f"missing {key!r}" for key, required in FILE_KEYS.items() if required and key not in data]
    if not _GUID.fullmatch(str(data.get("Id", ""))):
        problems.append(f"Id {data.get('Id')!r} is not a GUID")
    if not isinstance(data.get("RecreateDirectories"), bool):
        problems.append("RecreateDirectories is not a boolean")
    targets = data.get("Targets")
    if not isinstance(targets, list) or not targets:
        return problems + ["Targets is not a non-empty list"]
    for index, target in enumerate(targets):
        problems += [f"Targets[{index}]: {problem}" for problem in _target_problems(target, known_files)]
    return problems


def _target_problems(target: object, known_files: set[str]) -> list[str]:
    if not isinstance(target, dict):
        return ["not a mapping"]
    problems = [f"unknown key {key!r}" for key in target if key not in TARGET_KEYS]
    problems += [f"missing {key!r}" for key, required in TARGET_KEYS.items() if required and key not in target]
    for key in ("Name", "Category", "Path", "FileMask", "Comment", "SaveAsFileName"):
        if key in target and not isinstance(target[key], str):
            problems.append(f"{key} is not a string")
    for key in ("Recursive", "AlwaysAddToQueue"):
        if key in target and not isinstance(target[key], bool):
            problems.append(f"{key} is not a boolean")
    path = str(target.get("Path", ""))
    if path.endswith(".tkape"):
        if path not in known_files:
            problems.append(f"compound member {path!r} is not a target file of this export")
    elif not re.fullmatch(r"[A-Z]:\\(?:[^\\/:\"<>|]+\\)*", path):
        problems.append(f"Path {path!r} is not a drive-rooted folder ending with a backslash")
    return problems
