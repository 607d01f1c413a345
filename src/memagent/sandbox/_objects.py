"""Objects the interpreter creates for code it runs: functions, classes,
instances, tools and metered iterators.

They are opaque to the code: attribute access on them goes through the
interpreter's rules (model attributes live in a private dict, never in the
Python attributes of these objects), and host code that pokes at them finds
nothing of the model's, so no dunder method written by the model ever runs
outside the interpreter.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from memagent.sandbox.limits import LimitExceeded

if TYPE_CHECKING:
    from memagent.sandbox._api import Compiler
    from memagent.sandbox._scope import Scope


class Internal:
    """Marker base: attribute access on these is denied (except model attrs)."""

    __slots__ = ()


class SandboxFunction(Internal):
    """A `def` or `lambda` of the code; calling it runs the interpreter."""

    __slots__ = (
        "_code",
        "_defaults",
        "_interp",
        "_is_generator",
        "_kw_defaults",
        "_locals",
        "_name",
        "_node",
        "_owner",
        "_scope",
    )

    def __init__(
        self,
        interp: Compiler,
        node: ast.FunctionDef | ast.Lambda,
        scope: Scope,
        defaults: list[Any],
        kw_defaults: list[Any],
        local_names: frozenset[str],
        is_generator: bool,
        code: Any = None,
    ) -> None:
        self._code = code
        self._interp = interp
        self._node = node
        self._scope = scope
        self._defaults = defaults
        self._kw_defaults = kw_defaults
        self._locals = local_names
        self._is_generator = is_generator
        self._name = node.name if isinstance(node, ast.FunctionDef) else "<lambda>"
        self._owner: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._interp.call_function(self, None, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {self._name}>"


class BoundMethod(Internal):
    """A model function bound to a model instance (or class, for the first arg)."""

    __slots__ = ("_func", "_self")

    def __init__(self, func: SandboxFunction, self_obj: Any) -> None:
        self._func = func
        self._self = self_obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._func._interp.call_function(self._func, self._self, args, kwargs)

    def __repr__(self) -> str:
        return f"<bound method {self._func._name}>"


class SandboxClass(Internal):
    """A `class` of the code. `exc_type` is set when it derives from an
    exception: instances are then real exceptions so `raise`/`except` work."""

    __slots__ = ("_attrs", "_bases", "_exc_type", "_interp", "_name")

    def __init__(
        self,
        interp: Compiler,
        name: str,
        bases: tuple[SandboxClass, ...],
        attrs: dict[str, Any],
        exc_type: type[BaseException] | None,
    ) -> None:
        self._interp = interp
        self._name = name
        self._bases = bases
        self._attrs = attrs
        self._exc_type = exc_type

    def lookup(self, name: str) -> tuple[bool, Any]:
        if name in self._attrs:
            return True, self._attrs[name]
        for base in self._bases:
            found, value = base.lookup(name)
            if found:
                return True, value
        return False, None

    def is_subclass_of(self, other: SandboxClass) -> bool:
        return self is other or any(b.is_subclass_of(other) for b in self._bases)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._interp.instantiate(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<class '{self._name}'>"


class SandboxInstance(Internal):
    """An instance of a `SandboxClass` (not an exception)."""

    __slots__ = ("_attrs", "_cls")

    def __init__(self, cls: SandboxClass) -> None:
        self._cls = cls
        self._attrs: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<{self._cls._name} object>"


class SandboxException(Exception):
    """Base of the real exception classes made for exception-derived model classes.
    Model attributes are kept in `_sandbox_attrs`, never as Python attributes."""

    _sandbox_cls: SandboxClass | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._sandbox_attrs: dict[str, Any] = {}


class HostFunction(Internal):
    """A host function injected by name; the code can call it, nothing more."""

    __slots__ = ("_fn", "_name")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self._name = name
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self._name}>"


class CheckedFunction(Internal):
    """A host callable (module function or risky method) whose arguments are
    checked against the limits before it runs."""

    __slots__ = ("_check", "_flat", "_fn", "_name")

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        check: Callable[[tuple[Any, ...], dict[str, Any]], None] | None,
        flat: bool = False,
    ) -> None:
        self._name = name
        self._fn = fn
        self._check = check
        # True when `fn` never iterates what is inside its container arguments
        # (`str.join` takes strings): they need no search for iterators
        self._flat = flat

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._check is not None:
            self._check(args, kwargs)
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<function {self._name}>"


MAX_ITER_NESTING = 100
"""How many metered iterators may be pulling from one another at once. Host
iterators built on host iterators (`enumerate(enumerate(…))`, a `reduce` that
nests a million of them) would otherwise recurse in C until the host crashes."""


class Metered(Internal):
    """Wraps an iterator so every item pulled (even by a C loop such as `sum`
    or `sorted`) costs one operation and re-checks the wall-time limit. Every
    iterator a host call returns is wrapped, so nested ones are nested Metered:
    pulling through more than `MAX_ITER_NESTING` of them ends the run. A tuple
    pulled through one (made by C: `zip`, `enumerate`, `dict.items`) has its
    nesting bounded like the interpreter's own (`_nesting`)."""

    __slots__ = ("_interp", "_it")

    def __init__(self, interp: Compiler, iterable: Any) -> None:
        self._interp = interp
        self._it: Iterator[Any] = iter(iterable)

    def __iter__(self) -> Metered:
        return self

    def __next__(self) -> Any:
        interp = self._interp
        interp.tick()
        interp.iter_nesting += 1
        try:
            if interp.iter_nesting > MAX_ITER_NESTING:
                raise LimitExceeded(f"iterators nested more than {MAX_ITER_NESTING} deep")
            item = next(self._it)
        finally:
            interp.iter_nesting -= 1
        if type(item) is tuple:  # a tuple C made (zip, enumerate, items): bounded nesting
            for x in item:
                if type(x) is tuple:
                    interp.tuples.depth(item)
                    break
        return item

    def __repr__(self) -> str:
        return "<iterator>"


class HostCall(Internal):
    """A host callable (a builtin, a type, a module function, a tool) handed to
    host code as an argument (`reduce(enumerate, …)`, `sorted(key=str)`,
    `defaultdict(list)`): when host code calls it, the call goes through the
    interpreter, so its arguments are metered and its result checked."""

    __slots__ = ("_fn", "_interp")

    def __init__(self, interp: Compiler, fn: Callable[..., Any]) -> None:
        self._interp = interp
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._interp.tick()
        return self._interp.call(self._fn, args, kwargs)

    def __repr__(self) -> str:
        fn = self._fn
        if isinstance(fn, type):
            return f"<class '{fn.__name__}'>"
        return f"<function {getattr(fn, '__name__', type(fn).__name__)}>"


class ModuleProxy(Internal):
    """An allowed module as the code sees it: only vetted public names."""

    __slots__ = ("_members", "_name")

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        self._name = name
        self._members = members

    def __repr__(self) -> str:
        return f"<module '{self._name}'>"
