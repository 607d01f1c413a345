"""Compile-time name resolution and blocks.

A name is resolved once, when the code is compiled, to one way of loading or
storing it (the scope's own dict, the globals, the builtins, or a fixed number
of hops up the scope chain), the way CPython's compiler resolves a name to
`LOAD_FAST`/`LOAD_GLOBAL`/`LOAD_DEREF`. Blocks charge their statements'
operations in one step and record the line of the statement an exception came
from (the innermost one wins)."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._policy import _MISSING, Flow, _Break, _Continue, _Return, is_dunder
from memagent.sandbox._scope import CLASS, COMP, FUNCTION, MODULE, Ctx, Scope
from memagent.sandbox.limits import SecurityError

ExprFn = Callable[[Scope], Any]
StmtFn = Callable[[Scope], Any]
StoreFn = Callable[[Scope, Any], None]

_FLOW = frozenset({_Break, _Continue, _Return})


def mark(it: Compiler, exc: BaseException, line: int) -> None:
    """Note on `exc` the line of the statement it came from, unless a statement
    nested deeper already did; the run's error message names that line."""
    if type(exc) in _FLOW:
        return
    if getattr(exc, "_sandbox_line", None) is None:
        with contextlib.suppress(AttributeError, TypeError):
            exc._sandbox_line = line  # type: ignore[attr-defined]
        it.line = line


def name_error(it: Compiler, name: str) -> BaseException:
    if is_dunder(name):
        return SecurityError(f"access to '{name}' is not allowed")
    if name in it.denied_names:
        return SecurityError(f"'{name}' is not available in the sandbox")
    return NameError(f"name '{name}' is not defined")


def loader(it: Compiler, name: str, ctx: Ctx) -> ExprFn:
    """A closure that loads `name` in a scope compiled as `ctx`."""
    kind = ctx.kind
    if kind == MODULE:
        return _module_loader(it, name)
    if kind == FUNCTION:
        if name in ctx.local_names:

            def load_local(s: Scope) -> Any:
                try:
                    return s.vars[name]
                except KeyError:
                    raise UnboundLocalError(
                        f"cannot access local variable '{name}' "
                        "where it is not associated with a value"
                    ) from None

            return load_local
        if name in ctx.globals_:
            module = _module_loader(it, name)
            global_scope = it.global_scope
            return lambda s: module(global_scope)
    if kind != CLASS and resolves_global(ctx, name):
        return _free_global_loader(it, name)
    assert ctx.parent is not None
    outer = loader(it, name, ctx.parent)
    if kind == COMP and name in ctx.local_names:

        def load_comp(s: Scope) -> Any:
            try:
                return s.vars[name]
            except KeyError:
                raise NameError(f"cannot access free variable '{name}'") from None

        return load_comp
    if kind == CLASS:

        def load_class(s: Scope) -> Any:
            value = s.vars.get(name, _MISSING)
            if value is _MISSING:
                return outer(s.parent)  # type: ignore[arg-type]
            return value

        return load_class
    return lambda s: outer(s.parent)  # type: ignore[arg-type]


def resolves_global(ctx: Ctx, name: str) -> bool:
    """Whether `name`, read in a function or comprehension compiled as `ctx`,
    is a global or builtin whatever runs: no enclosing function or
    comprehension has it as its own and no class body lies between (a class
    body's names are looked up at run time)."""
    c: Ctx | None = ctx
    while c is not None and c.kind != MODULE:
        if c.kind == CLASS or name in c.local_names or name in c.nonlocals:
            return False
        if c.kind == FUNCTION and name in c.globals_:
            return True
        c = c.parent
    return c is not None


def _free_global_loader(it: Compiler, name: str) -> ExprFn:
    """A global or builtin read from inside a function: the module's dict,
    then the builtins, without walking the scope chain up to them (what
    `_module_loader` does on the global scope)."""
    builtins = it.builtins
    global_scope = it.global_scope

    def load_free_global(s: Scope) -> Any:
        value = global_scope.vars.get(name, _MISSING)
        if value is _MISSING:
            value = builtins.get(name, _MISSING)
            if value is _MISSING:
                raise name_error(it, name)
        return value

    return load_free_global


