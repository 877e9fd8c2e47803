"""``aitrail catalog export``: the catalog as the collectors examiners already run (docs/catalog-export.md).

Every file is generated from the catalog when the command runs, never kept
in the repository, and is the same bytes for the same catalog and options:
no dates, GUIDs from uuid5 of a fixed namespace and the agent id, and a
header naming the aitrail version and the catalog's digest. One module per
format (velociraptor, velociraptor_server, kape, uac, forensic_artifacts),
all built on plan.py, which turns the catalog into per-OS path patterns and
says which roots cannot be exported.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from aitrail.collector.catalog import Catalog
from aitrail.collector.catalog.export import forensic_artifacts, kape, notes, uac, velociraptor, velociraptor_server
from aitrail.collector.catalog.export.plan import ExportError, ExportPlan, build_plan

FORMATS = ("velociraptor", "kape", "uac", "forensic-artifacts")
_HEX64 = re.compile(r"[0-9a-f]{64}")

__all__ = ["FORMATS", "ExportError", "ExportResult", "generate", "write"]


@dataclass
class ExportResult:
    """The files of one export (name -> text, README.md included) and what the caller must be told."""

    files: dict[str, str]
    warnings: list[str] = field(default_factory=list)


def _check_tool_options(sha256: dict[str, str], urls: dict[str, str]) -> None:
    for name in [*sha256, *urls]:
        if name not in velociraptor.TOOL_NAMES:
            raise ExportError(f"unknown tool {name!r}; the tools are {', '.join(velociraptor.TOOL_NAMES)}")
    for name, digest in sha256.items():
        if not _HEX64.fullmatch(digest):
            raise ExportError(f"--tool-sha256 {name}: {digest!r} is not 64 lowercase hex digits")
    for name, url in urls.items():
        if not url.startswith(("https://", "http://")) or any(char.isspace() for char in url):
            raise ExportError(f"--tool-url {name}: {url!r} is not an http(s) URL")


def _velociraptor(plan: ExportPlan, sha256: dict[str, str], urls: dict[str, str]) -> ExportResult:
    from aitrail.collector.catalog.export import velociraptor_lint

    files = {f"{velociraptor.CLIENT_NAME}.yaml": velociraptor.client_artifact(plan, sha256, urls),
             **velociraptor.files_artifacts(plan),
             f"{velociraptor_server.SERVER_NAME}.yaml": velociraptor_server.server_artifact(plan)}
    warnings = []
    try:
        for name, text in files.items():
            report = velociraptor_lint.lint_artifact(text)
            if report.errors:  # a generator bug: never write an artifact the lint refuses
                raise ExportError(f"{name} fails the Velociraptor lint: " + "; ".join(report.errors))
            warnings += [f"{name}: {warning}" for warning in report.warnings]
    except velociraptor_lint.LintSetupError as exc:
        warnings.append(f"the Velociraptor lint did not run: {exc}")
    described = {
        f"{velociraptor.CLIENT_NAME}.yaml": "CLIENT: runs the frozen collector, uploads its bundle and sidecar.",
        **{f"{name}.yaml": f"CLIENT ({os_name}): no binary; uploads the catalog's files as Generic.Collectors.File."
           for os_name, name in velociraptor.FILES_NAMES.items()},
        f"{velociraptor_server.SERVER_NAME}.yaml": "SERVER: verifies and analyzes an uploaded bundle; rows = timeline.",
    }
    usage = ["Import the five artifacts (GUI: View Artifacts, Add/Upload; or start the server with "
             "`--definitions DIR`), check them with `velociraptor artifacts verify *.yaml`, upload the frozen "
             "collector's zips as the tools below (`velociraptor tools upload --name AITrail_linux_amd64 "
             "aitrail-collector-VERSION-linux-x86_64.zip`), pin their SHA-256, hunt with "
             f"`{velociraptor.CLIENT_NAME}`, then run `{velociraptor_server.SERVER_NAME}` on each flow. "
             "docs/fleet-velociraptor.md has every step."]
    limits = ["Velociraptor's `**` searches 30 directories deep; the catalog's has no bound.",
              "Velociraptor's glob ignores case; the never-collect regex ignores case too (it excludes more).",
              "The client artifact runs on Linux and macOS only: aitrail does not collect live on Windows.",
              "Homes are searched under /home and /root, /Users and /var/root, and the drive's \\Users "
              "(edit collectionSpec for other places)."]
    files["README.md"] = notes.readme(plan, "velociraptor", "Velociraptor", described, usage,
                                      "The files artifact drops every path below with `WHERE NOT OSPath =~` before "
                                      "reading it; the collector the client artifact runs refuses them itself.",
                                      limits)
    return ExportResult(files, warnings + _unpinned(sha256, urls))


def _unpinned(sha256: dict[str, str], urls: dict[str, str]) -> list[str]:
    missing = [name for name in velociraptor.TOOL_NAMES if name not in sha256]
    return [f"tools without --tool-sha256 (not pinned; an administrator must pin them): {', '.join(missing)}"
            ] if missing else []


def _kape(plan: ExportPlan) -> ExportResult:
    files = kape.export(plan)
    described = {name: ("compound target: every agent's target below" if name == kape.COMPOUND
                        else "one agent's target (Windows paths)") for name in files}
    usage = ["Copy the .tkape files into KAPE's Targets folder (for example Targets\\Apps\\AITrail\\), then run "
             "`kape.exe --tsource C: --tdest D:\\out --target AITrail` (or one agent's target)."]
    limits = ["Windows paths only (KAPE runs on Windows).",
              "KAPE has no exclusion: the export stops if any Path + FileMask could match a never-collected file.",
              "Directories aitrail prunes (a root's `exclude`, such as node_modules) cannot be skipped: a recursive "
              "target below one copies them too."]
    files["README.md"] = notes.readme(plan, "kape", "KAPE", described, usage,
                                      "KAPE has no exclusion, so no Path + FileMask written here can match one "
                                      "(checked at export).", limits)
    return ExportResult(files)


def _uac(plan: ExportPlan) -> ExportResult:
    files = uac.export(plan)
    described = {name: "one agent's UAC artifact (Linux and macOS paths)" for name in files}
    usage = ["Run UAC with them from any directory: `./uac -a '/path/to/export/*.yaml' /tmp/out` (add "
             "`--mount-point /mnt/image -s linux` for a mounted image). Check one with "
             "`./uac --validate-artifact FILE`."]
    limits = ["Linux and macOS paths only (UAC does not run on Windows).",
              "A glob with `**` has no depth bound in find: a `*` in it may also match deeper directories "
              "(more files, never a credential: those are pruned)."]
    files["README.md"] = notes.readme(plan, "uac", "UAC", described, usage,
                                      "Every entry prunes these with `exclude_path_pattern` (find -path ... -prune).",
                                      limits)
    return ExportResult(files)


def _forensic_artifacts(plan: ExportPlan) -> ExportResult:
    files = forensic_artifacts.export(plan)
    described = {name: f"ForensicArtifacts definitions, one per agent, and the group {forensic_artifacts.GROUP}"
                 for name in files}
    usage = [f"plaso: `image_export --custom_artifact_definitions {forensic_artifacts.FILE_NAME} "
             f"--artifact_filters {forensic_artifacts.GROUP} -w out/ IMAGE`. GRR: upload the file as artifacts "
             f"(Artifacts > Upload) and collect {forensic_artifacts.GROUP} with ArtifactCollectorFlow."]
    limits = ["No exclusion exists in this format: the export stops if any path could match a never-collected file.",
              "`**` is written as `**10` (and a zero-directory variant): 10 directories deep at most.",
              "Directories aitrail prunes cannot be skipped."]
    files["README.md"] = notes.readme(plan, "forensic-artifacts", "ForensicArtifacts", described, usage,
                                      "The format has no exclusion, so no path written here can match one "
                                      "(checked at export).", limits)
    return ExportResult(files)


def generate(catalog: Catalog, fmt: str, agents: tuple[str, ...] = (), tool_sha256: dict[str, str] | None = None,
             tool_urls: dict[str, str] | None = None) -> ExportResult:
    """Generate one format's files from the catalog (ExportError says what cannot be exported)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    sha256, urls = dict(tool_sha256 or {}), dict(tool_urls or {})
    if fmt != "velociraptor" and (sha256 or urls):
        raise ExportError("--tool-sha256 and --tool-url only apply to --format velociraptor")
    _check_tool_options(sha256, urls)
    try:
        plan = build_plan(catalog, agents)
    except KeyError as exc:
        raise ExportError(f"unknown agent(s): {exc.args[0]}") from None
    if fmt == "velociraptor":
        return _velociraptor(plan, sha256, urls)
    return {"kape": _kape, "uac": _uac, "forensic-artifacts": _forensic_artifacts}[fmt](plan)


def write(result: ExportResult, directory: Path) -> list[Path]:
    """Write the files into ``directory`` (created if missing), each replaced whole; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in result.files.items():
        target = directory / name
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep a shared export from its readers
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        written.append(target)
    return written
