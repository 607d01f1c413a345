"""Calls: host callables (arguments metered, results checked), the code's own
functions and classes. Functions of the compiler, bound as `Interpreter` methods."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable
from types import FunctionType
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._names import block, mark
from memagent.sandbox._objects import (
    BoundMethod,
    CheckedFunction,
    HostCall,
    Internal,
    Metered,
    ModuleProxy,
    SandboxClass,
    SandboxFunction,
    SandboxInstance,
)
from memagent.sandbox._policy import (
    _BUILTIN_CALLABLE,
    _CONCRETE,
    _FAST_TYPES,
    _MISSING,
    _SIMPLE,
    RETURN,
    Flow,
    _Return,
)
from memagent.sandbox._scope import (
    CLASS,
    FUNCTION,
    Ctx,
    FunctionCode,
    Scope,
    analyse_function,
)
from memagent.sandbox.limits import LimitExceeded, SecurityError


def call(it: Compiler, func: Any, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
    t = type(func)
    if t is _BUILTIN_CALLABLE or t is FunctionType:
        # host builtins / bound methods of values, and the interpreter's own builtins
        if id(func) not in it.nowrap:
            if type(getattr(func, "__self__", None)) in _FAST_TYPES:
                # a method of a plain value: it stores or compares its arguments
                if args:
                    args = [a if type(a) in _SIMPLE else it._wrap_arg(a) for a in args]
                if kwargs:
                    kwargs = it._wrap_kwargs(kwargs)
            else:
                # a host function (`chain.from_iterable([it])`) may pull from
                # iterators inside its arguments
                if args:
                    args = [
                        it._wrap_nested(a)
                        if type(a) in _CONTAINERS
                        else a
                        if type(a) in _SIMPLE
                        else it._wrap_arg(a)
                        for a in args
                    ]
                if kwargs:
                    kwargs = {
                        k: it._wrap_nested(v) if type(v) in _CONTAINERS else it._wrap_arg(v)
                        for k, v in kwargs.items()
                    }
        return it.check_size(func(*args, **kwargs))
    if t is SandboxFunction:
        return it.call_function(func, None, args, kwargs)
    if t is BoundMethod:
        return it.call_function(func._func, func._self, args, kwargs)
    if t is SandboxClass:
        return it.instantiate(func, args, kwargs)
    if t is SandboxInstance:
        m = it.dunder(func, "__call__")
        if m is None:
            raise TypeError(f"'{func._cls._name}' object is not callable")
        return it.call(m, args, kwargs)
    if t is HostCall:
        return func(*args, **kwargs)
    if t is CheckedFunction and func._flat:
        args = [a if type(a) in _SIMPLE else it._wrap_arg(a) for a in args]
        if kwargs:
            kwargs = it._wrap_kwargs(kwargs)
        return it.check_size(func(*args, **kwargs))
    if t is type:
        if func is type or issubclass(func, type):
            raise SecurityError("creating types is not allowed")
        special = it.type_calls.get(func)
        if special is not None:
            args = [a if type(a) in _SIMPLE else it._wrap_arg(a) for a in args]
            if kwargs:
                kwargs = it._wrap_kwargs(kwargs)
            return it.check_size(special(*args, **kwargs))
    elif isinstance(func, type) and issubclass(func, type):
        raise SecurityError("creating types is not allowed")
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    # types and module functions: containers may carry iterables they consume
    if args and not all(type(a) in _SCALARS for a in args):
        args = [it._wrap_nested(a) if type(a) in _CONTAINERS else it._wrap_arg(a) for a in args]
    if kwargs:
        kwargs = {
            k: it._wrap_nested(v) if type(v) in _CONTAINERS else it._wrap_arg(v)
            for k, v in kwargs.items()
        }
    return it.check_size(func(*args, **kwargs))


def _wrap_kwargs(it: Compiler, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v if type(v) in _SIMPLE else it._wrap_arg(v) for k, v in kwargs.items()}


_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_SCALARS = frozenset({int, float, str, bool, bytes, type(None)})
WRAP_DEPTH = 6
"""How deep into containers an argument is searched for iterators and callables
that host code could run unmetered (`chain.from_iterable([[it]])`)."""


def _wrap_nested(it: Compiler, a: Any, depth: int = 0) -> Any:
    """A container argument whose items (at any depth up to `WRAP_DEPTH`)
    include an iterable or a callable host code could run unmetered: a copy
    with those wrapped. Containers with nothing to wrap are passed as they are
    (`heapq.heappush(heap, item)` must change the code's own list)."""
    values = a.values() if type(a) is dict else a
    if len(values) > 4096:
        it.tick()
    kinds = set(map(type, values))
    if kinds <= _SCALARS:
        return a
    deeper = depth + 1 < WRAP_DEPTH

    def wrap(v: Any) -> Any:
        tv = type(v)
        if tv in _SCALARS:
            return v
        if tv in _CONTAINERS:
            return _wrap_nested(it, v, depth + 1) if deeper else v
        return it._wrap_arg(v)

    new: Any
    if type(a) is dict:
        new = {k: wrap(v) for k, v in a.items()}
        changed = any(new[k] is not v for k, v in a.items())
    else:
        items = [wrap(v) for v in a]
        changed = any(x is not v for x, v in zip(items, a, strict=True))
        new = items if type(a) is list else type(a)(items)
    return new if changed else a


def _wrap_arg(it: Compiler, a: Any) -> Any:
    t = type(a)
    if t in _CONCRETE or t is int or t is float or t is bool or a is None:
        return a
    if t is range:
        return Metered(it, a) if len(a) > 10_000 else a
    if t is Metered or t is HostCall or t is SandboxFunction or t is BoundMethod:
        return a
    if isinstance(a, Internal):
        if isinstance(a, SandboxInstance) and it.dunder(a, "__iter__") is not None:
            return Metered(it, it.iterate(a))
        if t is SandboxClass or t is ModuleProxy or t is SandboxInstance:
            return a
        return HostCall(it, a) if callable(a) else a
    if hasattr(t, "__next__"):
        return Metered(it, a)
    if callable(a) and not (isinstance(a, type) and issubclass(a, BaseException)):
        return HostCall(it, a)
    return a


def compile_function(it: Compiler, node: ast.FunctionDef | ast.Lambda, ctx: Ctx) -> FunctionCode:
    """Compile a `def` or `lambda` once, where it appears: its body runs in a
    scope whose parent is the defining one (skipping a class body, as
    `make_function` does at run time)."""
    info = analyse_function(node)
    parent = ctx.parent if ctx.kind == CLASS and ctx.parent is not None else ctx
    fctx = Ctx(FUNCTION, parent, info.local_names, info.globals_, info.nonlocals)
    body: Callable[[Scope], Any] | None
    tail: Callable[[Scope], Any] | None = None
    tail_line = tail_weight = 0
    if isinstance(node, ast.Lambda):
        fctx.weight = 0
        tail = it.compile_expr(node.body, fctx)
        tail_line, tail_weight, body = node.lineno, fctx.weight, None
        name = "<lambda>"
    else:
        name = node.name
        last = node.body[-1]
        if isinstance(last, ast.Return) and last.value is not None and not info.is_generator:
            # `return <expr>` at the end: the expression is evaluated directly
            fns, lines, weight = it.compile_body(node.body[:-1], fctx)
            fctx.weight = 1
            tail = it.compile_expr(last.value, fctx)
            tail_line = last.lineno
            body = block(it, fns, lines, 0) if fns else None
            tail_weight = weight + fctx.weight
        else:
            body = it.compile_block(node.body, fctx)
    a = node.args
    params = tuple(p.arg for p in (*a.posonlyargs, *a.args))
    simple = not (a.vararg or a.kwarg or a.kwonlyargs or a.defaults)
    return FunctionCode(
        node,
        info,
        body,
        params,
        simple,
        params[0] if params else None,
        name,
        isinstance(node, ast.Lambda),
        tail,
        tail_line,
        tail_weight,
    )


_new_scope = object.__new__


def call_function(
    it: Compiler,
    func: SandboxFunction,
    self_obj: Any,
    args: tuple[Any, ...] | list[Any],
    kwargs: dict[str, Any],
) -> Any:
    if it.depth >= it.max_depth:
        raise LimitExceeded(f"recursion depth of {it.limits.max_recursion} reached")
    code: FunctionCode = func._code
    it.ops += 1 + code.tail_weight  # the call, and a `return <expr>` body with it
    if it.ops >= it.next_check:
        it.check_limits()
    info = code.info
    if self_obj is not None:
        args = (self_obj, *args)
    params = code.params
    if code.simple and not kwargs and len(args) == len(params):
        if len(params) == 1:
            variables = {params[0]: args[0]}
        elif len(params) == 2:
            variables = {params[0]: args[0], params[1]: args[1]}
        else:
            variables = dict(zip(params, args, strict=False))  # as many (checked above)
    else:
        variables = {}
        it._bind_args(func, variables, args, kwargs)
    # a Scope without running its __init__: set what differs from the defaults
    scope = _new_scope(Scope)
    scope.vars = variables
    scope.parent = func._scope
    scope.local_names = info.local_names
    if info.globals_:
        scope.globals_ = info.globals_
    if info.nonlocals:
        scope.nonlocals = info.nonlocals
    first = code.first
    if first is not None:
        scope.self_obj = variables.get(first)
    owner = func._owner
    if owner is not None:
        scope.owner = owner
    it.depth += 1
    body = code.body
    try:
        tail = code.tail
        if tail is not None:
            if body is not None:
                flow = body(scope)
                if flow is not None and type(flow) is Flow:
                    if flow.kind == RETURN:
                        return flow.value
                    raise flow.escape()
            try:
                return tail(scope)
            except BaseException as exc:
                mark(it, exc, code.tail_line)
                raise
        assert body is not None
        if func._is_generator:
            scope.sink = []
            with contextlib.suppress(_Return):
                flow = body(scope)
                if flow is not None and type(flow) is Flow and flow.kind != RETURN:
                    raise flow.escape()
            return Metered(it, iter(scope.sink))
        flow = body(scope)
        if flow is not None and type(flow) is Flow:
            if flow.kind == RETURN:
                return flow.value
            raise flow.escape()  # `break`/`continue` outside a loop
        return None
    finally:
        it.depth -= 1


def _bind_args(
    it: Compiler, func: SandboxFunction, out: dict[str, Any], args: Any, kwargs: dict[str, Any]
) -> None:
    a = func._node.args
    name = func._name
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    if len(args) > len(positional) and a.vararg is None:
        raise TypeError(
            f"{name}() takes {len(positional)} positional arguments but {len(args)} were given"
        )
    for pname, value in zip(positional, args, strict=False):
        out[pname] = value
    if a.vararg is not None:
        out[a.vararg.arg] = tuple(args[len(positional) :])
    extra: dict[str, Any] = {}
    posonly = {p.arg for p in a.posonlyargs}
    kwonly = [p.arg for p in a.kwonlyargs]
    for key, value in kwargs.items():
        if key in out and key in positional[: len(args)]:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        if (key in positional and key not in posonly) or key in kwonly:
            out[key] = value
        elif a.kwarg is not None:
            extra[key] = value
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    defaults = func._defaults
    first_default = len(positional) - len(defaults)
    for i, pname in enumerate(positional):
        if pname not in out:
            if i >= first_default:
                out[pname] = defaults[i - first_default]
            else:
                raise TypeError(f"{name}() missing required positional argument: '{pname}'")
    for pname, default in zip(kwonly, func._kw_defaults, strict=True):
        if pname not in out:
            if default is _MISSING:
                raise TypeError(f"{name}() missing required keyword-only argument: '{pname}'")
            out[pname] = default
    if a.kwarg is not None:
        out[a.kwarg.arg] = extra


def instantiate(it: Compiler, cls: SandboxClass, args: Any, kwargs: dict[str, Any]) -> Any:
    it.tick()
    obj: Any
    obj = cls._exc_type(*args) if cls._exc_type is not None else SandboxInstance(cls)
    found, init = cls.lookup("__init__")
    if found and isinstance(init, SandboxFunction):
        result = it.call_function(init, obj, args, kwargs)
        if result is not None:
            raise TypeError("__init__() should return None")
    elif (args or kwargs) and cls._exc_type is None:
        raise TypeError(f"{cls._name}() takes no arguments")
    return obj


def make_function(
    it: Compiler,
    code: FunctionCode,
    scope: Scope,
    defaults: list[Callable[[Scope], Any]],
    kw_defaults: list[Callable[[Scope], Any] | None],
) -> SandboxFunction:
    """A function object for compiled `code`, its defaults evaluated now."""
    a = code.node.args
    bindable = it.bindable
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
        if arg is not None and arg.arg not in bindable:
            it.check_bind(arg.arg)
    values = [d(scope) for d in defaults]
    kw_values = [_MISSING if d is None else d(scope) for d in kw_defaults]
    info = code.info
    parent = scope.parent if scope.is_class and scope.parent is not None else scope
    return SandboxFunction(
        it, code.node, parent, values, kw_values, info.local_names, info.is_generator, code
    )
