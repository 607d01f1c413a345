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


def _modules(root: Path = SRC) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
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


# -- private names stay private ------------------------------------------------------
#
# A name with one leading underscore belongs to the module that defines it. Another
# module may not import it (`from m import _name`), nor reach it on an object
# (`thing._name`, `thing._name()`), where `thing` is not `self`/`cls` and the reaching
# module does not define `_name` itself: a subclass overriding a backend hook defines
# it, and `super()._hook()` then stays inside that class. A `_private` *module* is
# the same one level up: its package (the package's `__init__`, its other modules
# and subpackages) may import it, nothing outside. What other modules need becomes
# a public method or name (e.g. `Vault.lock()`, `ChunkStore.save_edit()`).
#
# The sandbox is one unit: its modules share underscore names (`obj._cls`,
# `_MISSING`) because there the underscore means something else too, "never
# reachable by sandboxed code" (the interpreter refuses every `_` attribute).
SHARED_PRIVATE = {"sandbox"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_protocol(node: ast.ClassDef) -> bool:
    return any(ast.unparse(base).split(".")[-1] == "Protocol" for base in node.bases)


def _defined_names(tree: ast.Module) -> set[str]:
    """Every name a module binds: functions, classes, assignments (attributes of
    `self` too), parameters, `__slots__` strings; a Protocol's body only declares."""
    names: set[str] = set()
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and _is_protocol(node):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Constant) and str(node.value).isidentifier():
            names.add(str(node.value))
    return names


def _within(package: str, owner: str) -> bool:
    return owner == "" or package == owner or package.startswith(owner + ".")


def _private_uses(root: Path = SRC) -> list[tuple[str, str, str]]:
    """(module, private name, where) of every use across modules (see above)."""
    modules = _modules(root)
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    defined = {name: _defined_names(tree) for name, tree in trees.items()}
    owners: dict[str, set[str]] = {}
    for name, names in defined.items():
        for n in filter(_private, names):
            owners.setdefault(n, set()).add(name)
    found: list[tuple[str, str, str]] = []
    for name, tree in trees.items():
        package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]

        def crossed(
            private: str, where: int, owner_modules: set[str], *, _name: str = name
        ) -> None:
            # inside a shared unit, a name one of the unit's modules defines is the unit's
            if not any(
                _layer(_name) in SHARED_PRIVATE and _layer(m) == _layer(_name)
                for m in owner_modules
            ):
                found.append((_name, private, f"{_name}:{where}"))

        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package.split(".")[: len(package.split(".")) - node.level + 1]
                        source = ".".join([*base, *([node.module] if node.module else [])])
                    elif (node.module or "").startswith("memagent"):
                        source = _rel(node.module or "")
                    else:
                        continue
                    pairs = [(source, a.name) for a in node.names]
                else:
                    pairs = [
                        (_rel(a.name), "") for a in node.names if a.name.startswith("memagent")
                    ]
                for source, imported in pairs:
                    dotted = ".".join(p for p in (source, imported) if p)
                    parts = dotted.split(".")
                    for i, part in enumerate(parts):
                        module = ".".join(parts[: i + 1])
                        if module not in modules:
                            break
                        if _private(part) and not _within(package, ".".join(parts[:i])):
                            found.append((name, part, f"{name}:{node.lineno}"))
                            break
                    if imported and _private(imported) and dotted not in modules:
                        crossed(imported, node.lineno, {source})
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                value = node.value
                if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                    continue
                if node.attr in defined[name] or node.attr not in owners:
                    continue  # its own name, or not one of the package's (a library's)
                crossed(node.attr, node.lineno, owners[node.attr])
    return found


def test_no_private_name_is_used_across_modules() -> None:
    uses = sorted(where for _, _, where in _private_uses())
    assert uses == [], "private names used outside their module"


def test_the_private_check_sees_real_uses(tmp_path: Path) -> None:
    files = {
        "store/__init__.py": "from memagent.store._impl import Store\n",
        "store/_impl.py": (
            "class Store:\n    def _lock(self): ...\n    def _hook(self): ...\n"
            "    def lock(self):\n        return self._lock()\n_LIMIT = 3\n"
        ),
        "store/pg.py": (
            "from memagent.store._impl import Store\n"
            "class PgStore(Store):\n    def _hook(self):\n        return super()._hook()\n"
        ),
        "api.py": (
            "from typing import Protocol\nfrom memagent.store import Store\n"
            "from memagent.store._impl import _LIMIT\n"
            "class Lockable(Protocol):\n    def _lock(self): ...\n"
            "def save(store: Store, out):\n"
            "    with store.lock(), store._lock():\n        return out._exit()\n"
        ),
        "web.py": "from memagent.store._impl import Store\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    found = {(module, name) for module, name, _ in _private_uses(tmp_path)}
    # the Protocol declares `_lock` but does not make it api's; `_exit` is a library's
    assert found == {("api", "_LIMIT"), ("api", "_impl"), ("api", "_lock"), ("web", "_impl")}


def test_no_two_classes_share_a_name() -> None:
    """One meaning per name: a class name says which class, wherever it is imported."""
    where: dict[str, list[str]] = {}
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not _private(node.name):
                where.setdefault(node.name, []).append(name)
    assert {n: m for n, m in where.items() if len(m) > 1} == {}
