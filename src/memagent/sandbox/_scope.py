"""Name scopes of the interpreter, and the static analysis of a function body
that Python's compiler would do (which names are local, global, nonlocal)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_EMPTY: frozenset[str] = frozenset()


class Scope:
    """One namespace: the module globals, a function call, a class body or a
    comprehension. Lookups walk `parent` up to the globals.

    A call or a comprehension makes one, so it is cheap to create: only `vars`
    and `parent` are set on every instance, the rest default on the class (no
    `__slots__`, which would need all ten set each time)."""

    is_class = False
    is_comp = False
    local_names = _EMPTY
    globals_ = _EMPTY
    nonlocals = _EMPTY
    sink: list[Any] | None = None
    self_obj: Any = None
    owner: Any = None

    def __init__(
        self,
        vars: dict[str, Any],
        parent: Scope | None,
        local_names: frozenset[str] = _EMPTY,
        globals_: frozenset[str] = _EMPTY,
        nonlocals: frozenset[str] = _EMPTY,
        *,
        is_class: bool = False,
        is_comp: bool = False,
    ) -> None:
        self.vars = vars
        self.parent = parent
        if local_names:
            self.local_names = local_names
        if globals_:
            self.globals_ = globals_
        if nonlocals:
            self.nonlocals = nonlocals
        if is_class:
            self.is_class = True
        if is_comp:
            self.is_comp = True


class CompScope(Scope):
    """A comprehension's scope (the common case, made with two stores)."""

    is_comp = True

    def __init__(self, vars: dict[str, Any], parent: Scope | None) -> None:
        self.vars = vars
        self.parent = parent


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


MODULE, FUNCTION, CLASS, COMP = "module", "function", "class", "comprehension"


class Ctx:
    """The compile-time view of a scope the compiled code will run in: its kind
    and which names are its own, so each name resolves to one way of loading it
    when the code is compiled, not on every access. `parent` mirrors the runtime
    `Scope.parent` exactly (a function's parent skips one class body, as
    `make_function` does), so a free name is `parent` hops away at run time.
    `weight` counts the operations of the statement being compiled (each
    expression node is one, as the tree-walker counted them)."""

    __slots__ = ("globals_", "kind", "local_names", "nonlocals", "parent", "weight")

    def __init__(
        self,
        kind: str,
        parent: Ctx | None,
        local_names: frozenset[str] = frozenset(),
        globals_: frozenset[str] = frozenset(),
        nonlocals: frozenset[str] = frozenset(),
    ) -> None:
        self.kind = kind
        self.parent = parent
        self.local_names = local_names
        self.globals_ = globals_
        self.nonlocals = nonlocals
        self.weight = 0

    def direct(self, name: str) -> bool:
        """Whether `name` lives in this scope's own `vars` under that key."""
        kind = self.kind
        if kind == MODULE:
            return True
        if kind == FUNCTION:
            return name in self.local_names
        if kind == COMP:
            return name in self.local_names
        return False

    def root(self) -> Ctx:
        c = self
        while c.parent is not None:
            c = c.parent
        return c


@dataclass(eq=False)
class FunctionCode:
    """A `def` or `lambda` compiled once: its body as a closure, the parameter
    layout for binding arguments quickly, and the static analysis."""

    node: ast.FunctionDef | ast.Lambda
    info: FuncInfo
    body: Callable[[Scope], Any] | None  # None: a body that is only `return <expr>`
    params: tuple[str, ...]
    simple: bool  # positional parameters only: no defaults, *args, **kwargs or kw-only
    first: str | None
    name: str
    is_lambda: bool = False
    # a body ending in `return <expr>`: that expression, run after `body` (the
    # statements before it) without a `Flow` for the return, and its line
    tail: Callable[[Scope], Any] | None = None
    tail_line: int = 0
    tail_weight: int = 0  # the operations of the whole body, charged at the call
