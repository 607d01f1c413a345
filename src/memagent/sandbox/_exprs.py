"""Expression handlers: one function per expression type, taking the compiler
as a typed argument (`Compiler`); `EXPRESSIONS` maps node types to them."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._objects import Metered, SandboxInstance
from memagent.sandbox._policy import _MISSING, _Super
from memagent.sandbox._scope import Scope
from memagent.sandbox.limits import LimitExceeded


def e_constant(it: Compiler, node: ast.Constant, scope: Scope) -> Any:
    return node.value


def e_name(it: Compiler, node: ast.Name, scope: Scope) -> Any:
    return it.load(node.id, scope)


def e_binop(it: Compiler, node: ast.BinOp, scope: Scope) -> Any:
    return it.binop(type(node.op), it.ev(node.left, scope), it.ev(node.right, scope))


def e_unaryop(it: Compiler, node: ast.UnaryOp, scope: Scope) -> Any:
    value = it.ev(node.operand, scope)
    op = type(node.op)
    if op is ast.Not:
        return not it.truth(value)
    if isinstance(value, SandboxInstance):
        name = {ast.USub: "__neg__", ast.UAdd: "__pos__"}.get(op)
        m = it.dunder(value, name) if name else None
        if m is None:
            raise TypeError(f"bad operand type for unary operator: '{value._cls._name}'")
        return it.call(m, (), {})
    if op is ast.USub:
        return -value
    if op is ast.UAdd:
        return +value
    return ~value


def e_boolop(it: Compiler, node: ast.BoolOp, scope: Scope) -> Any:
    value: Any = None
    if isinstance(node.op, ast.And):
        for v in node.values:
            value = it.ev(v, scope)
            if not it.truth(value):
                return value
        return value
    for v in node.values:
        value = it.ev(v, scope)
        if it.truth(value):
            return value
    return value


def e_compare(it: Compiler, node: ast.Compare, scope: Scope) -> Any:
    left = it.ev(node.left, scope)
    result: Any = True
    for op, comp in zip(node.ops, node.comparators, strict=True):
        right = it.ev(comp, scope)
        result = it.compare(type(op), left, right)
        if not it.truth(result):
            return result
        left = right
    return result


def e_call(it: Compiler, node: ast.Call, scope: Scope) -> Any:
    func_node = node.func
    if isinstance(func_node, ast.Name) and func_node.id == "super" and not node.args:
        return _super(it, scope)
    func = it.ev(func_node, scope)
    simple = node.__dict__.get("_sb_simple")
    if simple is None:
        simple = not node.keywords and not any(type(a) is ast.Starred for a in node.args)
        node._sb_simple = simple  # type: ignore[attr-defined]
    if simple:
        ev = it.ev
        return it.call(func, [ev(a, scope) for a in node.args], {})
    args: list[Any] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            args.extend(it.collect(it.ev(a.value, scope)))
            it.need_len(len(args), "coll")
        else:
            args.append(it.ev(a, scope))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            mapping = it.ev(kw.value, scope)
            if not isinstance(mapping, dict):
                raise TypeError("argument after ** must be a mapping")
            for k, v in mapping.items():
                if not isinstance(k, str):
                    raise TypeError("keywords must be strings")
                if k in kwargs:
                    raise TypeError(f"got multiple values for keyword argument '{k}'")
                kwargs[k] = v
        else:
            kwargs[kw.arg] = it.ev(kw.value, scope)
    return it.call(func, args, kwargs)


def _super(it: Compiler, scope: Scope) -> Any:
    s: Scope | None = scope
    while s is not None and s.owner is None:
        s = s.parent
    if s is None:
        raise RuntimeError("super(): no arguments")
    return _Super(s.owner, s.self_obj)


def e_attribute(it: Compiler, node: ast.Attribute, scope: Scope) -> Any:
    return it.getattr(it.ev(node.value, scope), node.attr)


def e_subscript(it: Compiler, node: ast.Subscript, scope: Scope) -> Any:
    return it.getitem(it.ev(node.value, scope), it.ev(node.slice, scope))


def e_slice(it: Compiler, node: ast.Slice, scope: Scope) -> Any:
    return slice(
        None if node.lower is None else it.ev(node.lower, scope),
        None if node.upper is None else it.ev(node.upper, scope),
        None if node.step is None else it.ev(node.step, scope),
    )


def _elements(it: Compiler, elts: list[ast.expr], scope: Scope) -> list[Any]:
    out: list[Any] = []
    for e in elts:
        if isinstance(e, ast.Starred):
            out.extend(it.collect(it.ev(e.value, scope)))
            it.need_len(len(out), "coll")
        else:
            out.append(it.ev(e, scope))
    return out


def e_list(it: Compiler, node: ast.List, scope: Scope) -> Any:
    out = _elements(it, node.elts, scope)
    it.account(56 + 8 * len(out))
    return out


def e_tuple(it: Compiler, node: ast.Tuple, scope: Scope) -> Any:
    return tuple(_elements(it, node.elts, scope))


def e_set(it: Compiler, node: ast.Set, scope: Scope) -> Any:
    return set(_elements(it, node.elts, scope))


def e_dict(it: Compiler, node: ast.Dict, scope: Scope) -> Any:
    out: dict[Any, Any] = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if k is None:
            mapping = it.ev(v, scope)
            if not isinstance(mapping, dict):
                raise TypeError(f"'{it.type_name(mapping)}' object is not a mapping")
            it.need_len(len(out) + len(mapping), "coll")
            out.update(mapping)
        else:
            key = it.ev(k, scope)
            out[key] = it.ev(v, scope)
    return out


def _comp(
    it: Compiler, generators: list[ast.comprehension], scope: Scope, emit: Callable[[Scope], None]
) -> None:
    gen = generators[0]
    rest = generators[1:]
    for item in it.iterate(it.ev(gen.iter, scope)):
        it.tick()
        it.assign(gen.target, item, scope)
        if all(it.truth(it.ev(cond, scope)) for cond in gen.ifs):
            if rest:
                _comp(it, rest, scope, emit)
            else:
                emit(scope)


def _comp_scope(it: Compiler, scope: Scope) -> Scope:
    return Scope({}, scope, is_comp=True)


def e_listcomp(it: Compiler, node: ast.ListComp, scope: Scope) -> Any:
    out: list[Any] = []
    limit = it.limits.max_collection_len

    def emit(s: Scope) -> None:
        out.append(it.ev(node.elt, s))
        if len(out) > limit:
            raise LimitExceeded(f"collection of more than {limit} items")

    _comp(it, node.generators, _comp_scope(it, scope), emit)
    it.account(64 + 8 * len(out))
    return out


def e_setcomp(it: Compiler, node: ast.SetComp, scope: Scope) -> Any:
    out: set[Any] = set()
    limit = it.limits.max_collection_len

    def emit(s: Scope) -> None:
        out.add(it.ev(node.elt, s))
        if len(out) > limit:
            raise LimitExceeded(f"collection of more than {limit} items")

    _comp(it, node.generators, _comp_scope(it, scope), emit)
    it.account(64 + 8 * len(out))
    return out


def e_dictcomp(it: Compiler, node: ast.DictComp, scope: Scope) -> Any:
    out: dict[Any, Any] = {}
    limit = it.limits.max_collection_len

    def emit(s: Scope) -> None:
        key = it.ev(node.key, s)
        out[key] = it.ev(node.value, s)
        if len(out) > limit:
            raise LimitExceeded(f"collection of more than {limit} items")

    _comp(it, node.generators, _comp_scope(it, scope), emit)
    it.account(64 + 8 * len(out))
    return out


def e_genexp(it: Compiler, node: ast.GeneratorExp, scope: Scope) -> Any:
    first_iter = it.ev(node.generators[0].iter, scope)
    cscope = _comp_scope(it, scope)
    return Metered(it, _genexp(it, node, node.generators, cscope, first_iter))


def _genexp(
    it: Compiler,
    node: ast.GeneratorExp,
    generators: list[ast.comprehension],
    scope: Scope,
    first: Any,
) -> Iterator[Any]:
    gen = generators[0]
    iterable = first if first is not _MISSING else it.ev(gen.iter, scope)
    for item in it.iterate(iterable):
        it.assign(gen.target, item, scope)
        if all(it.truth(it.ev(cond, scope)) for cond in gen.ifs):
            if len(generators) > 1:
                yield from _genexp(it, node, generators[1:], scope, _MISSING)
            else:
                yield it.ev(node.elt, scope)


def e_ifexp(it: Compiler, node: ast.IfExp, scope: Scope) -> Any:
    if it.truth(it.ev(node.test, scope)):
        return it.ev(node.body, scope)
    return it.ev(node.orelse, scope)


def e_lambda(it: Compiler, node: ast.Lambda, scope: Scope) -> Any:
    return it.make_function(node, scope)


def e_joinedstr(it: Compiler, node: ast.JoinedStr, scope: Scope) -> Any:
    parts: list[str] = []
    total = 0
    for v in node.values:
        s = it.ev(v, scope)
        total += len(s)
        it.need_len(total)
        parts.append(s)
    return "".join(parts)


def e_formatted(it: Compiler, node: ast.FormattedValue, scope: Scope) -> Any:
    value = it.ev(node.value, scope)
    if node.conversion == 114:
        value = it.to_repr(value)
    elif node.conversion == 97:
        value = ascii(it.to_repr(value))[1:-1]
    elif node.conversion == 115 or isinstance(value, SandboxInstance):
        value = it.to_str(value)
    spec = "" if node.format_spec is None else it.ev(node.format_spec, scope)
    return it.format_value(value, spec)


def e_namedexpr(it: Compiler, node: ast.NamedExpr, scope: Scope) -> Any:
    value = it.ev(node.value, scope)
    s = scope
    while s.is_comp and s.parent is not None:
        s = s.parent
    it.store(node.target.id, value, s)
    return value


def _sink(it: Compiler, scope: Scope) -> list[Any]:
    s: Scope | None = scope
    while s is not None and s.is_comp:
        s = s.parent
    if s is None or s.sink is None:
        raise SyntaxError("'yield' outside function")
    return s.sink


def e_yield(it: Compiler, node: ast.Yield, scope: Scope) -> Any:
    sink = _sink(it, scope)
    sink.append(None if node.value is None else it.ev(node.value, scope))
    it.need_len(len(sink), "coll")
    return None


def e_yieldfrom(it: Compiler, node: ast.YieldFrom, scope: Scope) -> Any:
    sink = _sink(it, scope)
    sink.extend(it.collect(it.ev(node.value, scope)))
    it.need_len(len(sink), "coll")
    return None


def e_starred_bare(it: Compiler, node: ast.Starred, scope: Scope) -> Any:
    raise SyntaxError("can't use starred expression here")


EXPRESSIONS: dict[type[ast.AST], Callable[[Compiler, Any, Scope], Any]] = {
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
