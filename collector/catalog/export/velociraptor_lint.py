"""A lint for Velociraptor artifact YAML, for where no Velociraptor binary can run (none is installable here).

It checks what ``velociraptor artifacts verify`` would catch in the shapes
this export writes, against velociraptor_fields.json (the field set of
``artifacts/proto/artifact.proto``, the parameter types, and the plugins and
functions of ``docs/references/vql.yaml`` the exports call, all from
``Velocidex/velociraptor@cd02ac66``):

* every key of the artifact, its sources, parameters, tools and resources
  is a field of its proto message, and none is a field the server keeps;
* ``type`` and each parameter's ``type`` are ones Velociraptor knows;
* every tool has a ``version``; one without ``url`` or ``expected_hash`` is
  a warning (an administrator must upload and pin it);
* every ``Artifact.Generic.Utils.FetchBinary(ToolName=...)`` names a declared
  tool by a string literal;
* every ``execve(argv=...)`` is an array literal (optionally followed by
  ``+ Name`` terms), never a string a shell would split;
* an artifact that calls ``execve`` declares ``EXECVE``, and a CLIENT
  artifact declares every permission its calls need beyond those a client
  collection implies (the verifier's ``REQUIRED_PERMISSIONS`` warning);
* every called plugin and function is known (or defined by a ``LET``), and
  every keyword it is given is one of its arguments.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

FIELDS_FILE = Path(__file__).with_name("velociraptor_fields.json")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_KEYWORDS = frozenset({"SELECT", "FROM", "WHERE", "LET", "AS", "AND", "OR", "NOT", "IN", "GROUP", "BY", "ORDER",
                       "LIMIT", "DESC", "ASC", "EXPLAIN", "TRUE", "FALSE", "NULL"})
_TOKEN = re.compile(r"""
    (?P<comment>--[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<string>'''.*?'''|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<name>`[^`]+`|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<number>[0-9]+(?:\.[0-9]+)?)
  | (?P<op>=~|\|\||<=|>=|!=|=|<|>|\+|-|\*|/|\[|\]|\(|\)|\{|\}|,|\.|:)
  | (?P<space>\s+)
""", re.X | re.S)


class LintSetupError(RuntimeError):
    """The lint cannot run here (its data file or PyYAML is missing)."""


@dataclass
class LintReport:
    """What the lint found: errors fail the artifact, warnings must be read."""

    name: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Token:
    """One VQL token: kind (string, name, number, op) and its text."""

    kind: str
    text: str


def load_fields() -> dict:
    """The field sets and VQL reference (velociraptor_fields.json)."""
    try:
        return json.loads(FIELDS_FILE.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LintSetupError(f"{FIELDS_FILE.name} is not installed with aitrail ({exc})") from exc


def tokenize(vql: str) -> list[Token]:
    """VQL as tokens, comments and blanks dropped; ValueError names an unreadable character."""
    tokens = []
    position = 0
    while position < len(vql):
        match = _TOKEN.match(vql, position)
        if not match:
            raise ValueError(f"unreadable VQL at {vql[position:position + 30]!r}")
        kind = match.lastgroup
        if kind not in ("comment", "space"):
            tokens.append(Token(kind, match.group()))
        position = match.end()
    return tokens


def string_value(token: Token) -> str | None:
    """The text of a string literal token (None for any other token)."""
    if token.kind != "string":
        return None
    if token.text.startswith("'''"):
        return token.text[3:-3]
    return re.sub(r"\\(.)", r"\1", token.text[1:-1])


@dataclass(frozen=True)
class Call:
    """A call ``name(...)``: whether it is a plugin (after FROM), its keyword args, and each arg's tokens."""

    name: str
    plugin: bool
    args: dict[str, list[Token]]


def _closing(tokens: list[Token], start: int) -> int:
    """Index of the token closing the bracket at ``start``."""
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index].kind != "op":
            continue
        if tokens[index].text in ("(", "[", "{"):
            depth += 1
        elif tokens[index].text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"unbalanced {tokens[start].text!r} in VQL")


def _arguments(tokens: list[Token]) -> dict[str, list[Token]]:
    """Keyword arguments (``key=value``) at the top level of a call's argument tokens."""
    args: dict[str, list[Token]] = {}
    index = 0
    current: str | None = None
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "op" and token.text in ("(", "[", "{"):
            end = _closing(tokens, index)
            if current is not None:
                args[current].extend(tokens[index:end + 1])
            index = end + 1
            continue
        if token.kind == "op" and token.text == ",":
            current = None
        elif token.kind == "name" and index + 1 < len(tokens) and tokens[index + 1].text == "=" and current is None:
            current = token.text.strip("`")
            args[current] = []
            index += 2
            continue
        elif current is not None:
            args[current].append(token)
        index += 1
    return args


def calls(tokens: list[Token]) -> list[Call]:
    """Every call in the token list, nested ones included."""
    found = []
    for index, token in enumerate(tokens):
        if token.kind != "name" or token.text.upper() in _KEYWORDS:
            continue
        if index + 1 >= len(tokens) or tokens[index + 1].text != "(":
            continue
        if index > 0 and tokens[index - 1].text.upper() == "LET":
            continue  # LET Name(params) = ...: a definition, not a call
        end = _closing(tokens, index + 1)
        plugin = index > 0 and tokens[index - 1].text.upper() == "FROM"
        found.append(Call(token.text, plugin, _arguments(tokens[index + 2:end])))
    return found


def definitions(tokens: list[Token]) -> set[str]:
    """Names a ``LET`` defines (stored queries, functions and values)."""
    return {tokens[index + 1].text for index, token in enumerate(tokens[:-1])
            if token.text.upper() == "LET" and tokens[index + 1].kind == "name"}


def argv_problem(argv: list[Token]) -> str | None:
    """Why an execve argv is not an array literal (with optional ``+ Name`` terms); None when it is."""
    if not argv or argv[0].text != "[":
        return "argv is not an array literal"
    end = _closing(argv, 0)
    for token in argv[1:end]:
        if token.kind not in ("string", "name") and token.text != ",":
            return f"argv's array holds {token.text!r}: only literals and names belong there"
    rest = argv[end + 1:]
    while rest:
        if len(rest) < 2 or rest[0].text != "+" or rest[1].kind != "name":
            return "argv continues with something other than '+ Name'"
        rest = rest[2:]
    return None


def _check_keys(report: LintReport, where: str, data: object, allowed: list[str], kept: list[str]) -> None:
    if not isinstance(data, dict):
        report.errors.append(f"{where}: expected a mapping")
        return
    for key in data:
        if key not in allowed:
            report.errors.append(f"{where}: {key!r} is not a field of the artifact definition")
        elif key in kept:
            report.errors.append(f"{where}: {key!r} is kept by the server, not set in a definition")


def _check_structure(report: LintReport, artifact: dict, fields: dict) -> None:
    messages, kept = fields["messages"], fields["server_state"]
    _check_keys(report, "artifact", artifact, messages["Artifact"], kept["Artifact"])
    if artifact.get("type", "CLIENT").upper() not in fields["artifact_types"]:
        report.errors.append(f"artifact: type {artifact.get('type')!r} is unknown")
    if not artifact.get("name"):
        report.errors.append("artifact: no name")
    for index, source in enumerate(artifact.get("sources") or []):
        _check_keys(report, f"sources[{index}]", source, messages["ArtifactSource"], [])
    for index, parameter in enumerate(artifact.get("parameters") or []):
        _check_keys(report, f"parameters[{index}]", parameter, messages["ArtifactParameter"], [])
        if isinstance(parameter, dict) and parameter.get("type", "") not in fields["parameter_types"]:
            report.errors.append(f"parameters[{index}]: type {parameter.get('type')!r} is unknown")
    if "resources" in artifact:
        _check_keys(report, "resources", artifact["resources"], messages["Resources"], [])
    for index, tool in enumerate(artifact.get("tools") or []):
        _check_keys(report, f"tools[{index}]", tool, messages["Tool"], kept["Tool"])
        _check_tool(report, index, tool if isinstance(tool, dict) else {})


def _check_tool(report: LintReport, index: int, tool: dict) -> None:
    name = tool.get("name") or f"tools[{index}]"
    if not tool.get("name"):
        report.errors.append(f"tools[{index}]: no name")
    if not tool.get("version"):
        report.errors.append(f"tool {name}: no version")
    if not tool.get("url"):
        report.warnings.append(f"tool {name}: no url (an administrator must upload it before the artifact runs)")
    if not tool.get("expected_hash"):
        report.warnings.append(f"tool {name}: no expected_hash (its download is not pinned to a SHA-256)")
    elif not _HEX64.fullmatch(str(tool["expected_hash"])):
        report.errors.append(f"tool {name}: expected_hash is not 64 lowercase hex digits")


def _queries(artifact: dict) -> list[tuple[str, str]]:
    found = [("export", artifact["export"])] if artifact.get("export") else []
    if artifact.get("precondition"):
        found.append(("precondition", artifact["precondition"]))
    for index, source in enumerate(artifact.get("sources") or []):
        for key in ("precondition", "query"):
            if isinstance(source, dict) and source.get(key):
                found.append((f"sources[{index}].{key}", source[key]))
    return found


def _check_call(report: LintReport, where: str, call: Call, known: set[str], tools: set[str], vql: dict) -> None:
    if call.name == "Artifact.Generic.Utils.FetchBinary":
        names = call.args.get("ToolName", [])
        value = string_value(names[0]) if len(names) == 1 else None
        if value is None:
            report.errors.append(f"{where}: FetchBinary's ToolName is not a string literal")
        elif value not in tools:
            report.errors.append(f"{where}: FetchBinary asks for {value!r}, which tools: does not declare")
        return
    if call.name.startswith("Artifact.") or call.name in known:
        return
    table = vql["plugins"] if call.plugin else vql["functions"]
    entry = table.get(call.name)
    if entry is None:
        kind = "plugin" if call.plugin else "function"
        report.errors.append(f"{where}: unknown {kind} {call.name!r}")
        return
    if entry["args"]:
        for name in call.args:
            if name not in entry["args"]:
                report.errors.append(f"{where}: {call.name}() has no argument {name!r}")
    if call.name == "execve":
        problem = argv_problem(call.args.get("argv", []))
        if problem:
            report.errors.append(f"{where}: execve {problem}")


def lint_artifact(text: str) -> LintReport:
    """Lint one artifact definition (YAML text)."""
    try:
        import yaml
    except ImportError as exc:  # the frozen collector has no PyYAML
        raise LintSetupError("PyYAML is not installed: the Velociraptor lint cannot read YAML") from exc
    fields = load_fields()
    try:
        artifact = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return LintReport("?", errors=[f"not YAML: {exc}"])
    if not isinstance(artifact, dict):
        return LintReport("?", errors=["not a mapping"])
    report = LintReport(str(artifact.get("name", "?")))
    _check_structure(report, artifact, fields)
    tools = {tool.get("name") for tool in artifact.get("tools") or [] if isinstance(tool, dict)}
    used: set[str] = set()
    for where, vql_text in _queries(artifact):
        try:
            tokens = tokenize(vql_text)
            found = calls(tokens)
        except ValueError as exc:
            report.errors.append(f"{where}: {exc}")
            continue
        known = definitions(tokens) | set().union(*(definitions(tokenize(q)) for _, q in _queries(artifact)))
        for call in found:
            _check_call(report, where, call, known, tools, fields["vql"])
            entry = (fields["vql"]["plugins"] if call.plugin else fields["vql"]["functions"]).get(call.name)
            if entry and call.name not in known:
                used.update(entry["permissions"])
    _check_permissions(report, artifact, used, fields)
    return report


def _check_permissions(report: LintReport, artifact: dict, used: set[str], fields: dict) -> None:
    declared = set(artifact.get("required_permissions") or []) | set(artifact.get("implied_permissions") or [])
    if "EXECVE" in used and "EXECVE" not in declared:
        report.errors.append("execve is called but EXECVE is not in required_permissions")
    if str(artifact.get("type", "CLIENT")).upper() == "CLIENT":
        missing = sorted(used - declared - set(fields["implied_client_permissions"]))
        for permission in missing:
            report.errors.append(f"a call needs {permission}, which required_permissions does not declare")
