"""No import cycle, between modules or between rooms (issue 28).

Every module of the installed package's source (collector/, analyzer/) is
read with ``ast``; the imports its body runs at import time (not those inside
functions, which run later, nor those under ``if TYPE_CHECKING:``) are the
edges. A cycle of modules, or of rooms (a root's subpackage, or a module at
the root), fails the test with the cycle named.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

ROOTS = {"collector": "aitrail.collector", "analyzer": "aitrail.analyzer"}


def modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of both roots (a package is its __init__.py)."""
    found = {}
    for folder, dotted in ROOTS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((dotted, *parts))] = path
    return found


def _runs_at_import(tree: ast.Module):
    """The statements of a module body that run when it is imported (TYPE_CHECKING blocks left out)."""
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from node.orelse
            continue
        if isinstance(node, ast.Try):
            yield from node.body
            for handler in node.handlers:
                yield from handler.body
            continue
        yield node


def edges(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the aitrail modules it imports at import time."""
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets: set[str] = set()
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in _runs_at_import(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(head + ([base] if base else []))
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        graph[name] = {target for target in targets if target in known and target != name}
    return graph


def room(name: str) -> str:
    """The room of a module: its root's subpackage, or itself for a module at a root."""
    parts = name.split(".")
    return ".".join(parts[:3])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        work = [(node, iter(sorted(graph.get(node, ()))))]
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[current] = min(low[current], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[current])
            if low[current] == index[current]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == current:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for name, targets in graph.items():
        rooms.setdefault(room(name), set()).update(room(target) for target in targets if room(target) != room(name))
    return rooms


def test_no_module_imports_itself_through_others():
    assert cycles(edges(modules())) == []


def test_no_room_imports_itself_through_others():
    assert cycles(room_graph(edges(modules()))) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_parsers_and_formats_see_the_analyzer_only_through_its_view():
    """ADR 0001 per room: formats/ and parsers/ import view/, formats/ and parsers/ of the analyzer, nothing else.

    They are pure (bytes in, rows out): the engine, the outputs and the report are
    never theirs to call. Imports inside functions count too.
    """
    allowed = ("aitrail.analyzer.view", "aitrail.analyzer.formats", "aitrail.analyzer.parsers")
    found = []
    for name, path in modules().items():
        if not name.startswith(("aitrail.analyzer.formats", "aitrail.analyzer.parsers")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [(name, target) for target in targets
                      if target.startswith("aitrail.analyzer") and not target.startswith(allowed)]
    assert found == []
