"""Assignment targets compiled once: a name, a subscript, an attribute, or a
tuple/list to unpack (with at most one starred target)."""

from __future__ import annotations

import ast
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import StoreFn, charge, storer
from memagent.sandbox._objects import SandboxInstance
from memagent.sandbox._policy import is_dunder
from memagent.sandbox._scope import Ctx, Scope


def _raise_at_run(exc: BaseException) -> StoreFn:
    def fail(s: Scope, value: Any) -> None:
        raise exc

    return fail


def compile_target(it: Compiler, target: ast.expr, ctx: Ctx) -> StoreFn:
    t = type(target)
    if t is ast.Name:
        assert isinstance(target, ast.Name)
        return storer(it, target.id, ctx)
    if t is ast.Tuple or t is ast.List:
        assert isinstance(target, (ast.Tuple, ast.List))
        return _unpacker(it, target.elts, ctx)
    if t is ast.Subscript:
        assert isinstance(target, ast.Subscript)
        obj = it.compile_expr(target.value, ctx)
        key = it.compile_expr(target.slice, ctx)
        setitem = it.setitem
        depths = it.tuples

        def store_item(s: Scope, value: Any) -> None:
            o = obj(s)
            k = key(s)
            if type(k) is tuple:
                depths.depth(k)  # hashed in C: bounded nesting first
            if type(o) is dict:
                o[k] = value
            else:
                setitem(o, k, value)

        return store_item
    if t is ast.Attribute:
        assert isinstance(target, ast.Attribute)
        base = it.compile_expr(target.value, ctx)
        attr = target.attr
        setattr_ = it.setattr
        if is_dunder(attr):
            return lambda s, value: setattr_(base(s), attr, value)
        instance = SandboxInstance

        def store_attr(s: Scope, value: Any) -> None:
            o = base(s)
            if type(o) is instance:
                o._attrs[attr] = value  # what `setattr` does for a name that is not a dunder
            else:
                setattr_(o, attr, value)

        return store_attr
    if t is ast.Starred:
        return _raise_at_run(SyntaxError("starred assignment target must be in a list or tuple"))
    return _raise_at_run(SyntaxError(f"cannot assign to {t.__name__}"))


def _unpacker(it: Compiler, elts: list[ast.expr], ctx: Ctx) -> StoreFn:
    star = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
    if len(star) > 1:
        return _raise_at_run(SyntaxError("multiple starred expressions in assignment"))
    stores = [compile_target(it, e.value if isinstance(e, ast.Starred) else e, ctx) for e in elts]
    n = len(elts)
    if not star:
        iterate = it.iterate
        tick = it.tick

        def unpack(s: Scope, value: Any) -> None:
            t = type(value)
            if t is tuple or t is list:
                items = value
                charge(it, min(len(items), n + 1))
                if len(items) > n:
                    raise ValueError(f"too many values to unpack (expected {n})")
            else:
                items = []
                for x in iterate(value):
                    tick()
                    items.append(x)
                    if len(items) > n:
                        raise ValueError(f"too many values to unpack (expected {n})")
            if len(items) < n:
                raise ValueError(f"not enough values to unpack (expected {n}, got {len(items)})")
            for store, x in zip(stores, items, strict=True):
                store(s, x)

        return unpack
    k = star[0]
    collect = it.collect

    def unpack_star(s: Scope, value: Any) -> None:
        items = collect(value)
        after = n - k - 1
        if len(items) < n - 1:
            raise ValueError(
                f"not enough values to unpack (expected at least {n - 1}, got {len(items)})"
            )
        for store, x in zip(stores[:k], items[:k], strict=True):
            store(s, x)
        stores[k](s, items[k : len(items) - after])
        for store, x in zip(stores[k + 1 :], items[len(items) - after :], strict=True):
            store(s, x)

    return unpack_star
