"""The interpreter: compiles the AST of the code once into a tree of Python
closures (`_stmts`, `_exprs`, `_callexprs`, `_comps`, `_fast`), so every
name lookup, attribute access, call and loop still passes through the
sandbox's checks and is counted, without walking the tree on every step.

Model code is never compiled to CPython bytecode. Denials raise `SecurityError`
and exhausted limits `LimitExceeded`; both end the run and no `except` or
`finally` of the code can intercept them.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator
from typing import Any

from memagent.sandbox import _attrs, _budget, _calls, _ops
from memagent.sandbox._builtins import make_builtins
from memagent.sandbox._exprs import EXPRESSIONS
from memagent.sandbox._format import SafeFormatter, host_recursion_guard, safe_format
from memagent.sandbox._names import block, mark
from memagent.sandbox._nesting import TupleDepths
from memagent.sandbox._objects import (
    BoundMethod,
    HostFunction,
    Internal,
    Metered,
    ModuleProxy,
    SandboxClass,
    SandboxFunction,
    SandboxInstance,
)
from memagent.sandbox._policy import (
    _FAST_TYPES,
    MAX_DEFINITIONS,
    Flow,
    is_dunder,
)
from memagent.sandbox._scope import MODULE, Ctx, Scope
from memagent.sandbox._stmts import STATEMENTS, raise_at_run
from memagent.sandbox.limits import (
    LimitExceeded,
    Limits,
    SecurityError,
)

_MAX_CACHED = 64
_MAX_CACHED_SOURCE = 32_768
"""Compiled sources a session keeps (the oldest goes first), each of at most
`_MAX_CACHED_SOURCE` characters: a live session in a worker stays small even
when fed many large scripts."""


# a top-level statement compiled: its line, its operations, its closure, the
# statement when it is a definition the session records, and whether its value
# is the run's result (a final expression statement)
Step = tuple[int, int, Callable[[Scope], Any], ast.stmt | None, bool]


class CompiledModule:
    """A module's top-level statements, compiled (see `Step`)."""

    __slots__ = ("steps",)

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps


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
    check_limits = _budget.check_limits
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
    getattr = _attrs.get_attr
    _internal_getattr = _attrs._internal_getattr
    setattr = _attrs.set_attr
    delattr = _attrs.del_attr
    call = _calls.call
    _wrap_kwargs = _calls._wrap_kwargs
    _wrap_nested = _calls._wrap_nested
    _wrap_arg = _calls._wrap_arg
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
        self.max_depth = limits.max_recursion
        self.tuples = TupleDepths()
        self.type_calls: dict[type, Callable[..., Any]] = {}
        self._rng: random.Random | None = None
        self.globals: dict[str, Any] = {}
        self.global_scope = Scope(self.globals, None)
        self.builtins, self.denied_names, self.nowrap = make_builtins(self)
        self.protected = frozenset({"final_answer", "FINAL", "FINAL_VAR"})
        self.bindable: set[str] = set()
        for name, fn in tools.items():
            self.add_tool(name, fn)
        self._modules = modules
        self._module_cache: dict[str, ModuleProxy] = {}
        self._compiled: dict[str, CompiledModule] = {}
        self.next_check = 0
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

    @property
    def rng(self) -> random.Random:
        """The run's random generator, seeded from the OS when first used."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    def add_tool(self, name: str, fn: Callable[..., Any]) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"invalid tool name {name!r}")
        if name in self.protected:
            raise ValueError(f"a tool named {name!r} is already loaded")
        if name in self.globals:
            raise ValueError(f"the session already has a variable named {name!r}")
        if not callable(fn):
            raise ValueError(f"tool {name!r} is not callable")
        self.builtins[name] = HostFunction(name, fn)
        self.protected = self.protected | {name}
        self.bindable.discard(name)

    # ------------------------------------------------------------------ compile

    def compile_module(self, source: str) -> CompiledModule:
        """Parse and compile `source` once; the compiled form is cached by its
        source text for the life of the session (it closes over this
        interpreter, so it is never shared). SyntaxError as `ast.parse`."""
        cached = self._compiled.get(source)
        if cached is not None:
            return cached
        tree = ast.parse(source, mode="exec")
        ctx = Ctx(MODULE, None)
        steps: list[Step] = []
        body = tree.body
        for i, stmt in enumerate(body):
            ctx.weight = 1
            is_result = i == len(body) - 1 and isinstance(stmt, ast.Expr)
            if is_result:
                assert isinstance(stmt, ast.Expr)
                fn: Callable[[Scope], Any] = self.compile_expr(stmt.value, ctx)
            else:
                fn = self.compile_stmt(stmt, ctx)
            definition = isinstance(
                stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
            )
            steps.append((stmt.lineno, ctx.weight, fn, stmt if definition else None, is_result))
        compiled = CompiledModule(steps)
        if len(source) <= _MAX_CACHED_SOURCE:  # a big one-off script is not kept
            if len(self._compiled) >= _MAX_CACHED:
                self._compiled.pop(next(iter(self._compiled)))
            self._compiled[source] = compiled
        return compiled

    def compile_stmt(self, stmt: ast.stmt, ctx: Ctx) -> Callable[[Scope], None]:
        handler = STATEMENTS.get(stmt.__class__)
        if handler is None:
            return raise_at_run(
                SyntaxError(f"{type(stmt).__name__} statements are not supported in the sandbox")
            )
        return handler(self, stmt, ctx)

    def compile_expr(self, node: ast.expr, ctx: Ctx) -> Callable[[Scope], Any]:
        ctx.weight += 1
        handler = EXPRESSIONS.get(node.__class__)
        if handler is None:
            return raise_at_run(
                SyntaxError(f"{type(node).__name__} expressions are not supported in the sandbox")
            )
        return handler(self, node, ctx)

    def compile_body(
        self, body: list[ast.stmt], ctx: Ctx
    ) -> tuple[list[Callable[[Scope], None]], list[int], int]:
        """Compiled statements, their lines, and the operations they cost."""
        saved = ctx.weight
        fns: list[Callable[[Scope], None]] = []
        lines: list[int] = []
        total = 0
        for stmt in body:
            ctx.weight = 1
            fns.append(self.compile_stmt(stmt, ctx))
            lines.append(stmt.lineno)
            total += ctx.weight
        ctx.weight = saved
        return fns, lines, total

    def compile_block(self, body: list[ast.stmt], ctx: Ctx) -> Callable[[Scope], None]:
        """A block that charges its statements' operations when it starts."""
        fns, lines, weight = self.compile_body(body, ctx)
        return block(self, fns, lines, weight)

    # ------------------------------------------------------------------ entry

    def exec_module(self, compiled: CompiledModule) -> Any:
        """Run compiled module code; returns the value of a final expression statement."""
        result = None
        scope = self.global_scope
        for line, weight, fn, definition, is_result in compiled.steps:
            self.line = line
            self.ops += weight
            if self.ops >= self.next_check:
                self.check_limits()
            try:
                value = fn(scope)
            except BaseException as exc:
                mark(self, exc, line)
                raise
            if is_result:
                result = value
            elif value is not None and type(value) is Flow:
                raise value.escape()  # `return`/`break` outside a function or loop
            if definition is not None:
                self._record_definition(definition)
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

    # ------------------------------------------------------------------ names

    def check_bind(self, name: str) -> None:
        if name in self.bindable:
            return
        if is_dunder(name):
            raise SecurityError(f"binding the name '{name}' is not allowed")
        if name in self.protected:
            raise SecurityError(f"'{name}' is a tool and cannot be rebound")
        self.bindable.add(name)

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
