"""Velociraptor artifacts generated from the catalog (docs/fleet-velociraptor.md).

Three artifacts, written as YAML Velociraptor's artifact loader reads
(fields of ``Velocidex/velociraptor@cd02ac66 artifacts/proto/artifact.proto``,
kept in velociraptor_fields.json and checked by velociraptor_lint.py):

* ``Generic.Collection.AITrail`` (CLIENT): the frozen aitrail collector, one
  ``tools:`` entry per OS and architecture (packaging/build_frozen_collector.py
  builds a zipped onedir folder), fetched with ``Generic.Utils.FetchBinary``
  (``IsExecutable=FALSE``: it is a zip), unpacked with ``unzip()`` (which writes
  every member 0700, ``vql/tools/unzip.go``), run with ``execve()`` on an argv
  array, its bundle and ``.sha256`` sidecar brought back with ``upload()``. Only
  Linux and macOS: ``aitrail collect`` does not collect live on Windows.
* ``Linux.Collection.AITrailFiles``, ``MacOS.Collection.AITrailFiles`` and
  ``Windows.Collection.AITrailFiles`` (CLIENT, no binary, one per OS with its
  precondition): the catalog's globs for every user home (and the system
  paths) of that OS, uploaded the way ``Generic.Collectors.File`` does (same
  sources, columns and ``upload()`` call), never-collect paths dropped by
  ``WHERE NOT OSPath =~``. One artifact per OS, because one for all three
  outgrew Velociraptor's verify limit of 100,000 bytes (42 agents' globs).
* ``Server.Analysis.AITrail`` (SERVER, velociraptor_server.py): verify and
  analyze an uploaded bundle on the server; its rows are the timeline.

The VQL follows upstream shapes: ``Windows.ActiveDirectory.SharpHound`` (a
zipped tool, unzip, execve) and ``Generic.Collectors.File``
(artifacts/definitions/, same commit).
"""

from __future__ import annotations

import csv
import io
import re

from aitrail.collector.catalog.export import yamltext
from aitrail.collector.catalog.export.plan import ExportError, ExportPlan, reaches_pruned, split_glob

CLIENT_NAME = "Generic.Collection.AITrail"
# the no-binary artifact of each OS (one for all three would pass verify's 100,000-byte limit)
FILES_NAMES = {"linux": "Linux.Collection.AITrailFiles", "macos": "MacOS.Collection.AITrailFiles",
               "windows": "Windows.Collection.AITrailFiles"}
_INFO_OS = {"linux": "linux", "macos": "darwin", "windows": "windows"}  # info().OS of each
_OS_TITLE = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}
# (Velociraptor's info().OS, info().Architecture) of each tool: the builds a collection can run
PLATFORMS = (("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64"))
BUNDLE = "aitrail.tar.zst"
EXECUTABLE = "aitrail-collector"  # the program in the build's folder (build_frozen_collector.executable_name)
# where user homes are on each OS (aitrail's --all-users and its image reader look in the same places)
HOME_GLOBS = {"linux": ("/home/*", "/root"), "macos": ("/Users/*", "/var/root"), "windows": ("\\Users\\*",)}
_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$")
_SEP = r"[\\/]"


def tool_name(os_name: str, arch: str) -> str:
    """The tool's name for one platform, as FetchBinary is asked for it."""
    return f"AITrail_{os_name}_{arch}"


TOOL_NAMES = tuple(tool_name(os_name, arch) for os_name, arch in PLATFORMS)


# ---- shared pieces ---------------------------------------------------------------------------------------


def _agents_parameter(plan: ExportPlan, what: str) -> dict:
    return {"name": "Agents", "type": "multichoice",
            "description": f"Agents to {what} (none chosen: every agent in the list).",
            "default": "[]", "choices": [agent.agent for agent in plan.agents]}


def _tools(plan: ExportPlan, sha256: dict[str, str], urls: dict[str, str]) -> list[dict]:
    tools = []
    for name in TOOL_NAMES:
        entry: dict = {"name": name, "version": plan.version, "serve_locally": True}
        if name in urls:
            entry["url"] = urls[name]
        if name in sha256:
            entry["expected_hash"] = sha256[name]
        tools.append(entry)
    return tools


