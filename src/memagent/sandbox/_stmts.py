"""Statement compilers: one function per statement type, taking the compiler
as a typed argument (`Compiler`) and the compile-time scope (`Ctx`), returning
the closure that runs the statement; `STATEMENTS` maps node types to them."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._calls import compile_function
from memagent.sandbox._fast import assign_item, augassign_name
from memagent.sandbox._loops import s_for, s_while
from memagent.sandbox._names import StmtFn, mark, storer
from memagent.sandbox._objects import (
    Internal,
    SandboxClass,
    SandboxException,
    SandboxFunction,
    SandboxInstance,
)
from memagent.sandbox._policy import (
    _CONTROL,
    ALLOWED_DUNDERS,
    BREAK,
    CONTINUE,
    RETURN,
    Flow,
    _Break,
    _Continue,
    _Return,
    is_dunder,
)
from memagent.sandbox._scope import CLASS, Ctx, Scope
from memagent.sandbox._targets import compile_target
from memagent.sandbox.limits import FinalAnswer, SandboxAbort, SecurityError


def raise_at_run(exc: BaseException) -> StmtFn:
    """A statement the sandbox refuses fails when it is reached, as it did when
    the tree was walked: the statements before it still run."""

    def fail(s: Scope) -> None:
        raise exc

    return fail


def s_expr(it: Compiler, node: ast.Expr, ctx: Ctx) -> StmtFn:
    return it.compile_expr(node.value, ctx)


def s_assign(it: Compiler, node: ast.Assign, ctx: Ctx) -> StmtFn:
    value = it.compile_expr(node.value, ctx)
    targets = node.targets
    if len(targets) == 1 and isinstance(targets[0], ast.Name) and ctx.direct(targets[0].id):
        name = targets[0].id
        bindable = it.bindable
        check_bind = it.check_bind

        def assign_name(s: Scope) -> None:
            v = value(s)
            if name not in bindable:
                check_bind(name)
            s.vars[name] = v

        return assign_name
    if len(targets) == 1 and isinstance(targets[0], ast.Subscript):
        return assign_item(it, value, targets[0], ctx)
    stores = [compile_target(it, t, ctx) for t in targets]
    if len(stores) == 1:
        store = stores[0]
        return lambda s: store(s, value(s))

    def assign_many(s: Scope) -> None:
        v = value(s)
        for store in stores:
            store(s, v)

    return assign_many


def s_annassign(it: Compiler, node: ast.AnnAssign, ctx: Ctx) -> StmtFn:
    if node.value is None:
        return lambda s: None
    value = it.compile_expr(node.value, ctx)
    store = compile_target(it, node.target, ctx)
    return lambda s: store(s, value(s))


def s_augassign(it: Compiler, node: ast.AugAssign, ctx: Ctx) -> StmtFn:
    target = node.target
    op = type(node.op)
    binop = it.binop
    if isinstance(target, ast.Name):
        return augassign_name(it, target.id, op, node.value, ctx)
    value = it.compile_expr(node.value, ctx)
    if isinstance(target, ast.Subscript):
        obj = it.compile_expr(target.value, ctx)
        key = it.compile_expr(target.slice, ctx)
        getitem, setitem = it.getitem, it.setitem

        def aug_item(s: Scope) -> None:
            o, k = obj(s), key(s)
            setitem(o, k, binop(op, getitem(o, k), value(s), True))

        return aug_item
    if isinstance(target, ast.Attribute):
        base = it.compile_expr(target.value, ctx)
        attr = target.attr
        getattr_, setattr_ = it.getattr, it.setattr

        def aug_attr(s: Scope) -> None:
            o = base(s)
            setattr_(o, attr, binop(op, getattr_(o, attr), value(s), True))

        return aug_attr
    return raise_at_run(SyntaxError("illegal expression for augmented assignment"))


def s_if(it: Compiler, node: ast.If, ctx: Ctx) -> StmtFn:
    test = it.compile_expr(node.test, ctx)
    body = it.compile_block(node.body, ctx)
    orelse = it.compile_block(node.orelse, ctx) if node.orelse else None
    truth = it.truth

    def if_(s: Scope) -> Any:
        t = test(s)
        if t is True or (t is not False and truth(t)):
            return body(s)
        if orelse is not None:
            return orelse(s)
        return None

    return if_


def s_break(it: Compiler, node: ast.Break, ctx: Ctx) -> StmtFn:
    return lambda s: BREAK


def s_continue(it: Compiler, node: ast.Continue, ctx: Ctx) -> StmtFn:
    return lambda s: CONTINUE


def s_pass(it: Compiler, node: ast.stmt, ctx: Ctx) -> StmtFn:
    return lambda s: None


def s_return(it: Compiler, node: ast.Return, ctx: Ctx) -> StmtFn:
    if node.value is None:
        return lambda s: Flow(RETURN)
    value = it.compile_expr(node.value, ctx)
    return lambda s: Flow(RETURN, value(s))


def s_def(it: Compiler, node: ast.FunctionDef, ctx: Ctx) -> StmtFn:
    in_class = ctx.kind == CLASS
    if in_class and is_dunder(node.name) and node.name not in ALLOWED_DUNDERS:
        return raise_at_run(SecurityError(f"defining {node.name} is not supported in the sandbox"))
    name = node.name
    decorators = [it.compile_expr(d, ctx) for d in node.decorator_list]
    defaults = [it.compile_expr(d, ctx) for d in node.args.defaults]
    kw_defaults = [None if d is None else it.compile_expr(d, ctx) for d in node.args.kw_defaults]
    code = compile_function(it, node, ctx)
    store = None if in_class else storer(it, name, ctx)
    make, call, check_bind = it.make_function, it.call, it.check_bind

    def def_(s: Scope) -> None:
        if store is not None:
            check_bind(name)
        decos = [d(s) for d in decorators]
        value: Any = make(code, s, defaults, kw_defaults)
        for deco in reversed(decos):
            value = call(deco, (value,), {})
        if store is None:
            s.vars[name] = value
        else:
            store(s, value)

    return def_


def s_class(it: Compiler, node: ast.ClassDef, ctx: Ctx) -> StmtFn:
    if node.keywords:
        return raise_at_run(SecurityError("class keywords (metaclass=…) are not allowed"))
    name = node.name
    bases_fns = [it.compile_expr(b, ctx) for b in node.bases]
    body = it.compile_block(node.body, Ctx(CLASS, ctx))
    decorators = [it.compile_expr(d, ctx) for d in node.decorator_list]
    store = storer(it, name, ctx)

    def class_(s: Scope) -> None:
        it.check_bind(name)
        bases: list[SandboxClass] = []
        exc_base: type[BaseException] | None = None
        for b in bases_fns:
            base = b(s)
            if isinstance(base, SandboxClass):
                bases.append(base)
                if base._exc_type is not None:
                    exc_base = base._exc_type
            elif base is object:
                continue
            elif isinstance(base, type) and issubclass(base, Exception):
                exc_base = base
            else:
                raise SecurityError(
                    "a sandbox class may derive only from object, exceptions or sandbox classes"
                )
        body_scope = Scope({}, s, is_class=True)
        flow = body(body_scope)
        if flow is not None and type(flow) is Flow:
            raise flow.escape()
        attrs = body_scope.vars
        decos = [d(s) for d in decorators]
        cls = SandboxClass(it, name, tuple(bases), attrs, None)
        if exc_base is not None:
            pybases = (
                (exc_base,)
                if issubclass(exc_base, SandboxException)
                else (SandboxException, exc_base)
            )
            cls._exc_type = type(name, pybases, {"_sandbox_cls": cls})
        for value in attrs.values():
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if isinstance(fn, SandboxFunction):
                fn._owner = cls
        result: Any = cls
        for deco in reversed(decos):
            result = it.call(deco, (result,), {})
        store(s, result)

    return class_


def s_try(it: Compiler, node: ast.Try, ctx: Ctx) -> StmtFn:
    body = it.compile_block(node.body, ctx)
    handlers = [
        (
            None if h.type is None else it.compile_expr(h.type, ctx),
            None if not h.name else storer(it, h.name, ctx),
            it.compile_block(h.body, ctx),
        )
        for h in node.handlers
    ]
    orelse = it.compile_block(node.orelse, ctx)
    finalbody = it.compile_block(node.finalbody, ctx)

    def try_(s: Scope) -> Any:
        r: Any = None
        try:
            r = body(s)
        except (SandboxAbort, FinalAnswer):
            raise
        except (_Break, _Continue, _Return):
            finalbody(s)
            raise
        except Exception as exc:
            if getattr(exc, "_sandbox_line", None) is None:
                mark(it, exc, it.line)
            for types_fn, store, handler in handlers:
                if types_fn is not None and not _exc_matches(exc, types_fn(s)):
                    continue
                if store is not None:
                    store(s, exc)
                it.handling.append(exc)
                try:
                    r = handler(s)
                except (SandboxAbort, FinalAnswer):
                    raise
                except BaseException:
                    finalbody(s)
                    raise
                finally:
                    it.handling.pop()
                break
            else:
                finalbody(s)
                raise
        else:
            if r is None or type(r) is not Flow:
                try:
                    r = orelse(s)
                except (SandboxAbort, FinalAnswer):
                    raise
                except BaseException:
                    finalbody(s)
                    raise
        final = finalbody(s)
        if final is not None and type(final) is Flow:
            return final  # flow in `finally` wins, as in Python
        return r

    return try_


def _exc_matches(exc: BaseException, types: Any) -> bool:
    if not isinstance(types, tuple):
        types = (types,)
    for t in types:
        if isinstance(t, SandboxClass):
            if t._exc_type is not None and isinstance(exc, t._exc_type):
                return True
        elif isinstance(t, type) and issubclass(t, BaseException):
            if isinstance(exc, t):
                return True
        else:
            raise TypeError(
                "catching classes that do not inherit from BaseException is not allowed"
            )
    return False


def s_raise(it: Compiler, node: ast.Raise, ctx: Ctx) -> StmtFn:
    exc_fn = None if node.exc is None else it.compile_expr(node.exc, ctx)
    cause_fn = None if node.cause is None else it.compile_expr(node.cause, ctx)

    def raise_(s: Scope) -> None:
        if exc_fn is None:
            if not it.handling:
                raise RuntimeError("No active exception to reraise")
            raise it.handling[-1]
        exc = _make_exc(it, exc_fn(s))
        if cause_fn is not None:
            cause = cause_fn(s)
            exc.__cause__ = None if cause is None else _make_exc(it, cause)
        raise exc

    return raise_


def _make_exc(it: Compiler, value: Any) -> BaseException:
    if isinstance(value, SandboxClass):
        value = it.instantiate(value, (), {})
    elif isinstance(value, type) and issubclass(value, BaseException):
        value = value()
    if not isinstance(value, Exception) or isinstance(value, _CONTROL):
        raise TypeError("exceptions must derive from BaseException")
    return value


def s_with(it: Compiler, node: ast.With, ctx: Ctx) -> StmtFn:
    run = it.compile_block(node.body, ctx)
    for item in reversed(node.items):
        run = _with_item(it, item, run, ctx)
    return run


def _with_item(it: Compiler, item: ast.withitem, inner: StmtFn, ctx: Ctx) -> StmtFn:
    context = it.compile_expr(item.context_expr, ctx)
    store = None if item.optional_vars is None else compile_target(it, item.optional_vars, ctx)

    def with_(s: Scope) -> Any:
        cm = context(s)
        enter = it.dunder(cm, "__enter__")
        exit_ = it.dunder(cm, "__exit__")
        if enter is None or exit_ is None:
            raise TypeError(
                f"'{it.type_name(cm)}' object does not support the context manager protocol"
            )
        value = it.call(enter, (), {})
        if store is not None:
            store(s, value)
        r: Any = None
        try:
            r = inner(s)
        except _CONTROL:
            raise
        except Exception as exc:
            if not it.truth(it.call(exit_, (type(exc), exc, None), {})):
                raise
        else:
            it.call(exit_, (None, None, None), {})
        return r

    return with_


def s_import(it: Compiler, node: ast.Import, ctx: Ctx) -> StmtFn:
    for alias in node.names:
        if "." in alias.name:
            return raise_at_run(SecurityError(f"import of '{alias.name}' is not allowed"))
    pairs = [(a.name, storer(it, a.asname or a.name, ctx)) for a in node.names]

    def import_(s: Scope) -> None:
        for module, store in pairs:
            store(s, it.import_module(module))

    return import_


def s_importfrom(it: Compiler, node: ast.ImportFrom, ctx: Ctx) -> StmtFn:
    if node.level or not node.module or "." in node.module:
        return raise_at_run(SecurityError(f"import from '{node.module or '.'}' is not allowed"))
    module_name = node.module
    if any(a.name == "*" for a in node.names):
        return raise_at_run(SecurityError("'from … import *' is not supported in the sandbox"))
    pairs = [(a.name, storer(it, a.asname or a.name, ctx)) for a in node.names]

    def importfrom(s: Scope) -> None:
        module = it.import_module(module_name)
        for name, store in pairs:
            store(s, it._internal_getattr(module, name))

    return importfrom


def s_delete(it: Compiler, node: ast.Delete, ctx: Ctx) -> StmtFn:
    parts = [_delete_one(it, t, ctx) for t in node.targets]

    def delete(s: Scope) -> None:
        for part in parts:
            part(s)

    return delete


def _delete_one(it: Compiler, target: ast.expr, ctx: Ctx) -> StmtFn:
    if isinstance(target, ast.Name):
        name = target.id
        return lambda s: it.delete_name(name, s)
    if isinstance(target, ast.Subscript):
        obj_fn = it.compile_expr(target.value, ctx)
        key_fn = it.compile_expr(target.slice, ctx)

        def del_item(s: Scope) -> None:
            obj, key = obj_fn(s), key_fn(s)
            if isinstance(obj, SandboxInstance):
                m = it.dunder(obj, "__delitem__")
                if m is None:
                    raise TypeError(f"'{obj._cls._name}' object does not support item deletion")
                it.call(m, (key,), {})
            elif isinstance(obj, (Internal, type)):
                raise SecurityError("item deletion is not allowed here")
            else:
                del obj[key]

        return del_item
    if isinstance(target, ast.Attribute):
        base = it.compile_expr(target.value, ctx)
        attr = target.attr
        return lambda s: it.delattr(base(s), attr)
    if isinstance(target, (ast.Tuple, ast.List)):
        return s_delete(it, ast.Delete(targets=list(target.elts)), ctx)
    return raise_at_run(SyntaxError("cannot delete this expression"))


def s_assert(it: Compiler, node: ast.Assert, ctx: Ctx) -> StmtFn:
    test = it.compile_expr(node.test, ctx)
    msg = None if node.msg is None else it.compile_expr(node.msg, ctx)

    def assert_(s: Scope) -> None:
        if not it.truth(test(s)):
            if msg is None:
                raise AssertionError
            raise AssertionError(msg(s))

    return assert_


STATEMENTS: dict[type[ast.AST], Callable[[Compiler, Any, Ctx], StmtFn]] = {
    ast.Expr: s_expr,
    ast.Assign: s_assign,
    ast.AugAssign: s_augassign,
    ast.AnnAssign: s_annassign,
    ast.If: s_if,
    ast.For: s_for,
    ast.While: s_while,
    ast.Break: s_break,
    ast.Continue: s_continue,
    ast.Pass: s_pass,
    ast.Return: s_return,
    ast.FunctionDef: s_def,
    ast.ClassDef: s_class,
    ast.Try: s_try,
    ast.Raise: s_raise,
    ast.With: s_with,
    ast.Import: s_import,
    ast.ImportFrom: s_importfrom,
    ast.Delete: s_delete,
    ast.Assert: s_assert,
    ast.Global: s_pass,
    ast.Nonlocal: s_pass,
}
