"""Attribute access of the code: the policy on what may be read, set and
deleted (dunders, private names, frames and modules), model instances and
classes, `super()`. Functions of the compiler, bound as `Interpreter` methods."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._builtins import risky_method
from memagent.sandbox._objects import (
    BoundMethod,
    CheckedFunction,
    HostFunction,
    Internal,
    ModuleProxy,
    SandboxClass,
    SandboxException,
    SandboxFunction,
    SandboxInstance,
)
from memagent.sandbox._policy import (
    _DENIED_ATTR_PREFIXES,
    _DENIED_ATTRS,
    _FAST_TYPES,
    _NAMEDTUPLE_API,
    _RISKY_NAMES,
    ALLOWED_DUNDERS,
    _Super,
    is_dunder,
)
from memagent.sandbox.limits import SecurityError


def get_attr(it: Compiler, obj: Any, name: str) -> Any:
    if type(obj) in _FAST_TYPES and name[:1] != "_" and name not in _RISKY_NAMES:
        return getattr(obj, name)
    if not isinstance(name, str):
        raise TypeError("attribute name must be string")
    if isinstance(obj, Internal):
        return it._internal_getattr(obj, name)
    if isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
        if is_dunder(name):
            raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
        if name in obj._sandbox_attrs:
            return obj._sandbox_attrs[name]
        found, value = obj._sandbox_cls.lookup(name)
        if found:
            return _bind(it, value, obj, obj._sandbox_cls)
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
    special = risky_method(it, obj, name)
    if special is not None:
        return special
    if isinstance(obj, type) and name in _RISKY_NAMES:
        return _unbound_checked(it, obj, name)
    value = getattr(obj, name)
    if isinstance(value, ModuleType):
        raise SecurityError(f"attribute '{name}' leads to a module; not allowed")
    if isinstance(value, type) and issubclass(value, type):
        raise SecurityError(f"attribute '{name}' leads to a metaclass; not allowed")
    return value


def _unbound_checked(it: Compiler, cls: type, name: str) -> CheckedFunction:
    getattr(cls, name)  # AttributeError as usual when the type has no such method

    def unbound(self_obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(self_obj, cls):
            raise TypeError(f"descriptor '{name}' requires a '{cls.__name__}' object")
        return it.call(it.getattr(self_obj, name), args, kwargs)

    return CheckedFunction(f"{cls.__name__}.{name}", unbound, None)


def _classmethod(value: classmethod[Any, Any, Any], cls: SandboxClass) -> BoundMethod:
    func = value.__func__
    if not isinstance(func, SandboxFunction):
        raise TypeError("classmethod must wrap a function defined in the sandbox")
    return BoundMethod(func, cls)


def _bind(it: Compiler, value: Any, obj: Any, cls: SandboxClass) -> Any:
    if isinstance(value, SandboxFunction):
        return BoundMethod(value, obj)
    if isinstance(value, staticmethod):
        return value.__func__
    if isinstance(value, classmethod):
        return _classmethod(value, cls)
    if isinstance(value, property):
        if value.fget is None:
            raise AttributeError("unreadable property")
        return it.call(value.fget, (obj,), {})
    return value


def _internal_getattr(it: Compiler, obj: Internal, name: str) -> Any:
    if isinstance(obj, _Super):
        if is_dunder(name) and name not in ALLOWED_DUNDERS:
            raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
        for base in obj._owner._bases:
            found, value = base.lookup(name)
            if found:
                return _bind(it, value, obj._self, base)
        if name == "__init__":
            self_obj = obj._self

            def base_init(*args: Any) -> None:
                if isinstance(self_obj, BaseException):
                    self_obj.args = args

            return HostFunction("__init__", base_init)
        raise AttributeError(f"'super' object has no attribute '{name}'")
    if is_dunder(name):
        raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
    if isinstance(obj, SandboxInstance):
        if name in obj._attrs:
            return obj._attrs[name]
        found, value = obj._cls.lookup(name)
        if found:
            return _bind(it, value, obj, obj._cls)
        raise AttributeError(f"'{obj._cls._name}' object has no attribute '{name}'")
    if isinstance(obj, SandboxClass):
        found, value = obj.lookup(name)
        if found:
            if isinstance(value, staticmethod):
                return value.__func__
            if isinstance(value, classmethod):
                return _classmethod(value, obj)
            return value
        raise AttributeError(f"type object '{obj._name}' has no attribute '{name}'")
    if isinstance(obj, ModuleProxy):
        if name.startswith("_") or name not in obj._members:
            raise SecurityError(
                f"module '{obj._name}' has no attribute '{name}' available in the sandbox"
            )
        return obj._members[name]
    raise SecurityError(f"attributes of {obj!r} are not accessible")


def set_attr(it: Compiler, obj: Any, name: str, value: Any) -> None:
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


def del_attr(it: Compiler, obj: Any, name: str) -> None:
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