def _tool_lines(sha256: dict[str, str], urls: dict[str, str]) -> str:
    lines = []
    for name in TOOL_NAMES:
        state = (f"pinned to SHA-256 {sha256[name]}" if name in sha256 else
                 "NOT PINNED: no expected_hash was given at export")
        source = f"fetched by the server from {urls[name]}" if name in urls else "no URL: an administrator uploads it"
        lines.append(f"- `{name}`: {source}; {state}.")
    return "\n".join(lines)


def _unpinned_warning(sha256: dict[str, str], urls: dict[str, str]) -> str:
    missing = [name for name in TOOL_NAMES if name not in sha256 or name not in urls]
    if not missing:
        return ""
    return ("\nBefore this artifact is scheduled, an administrator must upload each tool without a URL "
            "(Tool Setup in the GUI, or `velociraptor tools upload --name NAME FILE.zip`) and pin its SHA-256 "
            "(the expected hash) to the build's published digest (the `.zip.sha256` written next to the zip). "
            f"Not fully pinned here: {', '.join(missing)}.\n")


def vql_string(text: str) -> str:
    """A VQL raw string literal (triple single quotes: backslashes stay as they are)."""
    if "'''" in text:
        raise ExportError(f"cannot quote {text!r} as a VQL string")
    return "'''" + text + "'''"


# ---- Generic.Collection.AITrail ---------------------------------------------------------------------------

_CLIENT_QUERY = """LET WorkDir <= tempdir()
LET Bundle <= path_join(components=[WorkDir, "@BUNDLE@"])
LET Sidecar <= Bundle + ".sha256"
LET CaseName <= if(condition=CaseId, then=CaseId, else=_SessionId)
LET AgentArgs <= SELECT "--agent=" + _value AS Arg FROM foreach(row=Agents)

-- The tool is the zipped onedir build: fetched as data, unpacked next to the bundle.
LET Fetched <= SELECT OSPath FROM Artifact.Generic.Utils.FetchBinary(
    ToolName="@TOOL@", IsExecutable=FALSE, TemporaryOnly=TRUE)
LET Unpacked <= SELECT * FROM foreach(row=Fetched, query={
    SELECT NewPath AS Exe FROM unzip(filename=OSPath, output_directory=WorkDir)
    WHERE OriginalPath =~ '''^[^/]+/@EXECUTABLE@$'''
  })

-- One argv array, never a shell string. Exit 0: collected; 3: bundle written, some files failed or
-- changed while read; 1: no bundle; 2: usage error.
LET Ran <= SELECT * FROM foreach(row=Unpacked, query={
    SELECT ReturnCode, Stderr FROM execve(
        argv=[Exe, "collect", "--all-users", "--case", CaseName, "--examiner", Examiner,
              "-o", Bundle, "--quiet"] + AgentArgs.Arg,
        cwd=WorkDir, length=10000000)
    WHERE Complete
  })

LET Uploaded <= SELECT ReturnCode, Stderr,
    if(condition=ReturnCode = 0 OR ReturnCode = 3, then=upload(file=Bundle, name="@BUNDLE@")) AS BundleUpload,
    if(condition=ReturnCode = 0 OR ReturnCode = 3, then=upload(file=Sidecar, name="@BUNDLE@.sha256")) AS SidecarUpload,
    read_file(filename=Sidecar, length=1024) AS SidecarText
  FROM Ran

SELECT "@TOOL@" AS Tool,
       ReturnCode,
       if(condition=ReturnCode = 0, then="collected",
          else=if(condition=ReturnCode = 3, then="collected with flags", else="failed")) AS Status,
       ReturnCode = 3 AS CollectedWithFlags,
       BundleUpload.sha256 AS BundleSha256,
       parse_string_with_regex(string=SidecarText, regex='''^(?P<Sha256>[0-9a-f]{64})  ''').Sha256 AS SidecarSha256,
       SidecarText,
       BundleUpload,
       SidecarUpload,
       Stderr
FROM Uploaded
"""


