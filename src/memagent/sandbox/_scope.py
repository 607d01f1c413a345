"""Name scopes of the interpreter, and the static analysis of a function body
that Python's compiler would do (which names are local, global, nonlocal)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


class Scope:
    """One namespace: the module globals, a function call, a class body or a
    comprehension. Lookups walk `parent` up to the globals."""

    __slots__ = (
        "globals_",
        "is_class",
        "is_comp",
        "local_names",
        "nonlocals",
        "owner",
        "parent",
        "self_obj",
        "sink",
        "vars",
    )

    def __init__(
        self,
        vars: dict[str, Any],
        parent: Scope | None,
        local_names: frozenset[str] = frozenset(),
        globals_: frozenset[str] = frozenset(),
        nonlocals: frozenset[str] = frozenset(),
        *,
        is_class: bool = False,
        is_comp: bool = False,
    ) -> None:
        self.vars = vars
        self.parent = parent
        self.local_names = local_names
        self.globals_ = globals_
        self.nonlocals = nonlocals
        self.is_class = is_class
        self.is_comp = is_comp
        self.sink: list[Any] | None = None
        self.self_obj: Any = None
        self.owner: Any = None


@dataclass(frozen=True)
class FuncInfo:
    local_names: frozenset[str]
    globals_: frozenset[str]
    nonlocals: frozenset[str]
    is_generator: bool


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_own(nodes: list[ast.AST]) -> list[ast.AST]:
    """Every node of a function body that belongs to that function's own scope."""
    out: list[ast.AST] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, _NESTED):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(node.decorator_list)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(node.args.defaults)
                stack.extend(d for d in node.args.kw_defaults if d is not None)
            if isinstance(node, ast.ClassDef):
                stack.extend(node.bases)
            continue
        if isinstance(node, _COMPS):
            stack.append(node.generators[0].iter)
            # walrus targets inside a comprehension bind in the enclosing scope
            stack.extend(n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def analyse_function(node: ast.FunctionDef | ast.Lambda) -> FuncInfo:
    args = node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        params.append(args.vararg.arg)
    if args.kwarg:
        params.append(args.kwarg.arg)
    body: list[ast.AST] = list(node.body) if isinstance(node, ast.FunctionDef) else [node.body]
    names: set[str] = set(params)
    globals_: set[str] = set()
    nonlocals: set[str] = set()
    is_generator = False
    for sub in _walk_own(body):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for alias in sub.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
        elif isinstance(sub, ast.Global):
            globals_.update(sub.names)
        elif isinstance(sub, ast.Nonlocal):
            nonlocals.update(sub.names)
        elif isinstance(sub, (ast.Yield, ast.YieldFrom)):
            is_generator = True
    names -= globals_ | nonlocals
    return FuncInfo(frozenset(names), frozenset(globals_), frozenset(nonlocals), is_generator)