def _module_loader(it: Compiler, name: str) -> ExprFn:
    builtins = it.builtins
    if name in builtins:

        def load_builtin(s: Scope) -> Any:
            value = s.vars.get(name, _MISSING)
            if value is _MISSING:
                value = builtins.get(name, _MISSING)
                if value is _MISSING:
                    raise name_error(it, name)
            return value

        return load_builtin

    def load_global(s: Scope) -> Any:
        try:
            return s.vars[name]
        except KeyError:
            pass
        value = builtins.get(name, _MISSING)
        if value is _MISSING:
            raise name_error(it, name)
        return value

    return load_global


def storer(it: Compiler, name: str, ctx: Ctx) -> StoreFn:
    """A closure that binds `name` in a scope compiled as `ctx`; the name is
    checked (no dunders, no tools) on every store, as tools may be added to a
    live session between runs of cached code."""
    bindable = it.bindable
    check_bind = it.check_bind
    if ctx.kind == FUNCTION and name in ctx.globals_:
        globals_ = it.globals

        def store_global(s: Scope, value: Any) -> None:
            if name not in bindable:
                check_bind(name)
            globals_[name] = value

        return store_global
    if ctx.kind == FUNCTION and name in ctx.nonlocals:
        store = it.store

        def store_nonlocal(s: Scope, value: Any) -> None:
            store(name, value, s)

        return store_nonlocal

    def store_own(s: Scope, value: Any) -> None:
        if name not in bindable:
            check_bind(name)
        s.vars[name] = value

    return store_own


def charge(it: Compiler, weight: int) -> None:
    """Charge `weight` operations, checking the limits when a check is due."""
    it.ops += weight
    if it.ops >= it.next_check:
        it.check_limits()


def check_at(it: Compiler, line: int) -> None:
    """`check_limits` for a loop's per-iteration charge: a limit reached there
    is reported at the loop body's first line, as the tree-walker did."""
    try:
        it.check_limits()
    except BaseException as exc:
        mark(it, exc, line)
        raise


def block(it: Compiler, fns: list[StmtFn], lines: list[int], weight: int) -> StmtFn:
    """Run compiled statements in order; `weight` > 0 charges them on entry
    (loops charge their body themselves, once per iteration). Returns the
    `Flow` of a statement that leaves the block (anything else: go on)."""
    if not fns:
        if weight:
            return lambda s: charge(it, weight)
        return lambda s: None
    if len(fns) == 1:
        f, line = fns[0], lines[0]
        if weight:

            def block1_charged(s: Scope) -> Any:
                it.ops += weight
                if it.ops >= it.next_check:
                    it.check_limits()
                try:
                    return f(s)
                except BaseException as exc:
                    mark(it, exc, line)
                    raise

            return block1_charged

        def block1(s: Scope) -> Any:
            try:
                return f(s)
            except BaseException as exc:
                mark(it, exc, line)
                raise

        return block1
    line_of = dict(zip(fns, lines, strict=True))
    run = tuple(fns)

    def block_n(s: Scope) -> Any:
        if weight:
            it.ops += weight
            if it.ops >= it.next_check:
                it.check_limits()
        f = run[0]
        try:
            for f in run:
                r = f(s)
                if r is not None and type(r) is Flow:
                    return r
        except BaseException as exc:
            mark(it, exc, line_of.get(f, 0))
            raise
        return None

    return block_n


def has_jump(body: list[Any]) -> bool:
    """Whether a loop body has a `break` or `continue` of its own (not inside a
    nested loop or function): without one, the loop needs no per-iteration
    `try`."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(
            node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            if isinstance(node, (ast.For, ast.While)):
                stack.extend(node.orelse)
            continue
        if not isinstance(node, ast.expr):
            stack.extend(ast.iter_child_nodes(node))
    return False
