"""Comprehensions and generator expressions, compiled.

The first iterable is evaluated in the enclosing scope (as in Python); the
targets, conditions, later iterables and the element run in the
comprehension's own scope, and each item pulled charges the operations of
what runs for it."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import ExprFn, StoreFn
from memagent.sandbox._objects import Metered
from memagent.sandbox._scope import COMP, CompScope, Ctx, Scope
from memagent.sandbox._targets import compile_target
from memagent.sandbox.limits import LimitExceeded

_new_scope = object.__new__  # a CompScope without running its __init__

# one generator: (its iterable, None for the first one, evaluated outside),
# the target store, the conditions, the operations charged per item
Level = tuple[ExprFn | None, StoreFn, list[ExprFn], int]


def _target_names(generators: list[ast.comprehension]) -> frozenset[str]:
    names: set[str] = set()
    for gen in generators:
        for n in ast.walk(gen.target):
            if isinstance(n, ast.Name):
                names.add(n.id)
    return frozenset(names)


def _compile(
    it: Compiler, generators: list[ast.comprehension], elts: list[ast.expr], ctx: Ctx
) -> tuple[ExprFn, list[Level], list[ExprFn], Ctx]:
    first = it.compile_expr(generators[0].iter, ctx)
    cctx = Ctx(COMP, ctx, _target_names(generators))
    levels: list[Level] = []
    for i, gen in enumerate(generators):
        cctx.weight = 1
        iterable = None if i == 0 else it.compile_expr(gen.iter, cctx)
        store = compile_target(it, gen.target, cctx)
        ifs = [it.compile_expr(c, cctx) for c in gen.ifs]
        levels.append((iterable, store, ifs, cctx.weight))
    cctx.weight = 0
    out = [it.compile_expr(e, cctx) for e in elts]
    # the element's operations are charged with the innermost item
    iterable, store, ifs, weight = levels[-1]
    levels[-1] = (iterable, store, ifs, weight + cctx.weight)
    return first, levels, out, cctx


def _runner(
    it: Compiler, levels: list[Level], emit: Callable[[Scope], None]
) -> Callable[[Scope, Any], None]:
    """Runs the generators over the first iterable (already evaluated), calling
    `emit` for every combination that passes the conditions."""
    iterate, truth = it.iterate, it.truth

    def run(cs: Scope, items: Any, depth: int = 0) -> None:
        _, store, ifs, weight = levels[depth]
        last = depth == len(levels) - 1
        for item in iterate(items):
            it.ops += weight
            if it.ops >= it.next_check:
                it.check_limits()
            store(cs, item)
            if ifs and not all(truth(c(cs)) for c in ifs):
                continue
            if last:
                emit(cs)
            else:
                nxt = levels[depth + 1][0]
                assert nxt is not None
                run(cs, nxt(cs), depth + 1)

    return run


def _collect(it: Compiler, node: Any, ctx: Ctx, kind: type) -> ExprFn:
    is_dict = kind is dict
    elts = [node.key, node.value] if is_dict else [node.elt]
    first, levels, out_fns, _ = _compile(it, node.generators, elts, ctx)
    limit = it.limits.max_collection_len
    account = it.account
    state: list[Any] = []

    if is_dict:
        key_fn, value_fn = out_fns

        depths = it.tuples

        def emit(cs: Scope) -> None:
            out = state[-1]
            k = key_fn(cs)
            if type(k) is tuple:
                depths.depth(k)  # hashed in C: bounded nesting first
            out[k] = value_fn(cs)
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")

    else:
        elt = out_fns[0]
        add_name = "append" if kind is list else "add"

        depths_ = it.tuples
        hashed = kind is not list

        def emit(cs: Scope) -> None:
            out = state[-1]
            value = elt(cs)
            if hashed and type(value) is tuple:
                depths_.depth(value)  # a set hashes it in C: bounded nesting first
            getattr(out, add_name)(value)
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")

    run = _runner(it, levels, emit)

    def comprehension(s: Scope) -> Any:
        items = first(s)
        cs = _new_scope(CompScope)
        cs.vars = {}
        cs.parent = s
        out = kind()
        state.append(out)
        try:
            run(cs, items)
        finally:
            state.pop()
        account(64 + 8 * len(out))
        return out

    _, store, ifs, weight = levels[0]
    if kind is not list or len(levels) > 1:
        return comprehension
    # [elt for x in items if cond]: one generator, the common shape
    elt = out_fns[0]
    iterate, truth = it.iterate, it.truth
    target = node.generators[0].target
    name = target.id if isinstance(target, ast.Name) else None
    bindable, check_bind = it.bindable, it.check_bind

    def list_comprehension(s: Scope) -> Any:
        items = first(s)
        cv: dict[str, Any] = {}
        cs = _new_scope(CompScope)
        cs.vars = cv
        cs.parent = s
        if name is not None and name not in bindable:
            check_bind(name)
        out: list[Any] = []
        append = out.append
        for item in iterate(items):
            it.ops += weight
            if it.ops >= it.next_check:
                it.check_limits()
            if name is not None:
                cv[name] = item
            else:
                store(cs, item)
            if ifs:
                kept = True
                for cond in ifs:
                    t = cond(cs)
                    if not (t is True or (t is not False and truth(t))):
                        kept = False
                        break
                if not kept:
                    continue
            append(elt(cs))
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")
        account(64 + 8 * len(out))
        return out

    if name is None:
        return list_comprehension
    return _list_comp_name(it, first, name, ifs, elt, weight, node.elt)


_PLAIN_ITERABLES = frozenset({list, tuple, range, str, dict, set, frozenset, bytes})


def _list_comp_name(
    it: Compiler,
    first: ExprFn,
    name: str,
    ifs: list[ExprFn],
    elt: ExprFn,
    weight: int,
    elt_node: ast.expr,
) -> ExprFn:
    """`[elt for name in items if cond]`: `list_comprehension` for a name
    target, with `iter()` of a built-in container and the final charge inline
    and `[name for name in ...]` appending the item itself."""
    iterate, truth = it.iterate, it.truth
    bindable, check_bind = it.bindable, it.check_bind
    limit, max_alloc, account = it.limits.max_collection_len, it.limits.max_total_alloc, it.account
    plain = _PLAIN_ITERABLES
    same = type(elt_node) is ast.Name and elt_node.id == name  # the element is the item

    def list_comp_name(s: Scope) -> Any:
        items = first(s)
        cv: dict[str, Any] = {}
        cs = _new_scope(CompScope)
        cs.vars = cv
        cs.parent = s
        if name not in bindable:
            check_bind(name)
        out: list[Any] = []
        append = out.append
        for item in iter(items) if type(items) in plain else iterate(items):
            it.ops += weight
            if it.ops >= it.next_check:
                it.check_limits()
            cv[name] = item
            if ifs:
                kept = True
                for cond in ifs:
                    t = cond(cs)
                    if not (t is True or (t is not False and truth(t))):
                        kept = False
                        break
                if not kept:
                    continue
            append(item if same else elt(cs))
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")
        it.allocated += 64 + 8 * len(out)  # what `account` charges
        if it.allocated > max_alloc:
            account(0)
        return out

    return list_comp_name


def e_listcomp(it: Compiler, node: ast.ListComp, ctx: Ctx) -> ExprFn:
    return _collect(it, node, ctx, list)


def e_setcomp(it: Compiler, node: ast.SetComp, ctx: Ctx) -> ExprFn:
    return _collect(it, node, ctx, set)


def e_dictcomp(it: Compiler, node: ast.DictComp, ctx: Ctx) -> ExprFn:
    return _collect(it, node, ctx, dict)


def e_genexp(it: Compiler, node: ast.GeneratorExp, ctx: Ctx) -> ExprFn:
    first, levels, (elt,), _ = _compile(it, node.generators, [node.elt], ctx)
    iterate, truth = it.iterate, it.truth

    def gen(cs: Scope, items: Any, depth: int) -> Iterator[Any]:
        _, store, ifs, weight = levels[depth]
        last = depth == len(levels) - 1
        for item in iterate(items):
            it.ops += weight
            if it.ops >= it.next_check:
                it.check_limits()
            store(cs, item)
            if ifs and not all(truth(c(cs)) for c in ifs):
                continue
            if last:
                yield elt(cs)
            else:
                nxt = levels[depth + 1][0]
                assert nxt is not None
                yield from gen(cs, nxt(cs), depth + 1)

    def genexp(s: Scope) -> Any:
        items = first(s)
        cs = _new_scope(CompScope)
        cs.vars = {}
        cs.parent = s
        return Metered(it, gen(cs, items, 0))

    return genexp
