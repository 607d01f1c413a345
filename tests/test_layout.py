"""The codebase's shape, held by a test: layers (DESIGN.md) never import upward,
no two modules import each other even through others, and no source file
outgrows what a newcomer can read in one sitting.

Every import counts: at the top, inside a function, or only for type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memagent"

# DESIGN.md's layers, bottom (0) to top; a module may import its own rank or lower.
RANK = {
    "core": 0,
    "api_keys": 1,  # who may call the server: used by postgres, stores and server
    "llm": 1,
    "embeddings": 1,
    "index": 2,
    "memory": 3,
    "setup": 3,  # a new home's starter files: core's, the profile's
    "postgres": 4,  # the shared backend of memory and index
    "stores": 5,  # opens the local or the shared backend
    "plan": 6,
    "actions": 7,
    "sandbox": 7,
    "agent": 8,
    "api": 9,
    "server": 10,
    "cli": 10,
    "__init__": 11,
    "__main__": 11,
}

MAX_LINES = 650  # "files stay under ~600 lines"


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        found[name] = path
    return found


def _rel(dotted: str) -> str:
    return dotted.removeprefix("memagent").lstrip(".")


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the package that `name` imports anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from pkg import submodule` imports the submodule; anything else, pkg
            targets = [
                f"{module}.{a.name}" if _rel(f"{module}.{a.name}") in modules else module
                for a in node.names
            ]
        for t in targets:
            if t.startswith("memagent") and (rel := _rel(t)) in modules and rel != name:
                out.add(rel)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> str:
    return module.split(".")[0] if module else "__init__"


def test_no_layer_imports_upward() -> None:
    upward = [
        f"{m or 'memagent'} -> {t or 'memagent'}"
        for m, targets in _graph().items()
        for t in targets
        if RANK[_layer(t)] > RANK[_layer(m)]
    ]
    assert upward == []


def test_no_import_cycle_anywhere() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_checks_see_real_imports() -> None:
    graph = _graph()
    assert "core" in graph["memory.chunks.store"]
    assert "" in graph["__main__"] or "cli" in graph["__main__"]
    assert "agent.acting" in graph["agent.loop"]
    assert "memory.chunks.edits" in graph["memory.chunks.store"]


def test_source_files_stay_readable() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
