"""The evaluator: walks the AST of the code itself, so every name lookup,
attribute access, call and loop passes through here and is counted.

Model code is never compiled to CPython bytecode. Denials raise `SecurityError`
and exhausted limits `LimitExceeded`; both end the run and no `except` or
`finally` of the code can intercept them.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from memagent.sandbox import _budget, _calls, _ops
from memagent.sandbox._builtins import make_builtins, risky_method
from memagent.sandbox._exprs import EXPRESSIONS
from memagent.sandbox._format import SafeFormatter, host_recursion_guard, safe_format
from memagent.sandbox._objects import (
    BoundMethod,
    Checked,
    Internal,
    Metered,
    ModuleProxy,
    SandboxClass,
    SandboxException,
    SandboxFunction,
    SandboxInstance,
    Tool,
)
from memagent.sandbox._policy import (
    _DENIED_ATTR_PREFIXES,
    _DENIED_ATTRS,
    _FAST_TYPES,
    _MISSING,
    _NAMEDTUPLE_API,
    _RISKY_NAMES,
    ALLOWED_DUNDERS,
    MAX_DEFINITIONS,
    _Super,
    is_dunder,
)
from memagent.sandbox._scope import FuncInfo, Scope
from memagent.sandbox._stmts import STATEMENTS
from memagent.sandbox.limits import (
    LimitExceeded,
    Limits,
    SecurityError,
)

__all__ = [
    "MAX_DEFINITIONS",
    "Interpreter",
    "SafeFormatter",
    "Scope",
    "host_recursion_guard",
    "is_dunder",
    "safe_format",
]


class Interpreter:
    """One stateful namespace plus the per-run budget: the wiring of the tables
    (`_policy`), the budget (`_budget`), operators (`_ops`), calls (`_calls`)
    and the statement and expression handlers (`_stmts`, `_exprs`)."""

    # the budget, the operators and calls live in their own modules, bound here
    start_run = _budget.start_run
    set_source = _budget.set_source
    tick = _budget.tick
    remaining_time = _budget.remaining_time
    check_size = _budget.check_size
    account = _budget.account
    need_len = _budget.need_len
    need_bits = _budget.need_bits
    text_budget = _budget.text_budget
    account_deep = _budget.account_deep
    text_size = _budget.text_size
    binop = _ops.binop
    _check_repeat = _ops._check_repeat
    check_format_spec = _ops.check_format_spec
    percent_format = _ops.percent_format
    deep_items = _ops.deep_items
    charge_compare = _ops.charge_compare
    compare = _ops.compare
    contains = _ops.contains
    type_name = _ops.type_name
    call = _calls.call
    _wrap_kwargs = _calls._wrap_kwargs
    _wrap_nested = _calls._wrap_nested
    _wrap_arg = _calls._wrap_arg
    func_info = _calls.func_info
    call_function = _calls.call_function
    _bind_args = _calls._bind_args
    instantiate = _calls.instantiate
    make_function = _calls.make_function

    def __init__(
        self,
        limits: Limits,
        tools: dict[str, Callable[..., Any]],
        modules: Callable[[Interpreter, str], ModuleProxy | None],
    ) -> None:
        self.limits = limits
        self._max_ops = limits.max_operations
        self.type_calls: dict[type, Callable[..., Any]] = {}
        self.rng = random.Random()
        self.globals: dict[str, Any] = {}
        self.global_scope = Scope(self.globals, None)
        self.builtins, self.denied_names, self.nowrap = make_builtins(self)
        self.protected = frozenset({"final_answer", "FINAL", "FINAL_VAR"})
        self._bindable: set[str] = set()
        for name, fn in tools.items():
            self.add_tool(name, fn)
        self._modules = modules
        self._module_cache: dict[str, ModuleProxy] = {}
        self._func_info: dict[int, tuple[ast.AST, FuncInfo]] = {}
        self.output: list[str] = []
        self.output_len = 0
        self.output_truncated = False
        self.ops = 0
        self.allocated = 0
        self.iter_nesting = 0
        self.deadline = 0.0
        self.depth = 0
        self.line = 0
        self.handling: list[BaseException] = []
        self.definitions: list[tuple[str, str]] = []
        self._source = ""
        self._stmt = STATEMENTS
        self._expr = EXPRESSIONS

    def add_tool(self, name: str, fn: Callable[..., Any]) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"invalid tool name {name!r}")
        if name in self.protected:
            raise ValueError(f"a tool named {name!r} is already loaded")
        if name in self.globals:
            raise ValueError(f"the session already has a variable named {name!r}")
        if not callable(fn):
            raise ValueError(f"tool {name!r} is not callable")
        self.builtins[name] = Tool(name, fn)
        self.protected = self.protected | {name}
        self._bindable.discard(name)

    # ------------------------------------------------------------------ budget

    # ------------------------------------------------------------------ entry

    def exec_module(self, tree: ast.Module) -> Any:
        """Run a parsed module; returns the value of a final expression statement."""
        body = tree.body
        result = None
        scope = self.global_scope
        for i, stmt in enumerate(body):
            self.line = stmt.lineno
            if i == len(body) - 1 and isinstance(stmt, ast.Expr):
                self.tick()
                result = self.ev(stmt.value, scope)
            else:
                self.exec_stmt(stmt, scope)
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                    self._record_definition(stmt)
        return result

    def _record_definition(self, stmt: ast.stmt) -> None:
        src = ast.get_source_segment(self._source, stmt, padded=False)
        if src is None:
            return
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            lines = [ast.get_source_segment(self._source, d) or "" for d in stmt.decorator_list]
            src = "".join(f"@{d}\n" for d in lines) + src
            names = [stmt.name]
        else:
            assert isinstance(stmt, (ast.Import, ast.ImportFrom))
            names = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        key = ",".join(names)
        kept = [(k, s) for k, s in self.definitions if k != key]
        if len(kept) >= MAX_DEFINITIONS:
            raise LimitExceeded(f"a session keeps at most {MAX_DEFINITIONS} top-level definitions")
        self.definitions = kept
        self.definitions.append((key, src))

    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, stmt: ast.stmt, scope: Scope) -> None:
        self.line = stmt.lineno
        self.ops = ops = self.ops + 1
        if ops >= self._max_ops or not ops & 1023:
            self.ops -= 1
            self.tick()
        try:
            handler = self._stmt[stmt.__class__]
        except KeyError:
            raise SyntaxError(
                f"{type(stmt).__name__} statements are not supported in the sandbox"
            ) from None
        handler(self, stmt, scope)

    def ev(self, node: ast.expr, scope: Scope) -> Any:
        self.ops = ops = self.ops + 1
        if ops >= self._max_ops or not ops & 1023:
            self.ops -= 1
            self.tick()
        cls = node.__class__
        if cls is ast.Name:
            return self.load(node.id, scope)  # type: ignore[attr-defined]
        if cls is ast.Constant:
            return node.value  # type: ignore[attr-defined]
        try:
            handler = self._expr[cls]
        except KeyError:
            raise SyntaxError(
                f"{cls.__name__} expressions are not supported in the sandbox"
            ) from None
        return handler(self, node, scope)

    # ------------------------------------------------------------------ names

    def load(self, name: str, scope: Scope) -> Any:
        s: Scope | None = scope
        while s is not None:
            value = s.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            if name in s.local_names:
                raise UnboundLocalError(
                    f"cannot access local variable '{name}' where it is not associated with a value"
                )
            if name in s.globals_:
                s = self.global_scope
                continue
            s = s.parent
        value = self.builtins.get(name, _MISSING)
        if value is not _MISSING:
            return value
        if is_dunder(name):
            raise SecurityError(f"access to '{name}' is not allowed")
        if name in self.denied_names:
            raise SecurityError(f"'{name}' is not available in the sandbox")
        raise NameError(f"name '{name}' is not defined")

    def check_bind(self, name: str) -> None:
        if name in self._bindable:
            return
        if is_dunder(name):
            raise SecurityError(f"binding the name '{name}' is not allowed")
        if name in self.protected:
            raise SecurityError(f"'{name}' is a tool and cannot be rebound")
        self._bindable.add(name)

    def store(self, name: str, value: Any, scope: Scope) -> None:
        self.check_bind(name)
        if scope.is_comp:
            scope.vars[name] = value
            return
        if name in scope.globals_:
            self.globals[name] = value
        elif name in scope.nonlocals:
            s = scope.parent
            while s is not None and s is not self.global_scope:
                if name in s.vars or name in s.local_names:
                    s.vars[name] = value
                    return
                s = s.parent
            raise SyntaxError(f"no binding for nonlocal '{name}' found")
        else:
            scope.vars[name] = value

    def delete_name(self, name: str, scope: Scope) -> None:
        self.check_bind(name)
        target = self.globals if name in scope.globals_ else scope.vars
        if name not in target:
            raise NameError(f"name '{name}' is not defined")
        del target[name]

    # ------------------------------------------------------------------ attributes

    def getattr(self, obj: Any, name: str) -> Any:
        if type(obj) in _FAST_TYPES and name[:1] != "_" and name not in _RISKY_NAMES:
            return getattr(obj, name)
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if isinstance(obj, Internal):
            return self._internal_getattr(obj, name)
        if isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            if is_dunder(name):
                raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
            if name in obj._sandbox_attrs:
                return obj._sandbox_attrs[name]
            found, value = obj._sandbox_cls.lookup(name)
            if found:
                return self._bind(value, obj, obj._sandbox_cls)
            if name == "args":
                return obj.args
            raise AttributeError(f"'{obj._sandbox_cls._name}' object has no attribute '{name}'")
        if name in _NAMEDTUPLE_API and (
            isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))
        ):
            return getattr(obj, name)
        if name.startswith("_"):
            what = "dunder" if is_dunder(name) else "private"
            raise SecurityError(f"access to {what} attribute '{name}' is not allowed")
        if name in _DENIED_ATTRS or name.startswith(_DENIED_ATTR_PREFIXES):
            raise SecurityError(f"access to attribute '{name}' is not allowed")
        if isinstance(obj, ModuleType):
            raise SecurityError("access to modules is not allowed")
        special = risky_method(self, obj, name)
        if special is not None:
            return special
        if isinstance(obj, type) and name in _RISKY_NAMES:
            return self._unbound_checked(obj, name)
        value = getattr(obj, name)
        if isinstance(value, ModuleType):
            raise SecurityError(f"attribute '{name}' leads to a module; not allowed")
        if isinstance(value, type) and issubclass(value, type):
            raise SecurityError(f"attribute '{name}' leads to a metaclass; not allowed")
        return value

    def _unbound_checked(self, cls: type, name: str) -> Checked:
        getattr(cls, name)  # AttributeError as usual when the type has no such method

        def unbound(self_obj: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(self_obj, cls):
                raise TypeError(f"descriptor '{name}' requires a '{cls.__name__}' object")
            return self.call(self.getattr(self_obj, name), args, kwargs)

        return Checked(f"{cls.__name__}.{name}", unbound, None)

    @staticmethod
    def _classmethod(value: classmethod[Any, Any, Any], cls: SandboxClass) -> BoundMethod:
        func = value.__func__
        if not isinstance(func, SandboxFunction):
            raise TypeError("classmethod must wrap a function defined in the sandbox")
        return BoundMethod(func, cls)

    def _bind(self, value: Any, obj: Any, cls: SandboxClass) -> Any:
        if isinstance(value, SandboxFunction):
            return BoundMethod(value, obj)
        if isinstance(value, staticmethod):
            return value.__func__
        if isinstance(value, classmethod):
            return self._classmethod(value, cls)
        if isinstance(value, property):
            if value.fget is None:
                raise AttributeError("unreadable property")
            return self.call(value.fget, (obj,), {})
        return value

    def _internal_getattr(self, obj: Internal, name: str) -> Any:
        if isinstance(obj, _Super):
            if is_dunder(name) and name not in ALLOWED_DUNDERS:
                raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
            for base in obj._owner._bases:
                found, value = base.lookup(name)
                if found:
                    return self._bind(value, obj._self, base)
            if name == "__init__":
                self_obj = obj._self

                def base_init(*args: Any) -> None:
                    if isinstance(self_obj, BaseException):
                        self_obj.args = args

                return Tool("__init__", base_init)
            raise AttributeError(f"'super' object has no attribute '{name}'")
        if is_dunder(name):
            raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
        if isinstance(obj, SandboxInstance):
            if name in obj._attrs:
                return obj._attrs[name]
            found, value = obj._cls.lookup(name)
            if found:
                return self._bind(value, obj, obj._cls)
            raise AttributeError(f"'{obj._cls._name}' object has no attribute '{name}'")
        if isinstance(obj, SandboxClass):
            found, value = obj.lookup(name)
            if found:
                if isinstance(value, staticmethod):
                    return value.__func__
                if isinstance(value, classmethod):
                    return self._classmethod(value, obj)
                return value
            raise AttributeError(f"type object '{obj._name}' has no attribute '{name}'")
        if isinstance(obj, ModuleProxy):
            if name.startswith("_") or name not in obj._members:
                raise SecurityError(
                    f"module '{obj._name}' has no attribute '{name}' available in the sandbox"
                )
            return obj._members[name]
        raise SecurityError(f"attributes of {obj!r} are not accessible")

    def setattr(self, obj: Any, name: str, value: Any) -> None:
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if is_dunder(name):
            raise SecurityError(f"setting dunder attribute '{name}' is not allowed")
        if isinstance(obj, (SandboxInstance, SandboxClass)):
            obj._attrs[name] = value
        elif isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            obj._sandbox_attrs[name] = value
        else:
            raise SecurityError(f"cannot set attributes on {type(obj).__name__} objects")

    def delattr(self, obj: Any, name: str) -> None:
        if is_dunder(name):
            raise SecurityError(f"deleting dunder attribute '{name}' is not allowed")
        store: dict[str, Any] | None = None
        if isinstance(obj, (SandboxInstance, SandboxClass)):
            store = obj._attrs
        elif isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            store = obj._sandbox_attrs
        if store is None:
            raise SecurityError(f"cannot delete attributes of {type(obj).__name__} objects")
        if name not in store:
            raise AttributeError(name)
        del store[name]

    # ------------------------------------------------------------------ model dunders

    def dunder(self, obj: Any, name: str) -> Any:
        """The model-defined method `name` of `obj`, bound, or None."""
        if isinstance(obj, SandboxInstance):
            found, value = obj._cls.lookup(name)
            if found and isinstance(value, SandboxFunction):
                return BoundMethod(value, obj)
        return None

    def to_str(self, obj: Any) -> str:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__str__") or self.dunder(obj, "__repr__")
            if m is not None:
                out = self.call(m, (), {})
                if not isinstance(out, str):
                    raise TypeError("__str__ returned non-string")
                return out
            return repr(obj)
        t = type(obj)
        if t is str:
            return obj
        if t is float or t is bool or (t is int and obj.bit_length() < 4096):
            return str(obj)
        self.text_budget(obj)
        return str(obj)

    def to_repr(self, obj: Any) -> str:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__repr__")
            if m is not None:
                out = self.call(m, (), {})
                if not isinstance(out, str):
                    raise TypeError("__repr__ returned non-string")
                return out
            return repr(obj)
        self.text_budget(obj)
        return repr(obj)

    def truth(self, value: Any) -> bool:
        if isinstance(value, SandboxInstance):
            m = self.dunder(value, "__bool__")
            if m is not None:
                return bool(self.call(m, (), {}))
            m = self.dunder(value, "__len__")
            if m is not None:
                return bool(self.call(m, (), {}))
            return True
        return bool(value)

    def iterate(self, obj: Any) -> Iterator[Any]:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__iter__")
            if m is None:
                m2 = self.dunder(obj, "__getitem__")
                if m2 is None:
                    raise TypeError(f"'{obj._cls._name}' object is not iterable")
                return self._getitem_iter(m2)
            it = self.call(m, (), {})
            if isinstance(it, SandboxInstance):
                return self._model_iter(it)
            return iter(it)
        return iter(obj)

    def _model_iter(self, it: SandboxInstance) -> Iterator[Any]:
        nxt = self.dunder(it, "__next__")
        if nxt is None:
            raise TypeError("iter() returned non-iterator")
        while True:
            try:
                yield self.call(nxt, (), {})
            except StopIteration:
                return

    def _getitem_iter(self, getitem: Any) -> Iterator[Any]:
        i = 0
        while True:
            try:
                yield self.call(getitem, (i,), {})
            except IndexError:
                return
            i += 1

    def metered(self, obj: Any) -> Iterator[Any]:
        if isinstance(obj, Metered):
            return obj
        return Metered(self, self.iterate(obj))

    # ------------------------------------------------------------------ operators

    # ------------------------------------------------------------------ calls

    # ------------------------------------------------------------------ assignment

    def assign(self, target: ast.expr, value: Any, scope: Scope) -> None:
        t = type(target)
        if t is ast.Name:
            self.store(target.id, value, scope)  # type: ignore[attr-defined]
        elif t is ast.Tuple or t is ast.List:
            self._unpack(target.elts, value, scope)  # type: ignore[attr-defined]
        elif t is ast.Subscript:
            obj = self.ev(target.value, scope)  # type: ignore[attr-defined]
            key = self.ev(target.slice, scope)  # type: ignore[attr-defined]
            self.setitem(obj, key, value)
        elif t is ast.Attribute:
            obj = self.ev(target.value, scope)  # type: ignore[attr-defined]
            self.setattr(obj, target.attr, value)  # type: ignore[attr-defined]
        elif t is ast.Starred:
            raise SyntaxError("starred assignment target must be in a list or tuple")
        else:
            raise SyntaxError(f"cannot assign to {t.__name__}")

    def _unpack(self, elts: list[ast.expr], value: Any, scope: Scope) -> None:
        star = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        if len(star) > 1:
            raise SyntaxError("multiple starred expressions in assignment")
        if not star:
            it = self.iterate(value)
            items = []
            for x in it:
                self.tick()
                items.append(x)
                if len(items) > len(elts):
                    raise ValueError(f"too many values to unpack (expected {len(elts)})")
            if len(items) < len(elts):
                raise ValueError(
                    f"not enough values to unpack (expected {len(elts)}, got {len(items)})"
                )
            for e, x in zip(elts, items, strict=True):
                self.assign(e, x, scope)
            return
        items = self.collect(value)
        s = star[0]
        after = len(elts) - s - 1
        if len(items) < len(elts) - 1:
            raise ValueError(
                f"not enough values to unpack (expected at least {len(elts) - 1}, got {len(items)})"
            )
        for e, x in zip(elts[:s], items[:s], strict=True):
            self.assign(e, x, scope)
        starred = elts[s]
        assert isinstance(starred, ast.Starred)
        self.assign(starred.value, items[s : len(items) - after], scope)
        for e, x in zip(elts[s + 1 :], items[len(items) - after :], strict=True):
            self.assign(e, x, scope)

    def collect(self, value: Any) -> list[Any]:
        """Materialise an iterable into a list, metered and size-checked."""
        if isinstance(value, (list, tuple, str, bytes, dict, set, frozenset)):
            return list(value)
        out: list[Any] = []
        limit = self.limits.max_collection_len
        for x in self.iterate(value):
            self.tick()
            out.append(x)
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")
        return out

    def getitem(self, obj: Any, key: Any) -> Any:
        if type(obj) in _FAST_TYPES:
            return obj[key]
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__getitem__")
            if m is None:
                raise TypeError(f"'{obj._cls._name}' object is not subscriptable")
            return self.call(m, (key,), {})
        if isinstance(obj, (Internal, type)) and not isinstance(obj, SandboxClass):
            if obj in (list, dict, tuple, set, frozenset):
                return obj[key]
            raise SecurityError(f"subscripting {type(obj).__name__} is not allowed")
        return obj[key]

    def setitem(self, obj: Any, key: Any, value: Any) -> None:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__setitem__")
            if m is None:
                raise TypeError(f"'{obj._cls._name}' object does not support item assignment")
            self.call(m, (key, value), {})
            return
        if isinstance(obj, (Internal, type)):
            raise SecurityError(f"item assignment on {type(obj).__name__} is not allowed")
        if isinstance(key, slice) and isinstance(obj, (list, bytearray)):
            value = self.collect(value) if isinstance(obj, list) else value
            self.need_len(len(obj) + len(value), "coll")
        obj[key] = value

    # ------------------------------------------------------------------ statements

    def import_module(self, name: str) -> ModuleProxy:
        cached = self._module_cache.get(name)
        if cached is not None:
            return cached
        proxy = self._modules(self, name)
        if proxy is None:
            raise SecurityError(f"import of '{name}' is not allowed")
        self._module_cache[name] = proxy
        return proxy

    # ------------------------------------------------------------------ expressions

    def format_value(self, value: Any, spec: str) -> str:
        if not isinstance(spec, str):
            raise TypeError("format spec must be a str")
        self.check_format_spec(spec)
        if isinstance(value, SandboxInstance):
            value = self.to_str(value)
        elif isinstance(value, Internal):
            value = repr(value)
        else:
            self.text_budget(value)
        return format(value, spec)
