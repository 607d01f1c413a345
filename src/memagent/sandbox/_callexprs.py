"""Calls, attributes and subscripts, compiled.

The common shapes get their own closures: a method of a built-in value
(`parts.append(x)`, `d.get(w, 0)`) and a call of a name (`str(i)`, `f(x)`)
with plain positional arguments. They make the checks `Interpreter.getattr`
and `_calls.call` make for the same callables (the attribute policy, metered
arguments, the size of the result) and leave every other callable to
`_calls.call`."""

from __future__ import annotations

import ast
from types import FunctionType, MethodDescriptorType
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._callfast import call_positional, plain_call, str_call
from memagent.sandbox._calls import _SCALARS
from memagent.sandbox._fast import operand
from memagent.sandbox._names import ExprFn, mark, resolves_global
from memagent.sandbox._objects import SandboxFunction, SandboxInstance
from memagent.sandbox._policy import (
    _BUILTIN_CALLABLE,
    _FAST_TYPES,
    _MISSING,
    _RISKY_NAMES,
    _SIMPLE,
    _Super,
)
from memagent.sandbox._scope import MODULE, Ctx, FunctionCode, Scope


def result_sizer(it: Compiler) -> ExprFn:
    """`check_size` for the result of a host call, with ints and strings (what
    `d.get(w, 0)` and `s.strip()` return) sized and charged inline."""
    check_size, account = it.check_size, it.account
    limits = it.limits
    max_bits, max_len, max_alloc = limits.max_int_bits, limits.max_str_len, limits.max_total_alloc

    def sized(r: Any) -> Any:
        t = type(r)
        if t is int:
            bits = r.bit_length()
            if bits <= max_bits:
                it.allocated += 28 + bits // 8
                if it.allocated > max_alloc:
                    account(0)
                return r
        elif t is str:
            n = len(r)
            if n <= max_len:
                it.allocated += 49 + n
                if it.allocated > max_alloc:
                    account(0)
                return r
        return check_size(r)

    return sized


def e_attribute(it: Compiler, node: ast.Attribute, ctx: Ctx) -> ExprFn:
    base = it.compile_expr(node.value, ctx)
    name = node.attr
    getattr_ = it.getattr
    if name[:1] == "_" or name in _RISKY_NAMES:
        return lambda s: getattr_(base(s), name)
    fast = _FAST_TYPES
    instance = SandboxInstance

    def attribute(s: Scope) -> Any:
        o = base(s)
        to = type(o)
        if to in fast:
            return getattr(o, name)
        if to is instance:
            # `self.count`: an instance's own attribute, as `getattr` reads it
            # first for a name that is not a dunder
            v = o._attrs.get(name, _MISSING)
            if v is not _MISSING:
                return v
        return getattr_(o, name)

    return attribute


def e_subscript(it: Compiler, node: ast.Subscript, ctx: Ctx) -> ExprFn:
    n, _, obj = operand(it, node.value, ctx)
    _, constant, key = operand(it, node.slice, ctx)
    getitem = it.getitem
    fast = _FAST_TYPES
    depths = it.tuples
    if n is not None and constant is not _MISSING:
        name, k = n, constant

        def subscript_name_const(s: Scope) -> Any:
            try:
                o = s.vars[name]
            except KeyError:
                o = obj(s)
            if type(o) in fast:
                return o[k]
            return getitem(o, k)

        return subscript_name_const
    if n is not None:
        name = n

        def subscript_name(s: Scope) -> Any:
            try:
                o = s.vars[name]
            except KeyError:
                o = obj(s)
            k = key(s)
            if type(k) is tuple:
                depths.depth(k)  # a dict hashes it in C: bounded nesting first
            if type(o) in fast:
                return o[k]
            return getitem(o, k)

        return subscript_name

    def subscript(s: Scope) -> Any:
        o = obj(s)
        k = key(s)
        if type(k) is tuple:
            depths.depth(k)
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
    if len(node.args) == 1:
        module = ctx.kind == MODULE
        gname = None  # a global or builtin called from inside a function: `str(i)`, `f(x)`
        if type(func_node) is ast.Name and not module and not ctx.direct(func_node.id):
            gname = func_node.id if resolves_global(ctx, func_node.id) else None
        fop = operand(it, func_node, ctx)
        return _call1(it, fop, operand(it, node.args[0], ctx), module, gname)
    func = it.compile_expr(func_node, ctx)
    args = [it.compile_expr(a, ctx) for a in node.args]
    call = it.call
    if not args:
        return lambda s: call(func(s), (), {})
    return call_positional(it, func, args)