def client_artifact(plan: ExportPlan, sha256: dict[str, str], urls: dict[str, str]) -> str:
    """``Generic.Collection.AITrail.yaml``: run the frozen collector, upload its bundle and sidecar."""
    description = f"""Collect AI coding-agent records with aitrail's frozen collector into one sealed bundle.

Runs `aitrail-collector collect --all-users` (the collector-only onedir build of aitrail {plan.version},
zipped, one tool per OS and architecture) and uploads the bundle (`{BUNDLE}`) and its SHA-256 sidecar
(`{BUNDLE}.sha256`, read by `sha256sum -c`). Each row names the tool, the exit code and a Status:
0 "collected", 3 "collected with flags" (the bundle was written, but some files failed or changed while
read: CollectedWithFlags is true), anything else "failed" (nothing uploaded). BundleSha256 is the hash
Velociraptor computed while uploading; SidecarSha256 is the collector's own: they must be equal.

Linux and macOS only: aitrail does not collect live on Windows. Use {FILES_NAMES["windows"]} there (or
the Linux and macOS ones where execve
is forbidden: prevent_execve). The collector throttles itself; Velociraptor's CPU and IO limits do not
apply to programs started with execve. The never-collected stores (credentials) are refused by the
collector itself.

Tools (one per platform; the server serves them to clients):
{_tool_lines(sha256, urls)}
{_unpinned_warning(sha256, urls)}
Generated by aitrail {plan.version} from catalog sha256:{plan.digest}.
"""
    document = {
        "name": CLIENT_NAME,
        "author": "aitrail catalog export",
        "description": description,
        "type": "CLIENT",
        "required_permissions": ["EXECVE", "FILESYSTEM_WRITE"],
        "resources": {"timeout": 3600, "max_upload_bytes": 10 * 1024**3},
        "tools": _tools(plan, sha256, urls),
        "parameters": [
            _agents_parameter(plan, "collect"),
            {"name": "CaseId", "description": "Case identifier recorded in the bundle (empty: the flow id)."},
            {"name": "Examiner", "description": "Examiner's name recorded in the bundle."},
        ],
        "sources": [_client_source(os_name, arch) for os_name, arch in PLATFORMS],
    }
    return plan.header("velociraptor") + yamltext.dump(document)


def _client_source(os_name: str, arch: str) -> dict:
    query = (_CLIENT_QUERY.replace("@TOOL@", tool_name(os_name, arch)).replace("@BUNDLE@", BUNDLE)
             .replace("@EXECUTABLE@", EXECUTABLE))
    return {"name": f"{os_name}_{arch}",
            "precondition": f"SELECT OS FROM info() WHERE OS = '{os_name}' AND Architecture = '{arch}'",
            "query": query}


# ---- <OS>.Collection.AITrailFiles --------------------------------------------------------------------------


def _regex_literal(text: str) -> str:
    return "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)


def _class_regex(segment: str, index: int) -> tuple[str, int]:
    end = segment.index("]", index + 2)
    body = segment[index + 1 : end]
    negated = body.startswith("!")
    body = body[1:] if negated else body
    if body.startswith("^"):
        body = "\\" + body
    return "[" + ("^" if negated else "") + body.replace("\\", "\\\\") + ("\\\\/" if negated else "") + "]", end


def _segment_regex(segment: str) -> str:
    out = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append(r"[^\\/]*")
        elif char == "?":
            out.append(r"[^\\/]")
        elif char == "[":
            text, index = _class_regex(segment, index)
            out.append(text)
        else:
            out.append(_regex_literal(char))
        index += 1
    return "".join(out)


def path_regex(path: str) -> str:
    """A (Go RE2 and Python ``re``) regex for a catalog path glob, either separator; unanchored at its start."""
    return "".join(_path_tokens(path))


def _path_tokens(path: str) -> list[str]:
    """path_regex's pieces, one per segment (with the separator after it), for sharing prefixes."""
    out = []
    segments = split_glob(path)
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".+" if last else rf"(?:[^\\/]+{_SEP})*")
        else:
            out.append(_segment_regex(segment) + ("" if last else _SEP))
    return out


def never_regex(plan: ExportPlan) -> str:
    """One case-insensitive regex every never-collect path (of any agent, OS and home) matches.

    The alternatives share their common leading segments (AppData, Local, the tool folder: once each, then
    its files): the same language, and an artifact within Velociraptor's verify limit of 100,000 bytes.
    """
    trie: dict = {}
    for tokens in sorted({tuple(_path_tokens(never.path)) for never in plan.never}):
        node = trie
        for token in tokens:
            node = node.setdefault(token, {})
        node[""] = {}  # the end of one alternative
    return f"(?i)(?:^|{_SEP})" + _trie_regex(trie) + "$"


