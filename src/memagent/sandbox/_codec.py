"""Values as tagged JSON: what a saved session keeps, and what crosses the pipe
to a sandbox worker process. Data only (None, bool, int, float, str, bytes and
list/tuple/dict/set/frozenset of them); nothing is pickled or evaluated."""

from __future__ import annotations

import base64
import math
from typing import Any

from memagent.sandbox._objects import ModuleProxy, SandboxClass, SandboxFunction

STATE_VERSION = 1
_MAX_DEPTH = 100


class Unencodable(Exception):
    pass


def encode_value(value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise Unencodable
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if type(value) is int else int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if type(value) is list:
        return [encode_value(v, depth + 1) for v in value]
    if type(value) is tuple:
        return {"$tuple": [encode_value(v, depth + 1) for v in value]}
    if type(value) is set:
        return {"$set": [encode_value(v, depth + 1) for v in value]}
    if type(value) is frozenset:
        return {"$frozenset": [encode_value(v, depth + 1) for v in value]}
    if type(value) is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if type(value) is dict:
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode_value(v, depth + 1) for k, v in value.items()}
        return {
            "$dict": [
                [encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()
            ]
        }
    raise Unencodable


def decode_value(data: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode_value(v, depth + 1) for v in data]
    if not isinstance(data, dict):
        raise ValueError(f"unexpected {type(data).__name__}")
    if len(data) == 1:
        ((tag, inner),) = data.items()
        if tag == "$tuple":
            return tuple(decode_value(v, depth + 1) for v in inner)
        if tag == "$set":
            return {decode_value(v, depth + 1) for v in inner}
        if tag == "$frozenset":
            return frozenset(decode_value(v, depth + 1) for v in inner)
        if tag == "$bytes":
            return base64.b64decode(inner, validate=True)
        if tag == "$float":
            if inner not in ("inf", "-inf", "nan"):
                raise ValueError(f"bad float {inner!r}")
            return float(inner)
        if tag == "$dict":
            return {decode_value(k, depth + 1): decode_value(v, depth + 1) for k, v in inner}
    if any(k.startswith("$") for k in data):
        raise ValueError(f"unknown tag in {sorted(data)[:3]}")
    return {k: decode_value(v, depth + 1) for k, v in data.items()}


def snapshot(session: Any) -> tuple[dict[str, Any], list[str]]:
    """The JSON document of a session's state, and the names it could not keep."""
    variables: dict[str, Any] = {}
    skipped: list[str] = []
    defined = {n for key, _ in session.definitions for n in key.split(",")}
    for name, value in session.variables.items():
        if name in defined and isinstance(value, (SandboxFunction, SandboxClass, ModuleProxy)):
            continue
        try:
            variables[name] = encode_value(value)
        except (Unencodable, RecursionError):
            skipped.append(name)
    doc = {
        "version": STATE_VERSION,
        "variables": variables,
        "definitions": [
            {"names": k, "source": s}
            for k, s in session.definitions
            if any(n not in variables for n in k.split(","))
        ],
    }
    return doc, skipped