def _call1(
    it: Compiler,
    fop: tuple[str | None, Any, ExprFn],
    aop: tuple[str | None, Any, ExprFn],
    module: bool,
    gname: str | None = None,
) -> ExprFn:
    """`str(i)`, `len(x)`, `f(x)`: one positional argument. `gname`: the
    function is that global or builtin name, read from inside a function."""
    fn_name, _, func = fop
    an, ac, arg = aop
    builtins = it.builtins
    global_scope = it.global_scope
    sized = result_sizer(it)
    call_function = it.call_function
    sandbox_function = SandboxFunction
    hi = 1 << 4095  # `to_str` renders ints under 4096 bits without a text estimate
    lo = -hi
    call, wrap_arg = it.call, it._wrap_arg
    nowrap, type_calls = it.nowrap, it.type_calls
    simple = _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE

    max_alloc = it.limits.max_total_alloc
    account = it.account

    arg_kind = 1 if an is not None else 0 if ac is _MISSING else 2
    scalars = _SCALARS
    sandbox_len = builtins.get("len")
    fast = _FAST_TYPES
    seen_code: Any = None  # this call site's last sandbox function code
    seen_plain = False
    new_scope = object.__new__
    scope_type = Scope

    def call1(s: Scope) -> Any:
        if fn_name is not None:
            f = s.vars.get(fn_name, _MISSING)
            if f is _MISSING:
                # at module level a missing global is a builtin or an error
                f = builtins.get(fn_name, _MISSING) if module else _MISSING
                if f is _MISSING:
                    f = func(s)
        elif gname is not None:
            # what `func` (`_names._free_global_loader`) reads, inline
            f = global_scope.vars.get(gname, _MISSING)
            if f is _MISSING:
                f = builtins.get(gname, _MISSING)
                if f is _MISSING:
                    f = func(s)  # the error `func` raises
        else:
            f = func(s)
        if arg_kind == 0:
            x = arg(s)
        elif arg_kind == 1:
            try:
                x = s.vars[an]  # type: ignore[index]
            except KeyError:
                x = arg(s)
        else:
            x = ac
        if f is str:
            tx = type(x)
            if (tx is int and lo < x < hi) or tx is float or tx is bool:
                # what `_str` -> `to_str` -> `check_size` does for a number
                r = str(x)
                it.allocated += 49 + len(r)
                if it.allocated > max_alloc:
                    account(0)
                return r
        elif f is sandbox_len and type(x) in fast:
            # what the sandbox's `len` (and `sized` on its result) does for a
            # built-in value: `len(x)`, the int charged
            n = len(x)
            it.allocated += 28 + (n.bit_length() >> 3)
            if it.allocated > max_alloc:
                account(0)
            return n
        tf = type(f)
        if tf is builtin or tf is FunctionType:
            if type(x) not in simple and id(f) not in nowrap:
                x = wrap_arg(x)
            return sized(f(x))
        if tf is type:
            special = type_calls.get(f)  # str, int, bytes, bytearray: never a metaclass
            if special is not None:
                if type(x) not in simple:
                    x = wrap_arg(x)
                return sized(special(x))
            if type(x) in scalars and not issubclass(f, type):
                return sized(f(x))  # `range(n)`, `list('ab')`: nothing to meter or wrap
        if tf is sandbox_function:
            nonlocal seen_code, seen_plain
            code = f._code
            if code is not seen_code:
                seen_code, seen_plain = code, _plain1(code)
            if seen_plain and f._owner is None and it.depth < it.max_depth:
                # `call_function` for `def f(x): return <expr>`, inline: the
                # same charge, limit check, scope, depth and error line
                it.ops += 1 + code.tail_weight
                if it.ops >= it.next_check:
                    it.check_limits()
                scope = new_scope(scope_type)
                scope.vars = {code.params[0]: x}
                scope.parent = f._scope
                scope.local_names = code.info.local_names
                if code.first is not None:
                    scope.self_obj = x  # the first parameter, as `call_function` sets it
                it.depth += 1
                try:
                    return code.tail(scope)
                except BaseException as exc:
                    mark(it, exc, code.tail_line)
                    raise
                finally:
                    it.depth -= 1
            return call_function(f, None, (x,), {})
        return call(f, (x,), {})

    callee = fn_name if module else gname
    if callee != "str" or builtins.get("str") is not str or arg_kind == 2:
        return call1
    return str_call(it, call1, arg, an, sized)