def _trie_regex(node: dict) -> str:
    """``(?:a|b...)`` of a prefix tree's branches (an empty key ends an alternative there)."""
    branches = [token + _trie_regex(child) if token else "" for token, child in sorted(node.items())]
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def _alternatives(items: list[str], what: str, separator: str) -> str:
    """One item, or Velociraptor's brace group of them (expanded over the whole glob, glob/glob.go ExpandBraces)."""
    for item in items:
        if any(char in item for char in '{},"'):
            raise ExportError(f"Velociraptor's glob cannot carry {item!r} ({what}) in a brace group")
        for segment in split_glob(item):
            if segment != "**" and "**" in segment:
                raise ExportError(f"Velociraptor's glob cannot express the segment {segment!r} of {item!r}")
    written = [separator.join(split_glob(item)) for item in items]
    return written[0] if len(written) == 1 else "{" + ",".join(written) + "}"


def _row_glob(os_name: str, scope: str, bases: list[str], globs: list[str]) -> str:
    """Homes (or the root), the root's paths and its globs as one brace-grouped Velociraptor glob."""
    separator = "\\" if os_name == "windows" else "/"
    parts = []
    if scope == "home":
        homes = [home.strip("/\\").replace("\\", "/") for home in HOME_GLOBS[os_name]]
        parts.append(_alternatives(homes, "home", separator))
    if bases != ["."]:
        parts.append(_alternatives(bases, "root path", separator))
    parts.append(_alternatives(globs, "glob", separator))
    return separator + separator.join(parts)


def collection_spec(plan: ExportPlan) -> list[tuple[str, str, str, str, str]]:
    """The rows (OS, Agent, Root, Glob, Prune) of the files artifact's collectionSpec, catalog order.

    One row per agent root and OS: the home prefixes, the root's paths on
    that OS and every glob of its collected stores as brace groups (each
    store's globs apply under each of its root's paths, so the expansion is
    exactly the plan's patterns), and Prune the regex of the root's pruned
    directories its globs can reach.
    """
    rows = []
    for os_name in ("linux", "macos", "windows"):
        groups: dict[tuple[str, str, str, bool], dict[str, list]] = {}
        for pattern in plan.for_os(os_name):
            key = (pattern.agent, pattern.root, pattern.scope, pattern.base == ".")
            group = groups.setdefault(key, {"bases": [], "globs": [], "patterns": []})
            for item, value in (("bases", pattern.base), ("globs", pattern.glob)):
                if value not in group[item]:
                    group[item].append(value)
            group["patterns"].append(pattern)
        for (agent, root, scope, _), group in groups.items():
            prunes = sorted({path_regex(prune.path) for pattern in group["patterns"]
                             for prune in reaches_pruned(plan, pattern)})
            prune = f"(?i)(?:^|{_SEP})(?:" + "|".join(prunes) + f")(?:{_SEP}|$)" if prunes else ""
            rows.append((os_name, agent, root, _row_glob(os_name, scope, group["bases"], group["globs"]), prune))
    return rows


