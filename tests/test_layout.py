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
    "llm": 1,
    "embeddings": 1,
    "index": 2,
    "memory": 3,
    "postgres": 4,  # the shared backend of memory and index
    "stores": 5,  # opens the local or the shared backend
    "plan": 6,
    "actions": 7,
    "sandbox": 7,
    "agent": 8,
    "setup": 9,
    "api": 9,
    "server": 10,
    "cli": 10,
    "__init__": 11,
    "__main__": 11,
}

# Creating a missing home needs every layer's starter files, so the two places
# that create one on demand call the initializer above them, lazily.
UPWARD_ALLOWED = {("agent.turn", "setup"), ("stores._open", "setup")}

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
        if RANK[_layer(t)] > RANK[_layer(m)] and (m, t) not in UPWARD_ALLOWED
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


# Where no module imports another's private (`_name`) names: recall's modules
# (the index, the PostgreSQL search, the agent's recall and checks). The rest of
# the package follows once its own hooks are public.
PRIVATE_CHECKED = (
    "index",
    "postgres.chunks",
    "postgres.context",
    "postgres.bm25",
    "agent.memory",
    "agent.recalled",
    "agent.attribution",
    "agent.focus",
    "agent.honesty",
    "agent.voice",
)


def _checked(module: str) -> bool:
    return any(module == c or module.startswith(c + ".") for c in PRIVATE_CHECKED)


def _private_imports(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """`module._name` for each private name `name`'s file imports from another module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join([*base, *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        source = _rel(module)
        if not module.startswith("memagent") or source == name or source not in modules:
            continue
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and (_checked(name) or _checked(source)):
                found.append(f"{name} imports {source}.{alias.name}")
    return found


def test_recall_modules_import_no_private_names() -> None:
    modules = _modules()
    found = [f for name, path in modules.items() for f in _private_imports(name, path, modules)]
    assert found == []


def test_the_private_check_sees_a_private_import(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    fake.write_text("from memagent.index.store import _POOL\n", encoding="utf-8")
    modules = {**_modules(), "agent.x": fake}
    assert _private_imports("agent.x", fake, modules) == ["agent.x imports index.store._POOL"]