def _plain1(code: FunctionCode) -> bool:
    """Whether a call of one positional argument runs `code` as only a
    `return <expr>` in a scope with nothing but that parameter bound."""
    return code.body is None and code.tail is not None and plain_call(code, 1)


def method_of(t: type, name: str) -> Any:
    """`t`'s method descriptor `name` when `t` is a built-in value type whose
    attribute `name` is a plain method (what `Interpreter.getattr` hands out
    for it, bound), else None. Call sites keep the last one they used."""
    if t not in _FAST_TYPES:
        return None
    desc = getattr(t, name, None)
    return desc if type(desc) is MethodDescriptorType else None


def _method_call(
    it: Compiler, func_node: ast.Attribute, arg_nodes: list[ast.expr], ctx: Ctx
) -> ExprFn:
    rn, _, base = operand(it, func_node.value, ctx)
    name = func_node.attr
    ops = [operand(it, a, ctx) for a in arg_nodes]
    args = [f for _, _, f in ops]
    call, getattr_ = it.call, it.getattr
    if name[:1] == "_" or name in _RISKY_NAMES:
        return lambda s: call(getattr_(base(s), name), [a(s) for a in args], {})
    wrap_arg = it._wrap_arg
    sized = result_sizer(it)
    fast, simple = _FAST_TYPES, _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE
    if len(args) == 2 and rn is not None:
        return _method2(it, rn, base, name, ops, sized)
    if len(args) != 1 or rn is None:
        return _method_any(it, base, name, args, sized)
    # `parts.append(x)`, `s.count(c)`: a name's method, one argument
    an, ac, a0 = ops[0]
    instance, sandbox_function = SandboxInstance, SandboxFunction
    call_function = it.call_function

    seen_type: Any = None  # this call site's last type and its method
    seen_desc: Any = None

    def method1(s: Scope) -> Any:
        nonlocal seen_type, seen_desc
        v = s.vars
        try:
            o = v[rn]
        except KeyError:
            o = base(s)
        to = type(o)
        if to is not seen_type and (found := method_of(to, name)) is not None:
            seen_type, seen_desc = to, found
        if to is seen_type:
            # the type's own method descriptor: `list.append(o, x)` is `o.append(x)`
            # (taken now: the argument may re-enter this call site with another type)
            desc = seen_desc
            if an is not None:
                try:
                    x = v[an]
                except KeyError:
                    x = a0(s)
            elif ac is not _MISSING:
                x = ac
            else:
                x = a0(s)
            if type(x) not in simple:
                x = wrap_arg(x)
            r = desc(o, x)
            return r if r is None else sized(r)
        if to in fast:
            m: Any = getattr(o, name)
            if an is not None:
                try:
                    x = v[an]
                except KeyError:
                    x = a0(s)
            elif ac is not _MISSING:
                x = ac
            else:
                x = a0(s)
            if type(m) is builtin:
                if type(x) not in simple:
                    x = wrap_arg(x)
                r = m(x)
                return r if r is None else sized(r)
            return call(m, (x,), {})
        if to is instance and name not in o._attrs:
            found, value = o._cls.lookup(name)
            if found and type(value) is sandbox_function:
                # what `getattr` binds and `call` runs for a method of the code's class
                return call_function(value, o, (a0(s),), {})
        return call(getattr_(o, name), (a0(s),), {})

    if an is not None or ac is not _MISSING:
        return method1

    def method1_expr(s: Scope) -> Any:
        # `parts.append(str(i))` on the call site's last type: what `method1`
        # does for it; anything else is `method1` (only a name was read so far)
        try:
            o = s.vars[rn]
        except KeyError:
            o = base(s)
        if type(o) is not seen_type:
            return method1(s)
        desc = seen_desc  # taken now: the argument may re-enter this call site
        x = a0(s)
        if type(x) not in simple:
            x = wrap_arg(x)
        r = desc(o, x)
        return r if r is None else sized(r)

    return method1_expr