def _spec_csv(rows: list[tuple[str, ...]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["OS", "Agent", "Root", "Glob", "Prune"])
    writer.writerows(rows)
    return buffer.getvalue()


_FILES_METADATA_QUERY = """LET NeverCollect <= @NEVER@
LET HostOS <= SELECT OS FROM info()
LET OSName <= if(condition=HostOS[0].OS = "darwin", then="macos", else=HostOS[0].OS)

-- The rows for this OS and the chosen agents; Windows globs start at the drive.
LET specs = SELECT if(condition=OS = "windows", then=WindowsDrive + Glob, else=Glob) AS Glob, Prune
  FROM collectionSpec
  WHERE OS = OSName AND (NOT Agents OR Agent IN Agents)

-- A never-collected path (a credential) is dropped before anything is read or uploaded; Prune is
-- the row's own root's pruned directories, as aitrail collect skips them.
LET hits = SELECT * FROM foreach(row=specs, query={
    SELECT OSPath AS SourceFile,
           Size,
           Btime AS Created,
           Ctime AS Changed,
           Mtime AS Modified,
           Atime AS LastAccessed
    FROM glob(globs=Glob, accessor=Accessor)
    WHERE NOT IsDir
      AND NOT OSPath =~ NeverCollect
      AND NOT (Prune AND OSPath =~ Prune)
      AND ( Size <= MaxFileSize OR
            ( log(message="Skipping file " + OSPath + " due to MaxFileSize") AND FALSE ))
  })

LET all_results <= SELECT Created,
                          Changed,
                          LastAccessed,
                          Modified,
                          Size,
                          SourceFile
  FROM hits
  GROUP BY SourceFile

SELECT * FROM all_results
"""

_FILES_UPLOAD_QUERY = """LET uploaded_files = SELECT * FROM foreach(row={
    SELECT * FROM all_results
  },
  workers=30,
  query={
    SELECT Created,
           Changed,
           LastAccessed,
           Modified,
           SourceFile,
           Size,
           upload(file=SourceFile, accessor=Accessor, mtime=Modified) AS Upload
    FROM scope()
  })

SELECT now() AS CopiedOnTimestamp,
       SourceFile,
       Upload.Path AS DestinationFile,
       Size AS FileSize,
       Upload.sha256 AS SourceFileSha256,
       Created,
       Changed,
       Modified,
       LastAccessed
FROM uploaded_files
"""


def files_artifacts(plan: ExportPlan) -> dict[str, str]:
    """``<OS>.Collection.AITrailFiles.yaml`` for each OS: the catalog's globs, uploaded as Generic.Collectors.File."""
    rows = collection_spec(plan)
    return {f"{FILES_NAMES[os_name]}.yaml": files_artifact(plan, os_name, [row for row in rows if row[0] == os_name])
            for os_name in FILES_NAMES}


def files_artifact(plan: ExportPlan, os_name: str, rows: list[tuple[str, str, str, str, str]]) -> str:
    """One OS's files artifact: its collectionSpec rows, and the never-collect regex of every OS."""
    regex = never_regex(plan)
    re.compile(regex)  # the same syntax as Go's RE2 here: a regex Python refuses is a generator bug
    homes = {"linux": "/home and /root", "macos": "/Users and /var/root", "windows": "the drive's \\Users"}[os_name]
    description = f"""Upload the files aitrail's catalog names on {_OS_TITLE[os_name]}, with no binary on the endpoint.

For estates that forbid execve or have no signed aitrail build. The catalog's globs (for every user home
under {homes}, and the system paths) are searched and matching files uploaded as Generic.Collectors.File
does: the same two sources ("All Matches Metadata" and "Uploads"), the same columns and the same upload()
call, so `aitrail import velociraptor` reads the collection. Custody is Velociraptor's: its upload hashes,
no aitrail bundle.

Never collected: every credential store of the catalog ({len(plan.never)} globs) is dropped by
`WHERE NOT OSPath =~ NeverCollect` before it is read. Roots a setting or an environment variable moves are
searched at their default places only (see the export's README.md).

Generated by aitrail {plan.version} from catalog sha256:{plan.digest}.
"""
    metadata = _FILES_METADATA_QUERY.replace("@NEVER@", vql_string(regex))
    document = {
        "name": FILES_NAMES[os_name],
        "author": "aitrail catalog export",
        "description": description,
        "type": "CLIENT",
        "precondition": f"SELECT OS FROM info() WHERE OS = '{_INFO_OS[os_name]}'",
        "parameters": [
            _agents_parameter(plan, "collect"),
            {"name": "collectionSpec", "type": "csv",
             "description": f"One row per agent root: OS ({os_name}), Agent, Root, Glob (brace "
                            "groups: homes, the root's paths, its stores' globs), and Prune (the regex of the "
                            "directories that root skips).",
             "default": _spec_csv(rows)},
            {"name": "WindowsDrive", "default": "C:", "description": "The drive Windows globs start on."},
            {"name": "Accessor", "default": "auto", "description": "On Windows, this can be changed to `ntfs`."},
            {"name": "MaxFileSize", "type": "int", "default": "18446744073709551615",
             "description": "The max size in bytes of the individual files to collect."},
            {"name": "UPLOAD_IS_RESUMABLE", "type": "bool", "default": "N",
             "description": "If set the uploads can be resumed if the flow times out or errors."},
        ],
        "sources": [{"name": "All Matches Metadata", "query": metadata},
                    {"name": "Uploads", "query": _FILES_UPLOAD_QUERY}],
    }
    return plan.header("velociraptor") + yamltext.dump(document)
