"""The README.md every export writes beside its files: what was exported, what was not, and why."""

from __future__ import annotations

from aitrail.collector.catalog.export.plan import OSES, ExportPlan

_OS_RULE = """Each root path is exported for the operating systems it can exist on, by its first segment:
`AppData`, `Program Files`, `ProgramData`, `OneDrive`: Windows; `Library`, `.Trash`: macOS; `.config`,
`.local`: Linux, and macOS too unless the same root names a `Library/...` path; `etc` (system paths): Linux;
any other home path (a dot-directory, `Documents`, the home itself): all three. Home paths are searched in every
user's home, system paths from the file system root."""


def _agents(plan: ExportPlan) -> list[str]:
    lines = ["## Agents", ""]
    for agent in plan.agents:
        counts = {os_name: sum(1 for pattern in plan.agent_patterns(agent.agent) if os_name in pattern.oses)
                  for os_name in OSES}
        per_os = ", ".join(f"{os_name} {count}" for os_name, count in counts.items())
        lines.append(f"- `{agent.agent}` ({agent.name}): globs per OS: {per_os}")
    return lines + [""]


def _never(plan: ExportPlan, excluded_how: str) -> list[str]:
    lines = ["## Never collected", "", excluded_how, ""]
    for never in sorted({(never.qualified, never.path) for never in plan.never}):
        lines.append(f"- `{never[0]}`: `{never[1]}`")
    return lines + [""]


def _roots(plan: ExportPlan) -> list[str]:
    moved = [note for note in plan.roots if not note.exported]
    partial = [note for note in plan.roots if note.exported]
    lines = ["## Roots an export cannot name", ""]
    if not moved and not partial:
        return lines + ["None: every root of these agents has fixed paths only.", ""]
    for note in moved:
        how = " or ".join([f"by {env}" for env in note.env] + [f"by a setting ({item})" for item in note.settings])
        lines.append(f"- not exportable: `{note.agent}` root `{note.root}` (stores {', '.join(note.stores)}) "
                     f"is set {how}")
    for note in partial:
        how = ", ".join(note.env + note.settings)
        lines.append(f"- default paths only: `{note.agent}` root `{note.root}` may also be moved by {how}; "
                     "the moved place is not searched")
    lines += ["", "`aitrail collect` reads these variables and settings on the subject; a static export cannot.", ""]
    return lines


def readme(plan: ExportPlan, fmt: str, title: str, files: dict[str, str], usage: list[str],
           excluded_how: str, limits: list[str]) -> str:
    """The README.md of one export."""
    stamp = " ".join(line.strip() for line in plan.header(fmt, comment="").splitlines())
    lines = [f"<!-- {stamp} -->",
             f"# aitrail catalog export: {title}", "",
             f"aitrail {plan.version}, catalog sha256:{plan.digest}. Every file here is generated from the catalog; "
             f"regenerate it with `aitrail catalog export --format {fmt} -o DIR` rather than editing it.", "",
             "## Files", ""]
    lines += [f"- `{name}`: {what}" for name, what in files.items()]
    lines += ["", "## Using them", "", *usage, "", *_agents(plan), "## Which OS each path is for", "", _OS_RULE, ""]
    lines += _never(plan, excluded_how)
    lines += _roots(plan)
    lines += ["## What this format cannot say", ""] + [f"- {limit}" for limit in limits]
    if plan.uncovered_store_excludes:
        lines += ["- Store excludes no other store includes (the export copies these files anyway): "
                  + "; ".join(f"`{item}`" for item in plan.uncovered_store_excludes)]
    return "\n".join(lines) + "\n"
