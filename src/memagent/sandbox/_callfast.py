"""Calls of the code's own functions with plain positional arguments, run at
the call site.

`_calls.call_function` binds arguments of any shape, makes generators and
methods; a call like `f(a, b)` of a plain `def f(a, b)` needs none of that.
These closures do for it exactly what `call_function` does (the recursion
limit, the call's operations and limit check, a scope with the parameters
bound, the depth, the body's flow and the error line of a `return <expr>`)
and hand every other callee to `Interpreter.call`. `str(x)` of the builtin
`str` gets its own closure here too."""

from __future__ import annotations

from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import ExprFn, mark
from memagent.sandbox._objects import SandboxFunction
from memagent.sandbox._policy import _SIMPLE, RETURN, Flow
from memagent.sandbox._scope import FunctionCode, Scope

_new_scope = object.__new__  # a Scope without running its __init__


def plain_call(code: FunctionCode, n: int) -> bool:
    """Whether a call of `n` positional arguments runs `code` in a scope with
    nothing but its parameters bound (no defaults, *args, keywords, generator,
    `global` or `nonlocal`; the first parameter doubles as `self_obj`, as
    `call_function` sets it)."""
    info = code.info
    return (
        code.simple
        and len(code.params) == n
        and n > 0
        and code.first in (None, code.params[0])
        and not info.globals_
        and not info.nonlocals
        and not info.is_generator
    )


def call_positional(it: Compiler, func: ExprFn, args: list[ExprFn]) -> ExprFn:
    """`f(a, b, ...)`: positional arguments only, two or more."""
    call = it.call
    n = len(args)
    sandbox_function = SandboxFunction
    scope_type = Scope
    seen_code: Any = None  # this call site's last sandbox function code
    seen_plain = False
    a0, a1 = args[0], args[-1]

    def call_n(s: Scope) -> Any:
        nonlocal seen_code, seen_plain
        f = func(s)
        values = [a0(s), a1(s)] if n == 2 else [a(s) for a in args]
        if type(f) is not sandbox_function:
            return call(f, values, {})
        code = f._code
        if code is not seen_code:
            seen_code, seen_plain = code, plain_call(code, n)
        if not seen_plain or f._owner is not None or it.depth >= it.max_depth:
            return call(f, values, {})
        it.ops += 1 + code.tail_weight  # the call, and a `return <expr>` body with it
        if it.ops >= it.next_check:
            it.check_limits()
        scope = _new_scope(scope_type)
        params = code.params  # as many as `values` (`plain_call`)
        if n == 2:
            scope.vars = {params[0]: values[0], params[1]: values[1]}
        else:
            scope.vars = dict(zip(params, values, strict=False))
        scope.parent = f._scope
        scope.local_names = code.info.local_names
        if code.first is not None:
            scope.self_obj = values[0]
        it.depth += 1
        try:
            body, tail = code.body, code.tail
            if body is not None:
                flow = body(scope)
                if flow is not None and type(flow) is Flow:
                    if flow.kind == RETURN:
                        return flow.value
                    raise flow.escape()  # `break`/`continue` outside a loop
            if tail is None:
                return None
            try:
                return tail(scope)
            except BaseException as exc:
                mark(it, exc, code.tail_line)
                raise
        finally:
            it.depth -= 1

    return call_n


def str_call(it: Compiler, general: ExprFn, arg: ExprFn, an: str | None, sized: ExprFn) -> ExprFn:
    """`str(x)` where `str` is the global or builtin name: when no global
    shadows it, what `call1` does for `str`, without choosing the callee's
    kind; anything else is `call1` (`general`), called before any part of the
    call ran."""
    global_vars = it.global_scope.vars
    builtins = it.builtins
    max_alloc = it.limits.max_total_alloc
    account, wrap_arg = it.account, it._wrap_arg
    to_str = it.type_calls[str]
    simple = _SIMPLE
    hi = 1 << 4095
    lo = -hi

    def str1(s: Scope) -> Any:
        if "str" in global_vars or builtins.get("str") is not str:
            return general(s)
        if an is None:
            x = arg(s)
        else:
            try:
                x = s.vars[an]
            except KeyError:
                x = arg(s)
        tx = type(x)
        if (tx is int and lo < x < hi) or tx is float or tx is bool:
            r = str(x)
            it.allocated += 49 + len(r)
            if it.allocated > max_alloc:
                account(0)
            return r
        if tx not in simple:
            x = wrap_arg(x)
        return sized(to_str(x))

    return str1
