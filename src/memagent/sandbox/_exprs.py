"""Expression compilers: one function per expression type, taking the compiler
as a typed argument (`Compiler`) and the compile-time scope (`Ctx`), returning
the closure that evaluates the expression; `EXPRESSIONS` maps node types to
them. Calls and comprehensions live in `_callexprs` and `_comps`."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._callexprs import e_attribute, e_call, e_subscript
from memagent.sandbox._calls import compile_function
from memagent.sandbox._comps import e_dictcomp, e_genexp, e_listcomp, e_setcomp
from memagent.sandbox._fast import compile_binop, compile_compare, fold
from memagent.sandbox._names import ExprFn, loader
from memagent.sandbox._objects import SandboxInstance
from memagent.sandbox._policy import _MISSING
from memagent.sandbox._scope import COMP, Ctx, Scope
from memagent.sandbox._targets import compile_target


def e_constant(it: Compiler, node: ast.Constant, ctx: Ctx) -> ExprFn:
    value = node.value
    return lambda s: value


def e_name(it: Compiler, node: ast.Name, ctx: Ctx) -> ExprFn:
    return loader(it, node.id, ctx)


def e_binop(it: Compiler, node: ast.BinOp, ctx: Ctx) -> ExprFn:
    return compile_binop(it, node, ctx)


def e_compare(it: Compiler, node: ast.Compare, ctx: Ctx) -> ExprFn:
    return compile_compare(it, node, ctx)


def e_unaryop(it: Compiler, node: ast.UnaryOp, ctx: Ctx) -> ExprFn:
    value = fold(node)
    if value is not _MISSING:
        return lambda s: value
    operand = it.compile_expr(node.operand, ctx)
    op = type(node.op)
    truth = it.truth
    if op is ast.Not:
        return lambda s: not truth(operand(s))
    name = {ast.USub: "__neg__", ast.UAdd: "__pos__"}.get(op)

    def unary(s: Scope) -> Any:
        v = operand(s)
        if isinstance(v, SandboxInstance):
            m = it.dunder(v, name) if name else None
            if m is None:
                raise TypeError(f"bad operand type for unary operator: '{v._cls._name}'")
            return it.call(m, (), {})
        if op is ast.USub:
            return -v
        if op is ast.UAdd:
            return +v
        return ~v

    return unary


def e_boolop(it: Compiler, node: ast.BoolOp, ctx: Ctx) -> ExprFn:
    values = [it.compile_expr(v, ctx) for v in node.values]
    truth = it.truth
    if isinstance(node.op, ast.And):

        def and_(s: Scope) -> Any:
            value: Any = None
            for v in values:
                value = v(s)
                if not (value is True or (value is not False and truth(value))):
                    return value
            return value

        return and_

    def or_(s: Scope) -> Any:
        value: Any = None
        for v in values:
            value = v(s)
            if value is True or (value is not False and truth(value)):
                return value
        return value

    return or_


def e_slice(it: Compiler, node: ast.Slice, ctx: Ctx) -> ExprFn:
    constant = fold(node)
    if constant is not _MISSING:
        return lambda s: constant
    lower = None if node.lower is None else it.compile_expr(node.lower, ctx)
    upper = None if node.upper is None else it.compile_expr(node.upper, ctx)
    step = None if node.step is None else it.compile_expr(node.step, ctx)
    if step is None and lower is None and upper is not None:
        return lambda s: slice(None, upper(s), None)
    if step is None and upper is None and lower is not None:
        return lambda s: slice(lower(s), None, None)
    return lambda s: slice(
        None if lower is None else lower(s),
        None if upper is None else upper(s),
        None if step is None else step(s),
    )


def elements(it: Compiler, elts: list[ast.expr], ctx: Ctx) -> Callable[[Scope], list[Any]]:
    """The items of a list/tuple/set display, starred ones unpacked (metered)."""
    if not any(isinstance(e, ast.Starred) for e in elts):
        fns = [it.compile_expr(e, ctx) for e in elts]
        if not fns:
            return lambda s: []
        if len(fns) == 1:
            (f0,) = fns
            return lambda s: [f0(s)]
        if len(fns) == 2:
            f0, f1 = fns
            return lambda s: [f0(s), f1(s)]
        if len(fns) == 3:
            f0, f1, f2 = fns
            return lambda s: [f0(s), f1(s), f2(s)]

        def items(s: Scope) -> list[Any]:
            out = []
            for f in fns:
                out.append(f(s))
            return out

        return items
    parts = [
        (True, it.compile_expr(e.value, ctx))
        if isinstance(e, ast.Starred)
        else (False, it.compile_expr(e, ctx))
        for e in elts
    ]

    def build(s: Scope) -> list[Any]:
        out: list[Any] = []
        for starred, f in parts:
            if starred:
                out.extend(it.collect(f(s)))
                it.need_len(len(out), "coll")
            else:
                out.append(f(s))
        return out

    return build


def e_list(it: Compiler, node: ast.List, ctx: Ctx) -> ExprFn:
    build = elements(it, node.elts, ctx)
    account = it.account
    max_alloc = it.limits.max_total_alloc

    def list_(s: Scope) -> Any:
        out = build(s)
        it.allocated += 56 + 8 * len(out)
        if it.allocated > max_alloc:
            account(0)
        return out

    return list_


def e_tuple(it: Compiler, node: ast.Tuple, ctx: Ctx) -> ExprFn:
    value = fold(node)
    if value is not _MISSING:
        return lambda s: value
    depths = it.tuples
    if len(node.elts) == 2 and not any(isinstance(e, ast.Starred) for e in node.elts):
        f0, f1 = (it.compile_expr(e, ctx) for e in node.elts)

        def pair(s: Scope) -> Any:
            t = (f0(s), f1(s))
            if type(t[0]) is tuple or type(t[1]) is tuple:
                depths.depth(t)  # a tuple inside: bounded nesting (see _nesting)
            return t

        return pair
    build = elements(it, node.elts, ctx)

    def tuple_(s: Scope) -> Any:
        t = tuple(build(s))
        for x in t:
            if type(x) is tuple:
                depths.depth(t)
                break
        return t

    return tuple_


def e_set(it: Compiler, node: ast.Set, ctx: Ctx) -> ExprFn:
    build = elements(it, node.elts, ctx)
    depths = it.tuples

    def set_(s: Scope) -> Any:
        items = build(s)
        depths.check_items(items)
        return set(items)

    return set_


def e_dict(it: Compiler, node: ast.Dict, ctx: Ctx) -> ExprFn:
    pairs = [
        (None if k is None else it.compile_expr(k, ctx), it.compile_expr(v, ctx))
        for k, v in zip(node.keys, node.values, strict=True)
    ]

    depths = it.tuples

    def dict_(s: Scope) -> Any:
        out: dict[Any, Any] = {}
        for k, v in pairs:
            if k is None:
                mapping = v(s)
                if not isinstance(mapping, dict):
                    raise TypeError(f"'{it.type_name(mapping)}' object is not a mapping")
                it.need_len(len(out) + len(mapping), "coll")
                out.update(mapping)
            else:
                key = k(s)
                if type(key) is tuple:
                    depths.depth(key)
                out[key] = v(s)
        return out

    return dict_


def e_ifexp(it: Compiler, node: ast.IfExp, ctx: Ctx) -> ExprFn:
    test = it.compile_expr(node.test, ctx)
    body = it.compile_expr(node.body, ctx)
    orelse = it.compile_expr(node.orelse, ctx)
    truth = it.truth

    def ifexp(s: Scope) -> Any:
        t = test(s)
        if t is True or (t is not False and truth(t)):
            return body(s)
        return orelse(s)

    return ifexp


def e_lambda(it: Compiler, node: ast.Lambda, ctx: Ctx) -> ExprFn:
    defaults = [it.compile_expr(d, ctx) for d in node.args.defaults]
    kw_defaults = [None if d is None else it.compile_expr(d, ctx) for d in node.args.kw_defaults]
    code = compile_function(it, node, ctx)
    make = it.make_function
    return lambda s: make(code, s, defaults, kw_defaults)


def e_joinedstr(it: Compiler, node: ast.JoinedStr, ctx: Ctx) -> ExprFn:
    values = [it.compile_expr(v, ctx) for v in node.values]
    need_len = it.need_len

    def joined(s: Scope) -> Any:
        parts: list[str] = []
        total = 0
        for v in values:
            text = v(s)
            total += len(text)
            need_len(total)
            parts.append(text)
        return "".join(parts)

    return joined


def e_formatted(it: Compiler, node: ast.FormattedValue, ctx: Ctx) -> ExprFn:
    value_fn = it.compile_expr(node.value, ctx)
    spec_fn = None if node.format_spec is None else it.compile_expr(node.format_spec, ctx)
    conversion = node.conversion

    def formatted(s: Scope) -> Any:
        value = value_fn(s)
        if conversion == 114:
            value = it.to_repr(value)
        elif conversion == 97:
            value = ascii(it.to_repr(value))[1:-1]
        elif conversion == 115 or isinstance(value, SandboxInstance):
            value = it.to_str(value)
        spec = "" if spec_fn is None else spec_fn(s)
        return it.format_value(value, spec)

    return formatted


def e_namedexpr(it: Compiler, node: ast.NamedExpr, ctx: Ctx) -> ExprFn:
    value_fn = it.compile_expr(node.value, ctx)
    hops = 0
    target_ctx = ctx
    while target_ctx.kind == COMP and target_ctx.parent is not None:
        target_ctx = target_ctx.parent
        hops += 1
    store = compile_target(it, node.target, target_ctx)

    def namedexpr(s: Scope) -> Any:
        value = value_fn(s)
        t = s
        for _ in range(hops):
            t = t.parent  # type: ignore[assignment]
        store(t, value)
        return value

    return namedexpr


def _sink(scope: Scope) -> list[Any]:
    s: Scope | None = scope
    while s is not None and s.is_comp:
        s = s.parent
    if s is None or s.sink is None:
        raise SyntaxError("'yield' outside function")
    return s.sink


def e_yield(it: Compiler, node: ast.Yield, ctx: Ctx) -> ExprFn:
    value_fn = None if node.value is None else it.compile_expr(node.value, ctx)

    def yield_(s: Scope) -> Any:
        sink = _sink(s)
        sink.append(None if value_fn is None else value_fn(s))
        it.need_len(len(sink), "coll")

    return yield_


def e_yieldfrom(it: Compiler, node: ast.YieldFrom, ctx: Ctx) -> ExprFn:
    value_fn = it.compile_expr(node.value, ctx)

    def yieldfrom(s: Scope) -> Any:
        sink = _sink(s)
        sink.extend(it.collect(value_fn(s)))
        it.need_len(len(sink), "coll")

    return yieldfrom


def e_starred_bare(it: Compiler, node: ast.Starred, ctx: Ctx) -> ExprFn:
    def fail(s: Scope) -> Any:
        raise SyntaxError("can't use starred expression here")

    return fail


EXPRESSIONS: dict[type[ast.AST], Callable[[Compiler, Any, Ctx], ExprFn]] = {
    ast.Constant: e_constant,
    ast.Name: e_name,
    ast.BinOp: e_binop,
    ast.UnaryOp: e_unaryop,
    ast.BoolOp: e_boolop,
    ast.Compare: e_compare,
    ast.Call: e_call,
    ast.Attribute: e_attribute,
    ast.Subscript: e_subscript,
    ast.Slice: e_slice,
    ast.List: e_list,
    ast.Tuple: e_tuple,
    ast.Set: e_set,
    ast.Dict: e_dict,
    ast.ListComp: e_listcomp,
    ast.SetComp: e_setcomp,
    ast.DictComp: e_dictcomp,
    ast.GeneratorExp: e_genexp,
    ast.IfExp: e_ifexp,
    ast.Lambda: e_lambda,
    ast.JoinedStr: e_joinedstr,
    ast.FormattedValue: e_formatted,
    ast.NamedExpr: e_namedexpr,
    ast.Yield: e_yield,
    ast.YieldFrom: e_yieldfrom,
    ast.Starred: e_starred_bare,
}
