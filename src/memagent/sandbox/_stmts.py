"""Statement handlers: one function per statement type, taking the compiler as
a typed argument (`Compiler`); `STATEMENTS` maps node types to them."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable
from typing import Any

from memagent.sandbox._api import Compiler
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
    _Break,
    _Continue,
    _Return,
    is_dunder,
)
from memagent.sandbox._scope import Scope
from memagent.sandbox.limits import FinalAnswer, SandboxAbort, SecurityError


def s_expr(it: Compiler, node: ast.Expr, scope: Scope) -> None:
    it.ev(node.value, scope)


def s_assign(it: Compiler, node: ast.Assign, scope: Scope) -> None:
    value = it.ev(node.value, scope)
    for target in node.targets:
        it.assign(target, value, scope)


def s_annassign(it: Compiler, node: ast.AnnAssign, scope: Scope) -> None:
    if node.value is not None:
        it.assign(node.target, it.ev(node.value, scope), scope)


def s_augassign(it: Compiler, node: ast.AugAssign, scope: Scope) -> None:
    target = node.target
    op = type(node.op)
    if isinstance(target, ast.Name):
        current = it.load(target.id, scope)
        it.store(target.id, it.binop(op, current, it.ev(node.value, scope), True), scope)
    elif isinstance(target, ast.Subscript):
        obj = it.ev(target.value, scope)
        key = it.ev(target.slice, scope)
        current = it.getitem(obj, key)
        it.setitem(obj, key, it.binop(op, current, it.ev(node.value, scope), True))
    elif isinstance(target, ast.Attribute):
        obj = it.ev(target.value, scope)
        current = it.getattr(obj, target.attr)
        it.setattr(obj, target.attr, it.binop(op, current, it.ev(node.value, scope), True))
    else:
        raise SyntaxError("illegal expression for augmented assignment")


def s_if(it: Compiler, node: ast.If, scope: Scope) -> None:
    if it.truth(it.ev(node.test, scope)):
        it.exec_block(node.body, scope)
    else:
        it.exec_block(node.orelse, scope)


def s_for(it: Compiler, node: ast.For, scope: Scope) -> None:
    iterable = it.ev(node.iter, scope)
    target = node.target
    body = node.body
    simple = target.id if isinstance(target, ast.Name) else None
    if simple is not None:
        it.check_bind(simple)
        if scope.globals_ or scope.nonlocals or scope.is_comp:
            simple = None
    exec_stmt = it.exec_stmt
    max_ops = it._max_ops
    variables = scope.vars
    for item in it.iterate(iterable):
        it.ops = ops = it.ops + 1
        if ops >= max_ops or not ops & 1023:
            it.ops -= 1
            it.tick()
        if simple is not None:
            variables[simple] = item
        else:
            it.assign(target, item, scope)
        try:
            for stmt in body:
                exec_stmt(stmt, scope)
        except _Break:
            return
        except _Continue:
            continue
    it.exec_block(node.orelse, scope)


def s_while(it: Compiler, node: ast.While, scope: Scope) -> None:
    while it.truth(it.ev(node.test, scope)):
        try:
            for stmt in node.body:
                it.exec_stmt(stmt, scope)
        except _Break:
            return
        except _Continue:
            continue
    it.exec_block(node.orelse, scope)


def s_break(it: Compiler, node: ast.Break, scope: Scope) -> None:
    raise _Break


def s_continue(it: Compiler, node: ast.Continue, scope: Scope) -> None:
    raise _Continue


def s_pass(it: Compiler, node: ast.stmt, scope: Scope) -> None:
    return None


def s_return(it: Compiler, node: ast.Return, scope: Scope) -> None:
    raise _Return(None if node.value is None else it.ev(node.value, scope))


def s_def(it: Compiler, node: ast.FunctionDef, scope: Scope) -> None:
    if scope.is_class:
        if is_dunder(node.name) and node.name not in ALLOWED_DUNDERS:
            raise SecurityError(f"defining {node.name} is not supported in the sandbox")
    else:
        it.check_bind(node.name)
    decorators = [it.ev(d, scope) for d in node.decorator_list]
    value: Any = it.make_function(node, scope)
    for deco in reversed(decorators):
        value = it.call(deco, (value,), {})
    if scope.is_class:
        scope.vars[node.name] = value
    else:
        it.store(node.name, value, scope)


def s_class(it: Compiler, node: ast.ClassDef, scope: Scope) -> None:
    it.check_bind(node.name)
    if node.keywords:
        raise SecurityError("class keywords (metaclass=…) are not allowed")
    bases: list[SandboxClass] = []
    exc_base: type[BaseException] | None = None
    for b in node.bases:
        base = it.ev(b, scope)
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
    body_scope = Scope({}, scope, is_class=True)
    it.exec_block(node.body, body_scope)
    attrs = body_scope.vars
    decorators = [it.ev(d, scope) for d in node.decorator_list]
    exc_type: type[BaseException] | None = None
    cls = SandboxClass(it, node.name, tuple(bases), attrs, None)
    if exc_base is not None:
        pybases = (
            (exc_base,) if issubclass(exc_base, SandboxException) else (SandboxException, exc_base)
        )
        exc_type = type(node.name, pybases, {"_sandbox_cls": cls})
        cls._exc_type = exc_type
    for value in attrs.values():
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(fn, SandboxFunction):
            fn._owner = cls
    result: Any = cls
    for deco in reversed(decorators):
        result = it.call(deco, (result,), {})
    it.store(node.name, result, scope)


def s_try(it: Compiler, node: ast.Try, scope: Scope) -> None:
    try:
        it.exec_block(node.body, scope)
    except (SandboxAbort, FinalAnswer):
        raise
    except (_Break, _Continue, _Return):
        it.exec_block(node.finalbody, scope)
        raise
    except Exception as exc:
        if not hasattr(exc, "_sandbox_line"):
            _mark_line(it, exc)
        for handler in node.handlers:
            if handler.type is not None:
                types = it.ev(handler.type, scope)
                if not _exc_matches(it, exc, types):
                    continue
            if handler.name:
                it.store(handler.name, exc, scope)
            it.handling.append(exc)
            try:
                it.exec_block(handler.body, scope)
            except (SandboxAbort, FinalAnswer):
                raise
            except BaseException:
                it.exec_block(node.finalbody, scope)
                raise
            finally:
                it.handling.pop()
            break
        else:
            it.exec_block(node.finalbody, scope)
            raise
    else:
        try:
            it.exec_block(node.orelse, scope)
        except (SandboxAbort, FinalAnswer):
            raise
        except BaseException:
            it.exec_block(node.finalbody, scope)
            raise
    it.exec_block(node.finalbody, scope)


def _mark_line(it: Compiler, exc: BaseException) -> None:
    with contextlib.suppress(AttributeError, TypeError):
        exc._sandbox_line = it.line  # type: ignore[attr-defined]


def _exc_matches(it: Compiler, exc: BaseException, types: Any) -> bool:
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


def s_raise(it: Compiler, node: ast.Raise, scope: Scope) -> None:
    if node.exc is None:
        if not it.handling:
            raise RuntimeError("No active exception to reraise")
        raise it.handling[-1]
    exc = _make_exc(it, it.ev(node.exc, scope))
    if node.cause is not None:
        cause = it.ev(node.cause, scope)
        exc.__cause__ = None if cause is None else _make_exc(it, cause)
    raise exc


def _make_exc(it: Compiler, value: Any) -> BaseException:
    if isinstance(value, SandboxClass):
        value = it.instantiate(value, (), {})
    elif isinstance(value, type) and issubclass(value, BaseException):
        value = value()
    if not isinstance(value, Exception) or isinstance(value, _CONTROL):
        raise TypeError("exceptions must derive from BaseException")
    return value


def s_with(it: Compiler, node: ast.With, scope: Scope) -> None:
    _with_items(it, node.items, node.body, scope)


def _with_items(
    it: Compiler, items: list[ast.withitem], body: list[ast.stmt], scope: Scope
) -> None:
    if not items:
        it.exec_block(body, scope)
        return
    item = items[0]
    ctx = it.ev(item.context_expr, scope)
    enter = it.dunder(ctx, "__enter__")
    exit_ = it.dunder(ctx, "__exit__")
    if enter is None or exit_ is None:
        raise TypeError(
            f"'{it.type_name(ctx)}' object does not support the context manager protocol"
        )
    value = it.call(enter, (), {})
    if item.optional_vars is not None:
        it.assign(item.optional_vars, value, scope)
    try:
        _with_items(it, items[1:], body, scope)
    except _CONTROL:
        raise
    except Exception as exc:
        if not it.truth(it.call(exit_, (type(exc), exc, None), {})):
            raise
    else:
        it.call(exit_, (None, None, None), {})


def s_import(it: Compiler, node: ast.Import, scope: Scope) -> None:
    for alias in node.names:
        if "." in alias.name:
            raise SecurityError(f"import of '{alias.name}' is not allowed")
        it.store(alias.asname or alias.name, it.import_module(alias.name), scope)


def s_importfrom(it: Compiler, node: ast.ImportFrom, scope: Scope) -> None:
    if node.level or not node.module or "." in node.module:
        raise SecurityError(f"import from '{node.module or '.'}' is not allowed")
    module = it.import_module(node.module)
    for alias in node.names:
        if alias.name == "*":
            raise SecurityError("'from … import *' is not supported in the sandbox")
        it.store(alias.asname or alias.name, it._internal_getattr(module, alias.name), scope)


def s_delete(it: Compiler, node: ast.Delete, scope: Scope) -> None:
    for target in node.targets:
        if isinstance(target, ast.Name):
            it.delete_name(target.id, scope)
        elif isinstance(target, ast.Subscript):
            obj = it.ev(target.value, scope)
            key = it.ev(target.slice, scope)
            if isinstance(obj, SandboxInstance):
                m = it.dunder(obj, "__delitem__")
                if m is None:
                    raise TypeError(f"'{obj._cls._name}' object does not support item deletion")
                it.call(m, (key,), {})
            elif isinstance(obj, (Internal, type)):
                raise SecurityError("item deletion is not allowed here")
            else:
                del obj[key]
        elif isinstance(target, ast.Attribute):
            it.delattr(it.ev(target.value, scope), target.attr)
        elif isinstance(target, (ast.Tuple, ast.List)):
            s_delete(it, ast.Delete(targets=list(target.elts)), scope)
        else:
            raise SyntaxError("cannot delete this expression")


def s_assert(it: Compiler, node: ast.Assert, scope: Scope) -> None:
    if not it.truth(it.ev(node.test, scope)):
        if node.msg is None:
            raise AssertionError
        raise AssertionError(it.ev(node.msg, scope))


STATEMENTS: dict[type[ast.AST], Callable[[Compiler, Any, Scope], None]] = {
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
