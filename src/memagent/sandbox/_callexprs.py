"""Calls, attributes and subscripts, compiled.

The common shapes get their own closures: a method of a built-in value
(`parts.append(x)`, `d.get(w, 0)`) and a call of a name (`str(i)`, `f(x)`)
with plain positional arguments. They make the checks `Interpreter.getattr`
and `_calls.call` make for the same callables (the attribute policy, metered
arguments, the size of the result) and leave every other callable to
`_calls.call`."""

from __future__ import annotations

import ast
from types import FunctionType
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._fast import operand
from memagent.sandbox._names import ExprFn
from memagent.sandbox._policy import (
    _BUILTIN_CALLABLE,
    _FAST_TYPES,
    _RISKY_NAMES,
    _SIMPLE,
    _Super,
)
from memagent.sandbox._scope import Ctx, Scope


def e_attribute(it: Compiler, node: ast.Attribute, ctx: Ctx) -> ExprFn:
    base = it.compile_expr(node.value, ctx)
    name = node.attr
    getattr_ = it.getattr
    if name[:1] == "_" or name in _RISKY_NAMES:
        return lambda s: getattr_(base(s), name)
    fast = _FAST_TYPES

    def attribute(s: Scope) -> Any:
        o = base(s)
        if type(o) in fast:
            return getattr(o, name)
        return getattr_(o, name)

    return attribute


def e_subscript(it: Compiler, node: ast.Subscript, ctx: Ctx) -> ExprFn:
    n, _, obj = operand(it, node.value, ctx)
    key = it.compile_expr(node.slice, ctx)
    getitem = it.getitem
    fast = _FAST_TYPES
    if n is not None:
        name = n

        def subscript_name(s: Scope) -> Any:
            try:
                o = s.vars[name]
            except KeyError:
                o = obj(s)
            k = key(s)
            if type(o) in fast:
                return o[k]
            return getitem(o, k)

        return subscript_name

    def subscript(s: Scope) -> Any:
        o = obj(s)
        k = key(s)
        if type(o) in fast:
            return o[k]
        return getitem(o, k)

    return subscript


def e_call(it: Compiler, node: ast.Call, ctx: Ctx) -> ExprFn:
    func_node = node.func
    if isinstance(func_node, ast.Name) and func_node.id == "super" and not node.args:
        return lambda s: _super(s)
    if node.keywords or any(type(a) is ast.Starred for a in node.args):
        return _general_call(it, node, ctx)
    if isinstance(func_node, ast.Attribute) and len(node.args) <= 2:
        ctx.weight += 1  # the attribute node
        return _method_call(it, func_node, list(node.args), ctx)
    func = it.compile_expr(func_node, ctx)
    args = [it.compile_expr(a, ctx) for a in node.args]
    call = it.call
    if len(args) == 1:
        return _name_call1(it, func, args[0])
    if not args:
        return lambda s: call(func(s), (), {})
    return lambda s: call(func(s), [a(s) for a in args], {})


def _name_call1(it: Compiler, func: ExprFn, arg: ExprFn) -> ExprFn:
    call, check_size, wrap_arg = it.call, it.check_size, it._wrap_arg
    nowrap, type_calls = it.nowrap, it.type_calls
    simple = _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE

    def call1(s: Scope) -> Any:
        f = func(s)
        x = arg(s)
        tf = type(f)
        if tf is builtin or tf is FunctionType:
            if type(x) not in simple and id(f) not in nowrap:
                x = wrap_arg(x)
            return check_size(f(x))
        if tf is type:
            special = type_calls.get(f)  # str, int, bytes, bytearray: never a metaclass
            if special is not None:
                if type(x) not in simple:
                    x = wrap_arg(x)
                return check_size(special(x))
        return call(f, (x,), {})

    return call1


def _method_call(
    it: Compiler, func_node: ast.Attribute, arg_nodes: list[ast.expr], ctx: Ctx
) -> ExprFn:
    base = it.compile_expr(func_node.value, ctx)
    name = func_node.attr
    args = [it.compile_expr(a, ctx) for a in arg_nodes]
    call, getattr_ = it.call, it.getattr
    if name[:1] == "_" or name in _RISKY_NAMES:
        return lambda s: call(getattr_(base(s), name), [a(s) for a in args], {})
    check_size, wrap_arg = it.check_size, it._wrap_arg
    fast, simple = _FAST_TYPES, _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE
    if not args:

        def method0(s: Scope) -> Any:
            o = base(s)
            if type(o) in fast:
                m: Any = getattr(o, name)
                if type(m) is builtin:
                    r = m()
                    return r if r is None else check_size(r)
                return call(m, (), {})
            return call(getattr_(o, name), (), {})

        return method0
    if len(args) == 1:
        a0 = args[0]

        def method1(s: Scope) -> Any:
            o = base(s)
            if type(o) in fast:
                m: Any = getattr(o, name)
                x = a0(s)
                if type(m) is builtin:
                    if type(x) not in simple:
                        x = wrap_arg(x)
                    r = m(x)
                    return r if r is None else check_size(r)
                return call(m, (x,), {})
            m = getattr_(o, name)
            return call(m, (a0(s),), {})

        return method1
    a0, a1 = args

    def method2(s: Scope) -> Any:
        o = base(s)
        if type(o) in fast:
            m: Any = getattr(o, name)
            x = a0(s)
            y = a1(s)
            if type(m) is builtin:
                if type(x) not in simple:
                    x = wrap_arg(x)
                if type(y) not in simple:
                    y = wrap_arg(y)
                r = m(x, y)
                return r if r is None else check_size(r)
            return call(m, (x, y), {})
        m = getattr_(o, name)
        return call(m, (a0(s), a1(s)), {})

    return method2


def _general_call(it: Compiler, node: ast.Call, ctx: Ctx) -> ExprFn:
    func = it.compile_expr(node.func, ctx)
    parts = [
        (True, it.compile_expr(a.value, ctx))
        if isinstance(a, ast.Starred)
        else (False, it.compile_expr(a, ctx))
        for a in node.args
    ]
    keywords = [(kw.arg, it.compile_expr(kw.value, ctx)) for kw in node.keywords]

    def general_call(s: Scope) -> Any:
        f = func(s)
        args: list[Any] = []
        for starred, a in parts:
            if starred:
                args.extend(it.collect(a(s)))
                it.need_len(len(args), "coll")
            else:
                args.append(a(s))
        kwargs: dict[str, Any] = {}
        for key, v in keywords:
            if key is None:
                mapping = v(s)
                if not isinstance(mapping, dict):
                    raise TypeError("argument after ** must be a mapping")
                for k, value in mapping.items():
                    if not isinstance(k, str):
                        raise TypeError("keywords must be strings")
                    if k in kwargs:
                        raise TypeError(f"got multiple values for keyword argument '{k}'")
                    kwargs[k] = value
            else:
                kwargs[key] = v(s)
        return it.call(f, args, kwargs)

    return general_call


def _super(scope: Scope) -> Any:
    s: Scope | None = scope
    while s is not None and s.owner is None:
        s = s.parent
    if s is None:
        raise RuntimeError("super(): no arguments")
    return _Super(s.owner, s.self_obj)