def _method2(
    it: Compiler,
    rn: str,
    base: ExprFn,
    name: str,
    ops: list[tuple[str | None, Any, ExprFn]],
    sized: ExprFn,
) -> ExprFn:
    """`d.get(w, 0)`: a name's method, two arguments."""
    call, getattr_, wrap_arg = it.call, it.getattr, it._wrap_arg
    max_bits, max_alloc = it.limits.max_int_bits, it.limits.max_total_alloc
    fast, simple = _FAST_TYPES, _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE
    (an, ac, a0), (bn, bc, b0) = ops
    seen_type: Any = None  # this call site's last type and its method
    seen_desc: Any = None

    def method2(s: Scope) -> Any:
        v = s.vars
        try:
            o = v[rn]
        except KeyError:
            o = base(s)
        to = type(o)
        nonlocal seen_type, seen_desc
        desc: Any = None
        if to is not seen_type and (found := method_of(to, name)) is not None:
            seen_type, seen_desc = to, found
        if to is seen_type:
            m: Any = None  # the call site's cached descriptor, called with `o`
            desc = seen_desc  # taken now: an argument may re-enter this call site
        elif to in fast:
            m = getattr(o, name)
        else:
            return call(getattr_(o, name), (a0(s), b0(s)), {})
        if an is not None:
            try:
                x = v[an]
            except KeyError:
                x = a0(s)
        elif ac is not _MISSING:
            x = ac
        else:
            x = a0(s)
        if bn is not None:
            try:
                y = v[bn]
            except KeyError:
                y = b0(s)
        elif bc is not _MISSING:
            y = bc
        else:
            y = b0(s)
        if m is None or type(m) is builtin:
            if type(x) not in simple:
                x = wrap_arg(x)
            if type(y) not in simple:
                y = wrap_arg(y)
            r = desc(o, x, y) if m is None else m(x, y)
            if type(r) is int:  # `d.get(w, 0)`: sized and charged as `sized` does
                bits = r.bit_length()
                if bits <= max_bits:
                    it.allocated += 28 + bits // 8
                    if it.allocated > max_alloc:
                        it.account(0)
                    return r
            return r if r is None else sized(r)
        return call(m, (x, y), {})

    if an is None or bc is _MISSING or type(bc) not in simple:
        return method2
    y_const = bc

    def method2_name_const(s: Scope) -> Any:
        # `d.get(w, 0)` on the call site's last type: what `method2` does for
        # it, without choosing the arguments' kinds; anything else is `method2`
        # (only names were read so far)
        v = s.vars
        try:
            o = v[rn]
        except KeyError:
            o = base(s)
        if type(o) is not seen_type:
            return method2(s)
        desc = seen_desc
        try:
            x = v[an]
        except KeyError:
            x = a0(s)
        if type(x) not in simple:
            x = wrap_arg(x)
        r = desc(o, x, y_const)
        if type(r) is int:
            bits = r.bit_length()
            if bits <= max_bits:
                it.allocated += 28 + bits // 8
                if it.allocated > max_alloc:
                    it.account(0)
                return r
        return r if r is None else sized(r)

    return method2_name_const


def _method_any(it: Compiler, base: ExprFn, name: str, args: list[ExprFn], sized: ExprFn) -> ExprFn:
    call, getattr_, wrap_arg = it.call, it.getattr, it._wrap_arg
    fast, simple = _FAST_TYPES, _SIMPLE
    builtin: Any = _BUILTIN_CALLABLE

    def method(s: Scope) -> Any:
        o = base(s)
        if type(o) in fast:
            m: Any = getattr(o, name)
            values = []
            for a in args:
                values.append(a(s))
            if type(m) is builtin:
                values = [x if type(x) in simple else wrap_arg(x) for x in values]
                r = m(*values)
                return r if r is None else sized(r)
            return call(m, values, {})
        m = getattr_(o, name)
        return call(m, [a(s) for a in args], {})

    return method


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
