r"""ForensicArtifacts definitions generated from the catalog (one YAML stream), for plaso and GRR.

The format is ``ForensicArtifacts/artifacts@a523ad9``
``docs/sources/Format-specification.md``: one definition per agent
(``AITrail<Agent>File``, CamelCase, File suffix) with one FILE source per
OS (``supported_os`` Linux, Darwin, Windows), and an ARTIFACT_GROUP
``AITrailAICodingAgents`` naming them all, names in alphabetical order (the
validator warns otherwise). Paths use ``%%users.homedir%%`` on Linux and
macOS; on Windows (separator ``\\``) ``%%users.appdata%%`` and
``%%users.localappdata%%`` for AppData\\Roaming and AppData\\Local (the
validator asks for them), ``%%users.userprofile%%`` otherwise, and
``%%environ_programdata%%`` / ``%%environ_programfiles%%`` for system paths.

Globstars: plaso expands ``**N`` into 1 to N ``*`` segments (never zero,
``plaso/engine/path_helper.py`` ExpandGlobStars), GRR defaults ``**`` to 3
levels, and the validator allows one globstar per path with N up to 10. So
``a/**/b`` is written as ``a/b`` and ``a/**10/b``, a final ``**`` as ``**10``,
and a glob with two ``**`` is an ExportError. Depth is then bounded at 10
directories where the catalog has no bound.

The format has no exclusion: a path that could match a never-collected
store stops the export (``plan.require_no_credential``).
"""

from __future__ import annotations

from aitrail.collector.catalog.export import yamltext
from aitrail.collector.catalog.export.plan import ExportError, ExportPlan, Pattern, split_glob
from aitrail.collector.catalog.schema import AgentCatalog

FILE_NAME = "aitrail_ai_coding_agents.yaml"
GROUP = "AITrailAICodingAgents"
SUPPORTED_OS = {"linux": "Linux", "macos": "Darwin", "windows": "Windows"}
GLOBSTAR = "**10"
_WINDOWS_HOME = (("AppData/Roaming/", "%%users.appdata%%"), ("AppData/Local/", "%%users.localappdata%%"))
_WINDOWS_SYSTEM = (("Program Files (x86)/", "%%environ_programfilesx86%%"),
                   ("Program Files/", "%%environ_programfiles%%"), ("ProgramData/", "%%environ_programdata%%"))


def definition_name(agent: AgentCatalog) -> str:
    """``AITrail`` + the agent id in CamelCase + ``File``."""
    return "AITrail" + "".join(part.capitalize() for part in agent.agent.split("-")) + "File"


def _globstar_variants(path: str) -> list[str]:
    segments = split_glob(path)
    stars = [index for index, segment in enumerate(segments) if segment == "**"]
    for segment in segments:
        if segment != "**" and "**" in segment:
            raise ExportError(f"ForensicArtifacts cannot express the segment {segment!r} of {path!r}")
    if len(stars) > 1:
        raise ExportError(f"ForensicArtifacts allows one globstar per path; {path!r} has {len(stars)}")
    if not stars:
        return [path]
    index = stars[0]
    deep = "/".join(segments[:index] + [GLOBSTAR] + segments[index + 1:])
    if index == len(segments) - 1:
        return [deep]
    return ["/".join(segments[:index] + segments[index + 1:]), deep]


def _windows_path(pattern: Pattern, path: str) -> str:
    table = _WINDOWS_HOME if pattern.scope == "home" else _WINDOWS_SYSTEM
    for prefix, variable in table:
        if path.startswith(prefix):
            return variable + "\\" + path[len(prefix):].replace("/", "\\")
    if pattern.scope == "home":
        return "%%users.userprofile%%\\" + path.replace("/", "\\")
    raise ExportError(f"no ForensicArtifacts variable for the Windows system path {path!r}")


def fa_paths(pattern: Pattern, os_name: str) -> list[str]:
    """The ForensicArtifacts paths of one pattern on one OS."""
    paths = []
    for path in _globstar_variants(pattern.path):
        if os_name == "windows":
            paths.append(_windows_path(pattern, path))
        elif pattern.scope == "home":
            paths.append("%%users.homedir%%/" + path)
        else:
            paths.append("/" + path)
    return paths


def agent_definition(plan: ExportPlan, agent: AgentCatalog) -> dict | None:
    """One agent's definition (None when none of its paths is exportable)."""
    sources = []
    for os_name, fa_os in SUPPORTED_OS.items():
        paths: list[str] = []
        for pattern in plan.for_os(os_name, tuple(plan.agent_patterns(agent.agent))):
            plan.require_no_credential(pattern, "ForensicArtifacts")
            paths += fa_paths(pattern, os_name)
        if not paths:
            continue
        attributes: dict = {"paths": list(dict.fromkeys(paths))}
        if os_name == "windows":
            attributes["separator"] = "\\"
        sources.append({"type": "FILE", "attributes": attributes, "supported_os": [fa_os]})
    if not sources:
        return None
    summary = " ".join(agent.summary.split())
    doc = (f"{agent.name} records aitrail collects.\n\n{summary}\nFrom aitrail's catalog (sha256:{plan.digest}); "
           f"its credential stores are not matched by any path here.\n")
    definition = {"name": definition_name(agent), "doc": doc, "sources": sources,
                  "supported_os": [source["supported_os"][0] for source in sources]}
    urls = [reference for reference in agent.references if reference.startswith(("https://", "http://"))]
    if urls:
        definition["urls"] = urls
    return definition


def export(plan: ExportPlan) -> dict[str, str]:
    """The one definitions file of the ForensicArtifacts export (README.md aside)."""
    definitions = [definition for agent in plan.agents if (definition := agent_definition(plan, agent))]
    if not definitions:
        return {}
    names = sorted((definition["name"] for definition in definitions), key=str.lower)
    group = {"name": GROUP,
             "doc": "AI coding agents' records, as aitrail's catalog names them.\n",
             "sources": [{"type": "ARTIFACT_GROUP", "attributes": {"names": names}}],
             "supported_os": sorted({os for definition in definitions for os in definition["supported_os"]})}
    documents = sorted([*definitions, group], key=lambda definition: definition["name"].lower())
    text = plan.header("forensic-artifacts") + "# AI coding agents' records, from aitrail's catalog.\n"
    return {FILE_NAME: text + "---\n".join(yamltext.dump(document) for document in documents)}
