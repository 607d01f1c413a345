"""The allow-listed modules, each exposed as a `ModuleProxy` holding only vetted
public names. No proxy hands out a module, so `re.sys`, `random._os` or
`json.codecs` do not exist for the code. Functions that could allocate or loop
without bound are wrapped with checks; `re` runs on the `regex` engine, whose
matches stop at the run's remaining wall time (catastrophic backtracking ends
the run instead of hanging the host)."""

from __future__ import annotations

import base64
import bisect
import collections
import datetime
import difflib
import functools
import heapq
import itertools
import json
import math
import re
import statistics
import string
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import regex

from memagent.sandbox._objects import CheckedFunction, ModuleProxy
from memagent.sandbox.limits import LimitExceeded, SecurityError

if TYPE_CHECKING:
    from memagent.sandbox._api import Compiler


_Check = Callable[[tuple[Any, ...], dict[str, Any]], None]
# Names `_policy` also treats as risky, so a method reached unbound is checked too.
REGEX_DENIED = ("subf", "subfn", "expandf")
REGEX_METHODS = (
    "scanner",
    "match",
    "search",
    "fullmatch",
    "findall",
    "finditer",
    "sub",
    "subn",
    "split",
    "splititer",
)
SEQUENCE_MATCHER_SETTERS = ("set_seqs", "set_seq1", "set_seq2")
_DIFF_CAP = 20_000


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _lgamma_bits(*terms: tuple[int, Any]) -> float:
    total = 0.0
    for sign, n in terms:
        if not isinstance(n, int) or n < 0:
            return 0.0
        try:
            total += sign * math.lgamma(n + 1)
        except OverflowError as exc:
            raise LimitExceeded("argument too large for the sandbox") from exc
    return total / math.log(2)


_MAX_PATTERN = 20_000


def _pattern_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    pattern = _arg(args, kwargs, 0, "pattern", "")
    if isinstance(pattern, (str, bytes)) and len(pattern) > _MAX_PATTERN:
        raise LimitExceeded(f"regular expressions are limited to {_MAX_PATTERN} characters")


def _with_timeout(it: Compiler, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        kwargs["timeout"] = it.remaining_time()
        try:
            return fn(*args, **kwargs)
        except TimeoutError as exc:
            raise LimitExceeded(
                f"time limit of {it.limits.timeout_s:g}s reached in {name}"
            ) from exc

    return run


def _sub_check(it: Compiler, pattern: Any, repl: Any, text: Any, flags: int = 0) -> None:
    """Refuse a substitution whose output could exceed the string limit: the
    worst case first, then (only when that is too big) the real match count."""
    if not isinstance(repl, (str, bytes)) or not isinstance(text, (str, bytes)):
        return
    worst = len(text) + (len(text) + 1) * len(repl)
    if worst <= it.limits.max_str_len:
        return
    compiled = pattern if isinstance(pattern, regex.Pattern) else regex.compile(pattern, flags)
    count = 0
    for _ in compiled.finditer(text, timeout=it.remaining_time()):
        count += 1
        if not count & 1023:
            it.tick()
    it.need_len(len(text) + count * len(repl))


def pattern_method(it: Compiler, obj: Any, name: str) -> Any:
    if name in REGEX_DENIED and isinstance(obj, (regex.Pattern, regex.Match)):
        # format-style templates would reach attributes outside the sandbox's rules
        raise SecurityError(f"{name}() is not available in the sandbox")
    if isinstance(obj, re.Pattern) and name in REGEX_METHODS:
        raise SecurityError("patterns of the host's re engine cannot run here; use the re module")
    if isinstance(obj, regex.Pattern) and name in REGEX_METHODS:
        method = getattr(obj, name)
        run = _with_timeout(it, method, f"re.{name}")
        if name in ("sub", "subn"):

            def checked_sub(*args: Any, **kwargs: Any) -> Any:
                _sub_check(
                    it, obj, _arg(args, kwargs, 0, "repl", ""), _arg(args, kwargs, 1, "string", "")
                )
                return run(*args, **kwargs)

            return CheckedFunction(name, checked_sub, None)
        return CheckedFunction(name, run, None)
    if isinstance(obj, difflib.SequenceMatcher) and name in SEQUENCE_MATCHER_SETTERS:
        method = getattr(obj, name)
        return CheckedFunction(name, method, lambda a, k: _diff_cap(a, k))
    return None


def _diff_cap(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    total = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, (str, list, tuple, bytes)):
            total += len(a)
    if total > _DIFF_CAP:
        raise LimitExceeded(f"difflib inputs are limited to {_DIFF_CAP} items in the sandbox")


def load_module(it: Compiler, name: str) -> ModuleProxy | None:
    builder = _BUILDERS.get(name)
    if builder is None:
        return None
    return ModuleProxy(name, builder(it))


def _fn(name: str, fn: Callable[..., Any], check: _Check | None = None) -> CheckedFunction:
    return CheckedFunction(name, fn, check)


def _json(it: Compiler) -> dict[str, Any]:
    def dumps(obj: Any, **kwargs: Any) -> str:
        indent = kwargs.get("indent")
        if (isinstance(indent, int) and indent > 64) or (
            isinstance(indent, str) and len(indent) > 64
        ):
            raise LimitExceeded("json indent is limited to 64 in the sandbox")
        if kwargs.get("cls") is not None:
            raise LimitExceeded("json.dumps(cls=…) is not supported in the sandbox")
        # every element carries a separator, a newline and its indent: estimate first
        extra = 0
        seps = kwargs.get("separators")
        if isinstance(seps, (tuple, list)):
            extra += sum(len(x) for x in seps if isinstance(x, str))
        if isinstance(indent, str):
            extra += 1 + len(indent) * 32
        elif isinstance(indent, int) and indent > 0:
            extra += 1 + indent * 32  # deeper nesting is refused by json itself
        it.text_size(obj, extra, escape=kwargs.get("ensure_ascii", True) is not False)
        return json.dumps(obj, **kwargs)

    def loads(s: Any, **kwargs: Any) -> Any:
        if kwargs.get("cls") is not None:
            raise LimitExceeded("json.loads(cls=…) is not supported in the sandbox")
        out = json.loads(s, **kwargs)
        it.account_deep(out)
        return out

    return {
        "dumps": _fn("json.dumps", dumps),
        "loads": _fn("json.loads", loads),
        "JSONDecodeError": json.JSONDecodeError,
    }


def _re(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("match", "search", "fullmatch", "findall", "finditer", "split"):
        out[name] = _fn(
            f"re.{name}", _with_timeout(it, getattr(regex, name), f"re.{name}"), _pattern_check
        )
    for name in ("sub", "subn"):
        run = _with_timeout(it, getattr(regex, name), f"re.{name}")

        def checked(*args: Any, _run: Callable[..., Any] = run, **kwargs: Any) -> Any:
            _sub_check(
                it,
                _arg(args, kwargs, 0, "pattern", ""),
                _arg(args, kwargs, 1, "repl", ""),
                _arg(args, kwargs, 2, "string", ""),
                _arg(args, kwargs, 4, "flags", 0),
            )
            return _run(*args, **kwargs)

        out[name] = _fn(f"re.{name}", checked, _pattern_check)
    out["compile"] = _fn("re.compile", regex.compile, _pattern_check)
    out["escape"] = _fn("re.escape", regex.escape)
    out["error"] = regex.error
    for flag in (
        "I",
        "IGNORECASE",
        "M",
        "MULTILINE",
        "S",
        "DOTALL",
        "X",
        "VERBOSE",
        "A",
        "ASCII",
        "U",
        "UNICODE",
    ):
        out[flag] = getattr(regex, flag)
    return out


def _math(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in dir(math):
        if name.startswith("_"):
            continue
        value = getattr(math, name)
        out[name] = _fn(f"math.{name}", value) if callable(value) else value

    def factorial(n: Any) -> Any:
        it.need_bits(_lgamma_bits((1, n)))
        return math.factorial(n)

    def comb(n: Any, k: Any) -> Any:
        if isinstance(n, int) and isinstance(k, int) and 0 <= k <= n:
            it.need_bits(_lgamma_bits((1, n), (-1, k), (-1, n - k)))
        return math.comb(n, k)

    def perm(n: Any, k: Any = None) -> Any:
        if isinstance(n, int) and (k is None or (isinstance(k, int) and 0 <= k <= n)):
            it.need_bits(_lgamma_bits((1, n), (-1, n - (n if k is None else k))))
        return math.perm(n, k)

    def prod(iterable: Any, /, *, start: Any = 1) -> Any:
        import ast

        total = start
        for x in it.metered(iterable):
            total = it.binop(ast.Mult, total, x)
        return total

    def lcm(*ints: Any) -> Any:
        it.need_bits(sum(i.bit_length() for i in ints if isinstance(i, int)))
        return math.lcm(*ints)

    out.update(
        factorial=_fn("math.factorial", factorial),
        comb=_fn("math.comb", comb),
        perm=_fn("math.perm", perm),
        prod=_fn("math.prod", prod),
        lcm=_fn("math.lcm", lcm),
    )
    return out


def _datetime(it: Compiler) -> dict[str, Any]:
    return {
        n: getattr(datetime, n)
        for n in ("date", "datetime", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR")
    }


def _collections(it: Compiler) -> dict[str, Any]:
    def namedtuple(typename: Any, field_names: Any, **kwargs: Any) -> Any:
        kwargs["module"] = "sandbox"
        return collections.namedtuple(typename, field_names, **kwargs)

    return {
        "Counter": collections.Counter,
        "defaultdict": collections.defaultdict,
        "OrderedDict": collections.OrderedDict,
        "deque": collections.deque,
        "ChainMap": collections.ChainMap,
        "namedtuple": _fn("collections.namedtuple", namedtuple),
    }


def _itertools(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in (
        "count",
        "cycle",
        "repeat",
        "accumulate",
        "chain",
        "compress",
        "dropwhile",
        "filterfalse",
        "groupby",
        "islice",
        "pairwise",
        "starmap",
        "takewhile",
        "zip_longest",
        "permutations",
        "combinations",
        "combinations_with_replacement",
    ):
        out[name] = getattr(itertools, name)  # classes: their arguments are metered on call

    def product_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        repeat = kwargs.get("repeat", 1)
        if isinstance(repeat, int):
            it.need_len(max(repeat, 1) * max(len(args), 1), "coll")

    def tee_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        n = _arg(args, kwargs, 1, "n", 2)
        if isinstance(n, int):
            it.need_len(n, "coll")

    out["product"] = _fn("itertools.product", itertools.product, product_check)
    out["tee"] = _fn("itertools.tee", itertools.tee, tee_check)
    return out


def _functools(it: Compiler) -> dict[str, Any]:
    return {
        "reduce": _fn("functools.reduce", functools.reduce),
        "partial": functools.partial,
        "lru_cache": _fn("functools.lru_cache", functools.lru_cache),
        "cache": _fn("functools.cache", functools.cache),
        "cmp_to_key": _fn("functools.cmp_to_key", functools.cmp_to_key),
    }


_STATS_CAP = 200_000
_TEXTWRAP_CAP = 1_000_000


def _stats_cap(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """statistics works in exact fractions (pure Python, not preemptible)."""
    for a in args:
        if hasattr(a, "__len__") and not isinstance(a, str) and len(a) > _STATS_CAP:
            raise LimitExceeded(f"statistics inputs are limited to {_STATS_CAP} items")


def _statistics(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {"StatisticsError": statistics.StatisticsError}
    for name in (
        "mean",
        "fmean",
        "geometric_mean",
        "harmonic_mean",
        "median",
        "median_low",
        "median_high",
        "median_grouped",
        "mode",
        "multimode",
        "pstdev",
        "pvariance",
        "stdev",
        "variance",
        "correlation",
        "covariance",
        "linear_regression",
    ):
        out[name] = _fn(f"statistics.{name}", getattr(statistics, name), _stats_cap)

    def quantiles_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _stats_cap(args, kwargs)
        n = kwargs.get("n", 4)
        if isinstance(n, int):
            it.need_len(n, "coll")

    out["quantiles"] = _fn("statistics.quantiles", statistics.quantiles, quantiles_check)
    return out


def _random(it: Compiler) -> dict[str, Any]:
    rng = it.rng
    out: dict[str, Any] = {}
    for name in (
        "random",
        "uniform",
        "randint",
        "randrange",
        "choice",
        "shuffle",
        "gauss",
        "normalvariate",
        "triangular",
        "betavariate",
        "expovariate",
        "lognormvariate",
        "vonmisesvariate",
        "gammavariate",
        "paretovariate",
        "weibullvariate",
        "seed",
    ):
        out[name] = _fn(f"random.{name}", getattr(rng, name))

    def bits_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if args and isinstance(args[0], int):
            it.need_bits(args[0])

    def bytes_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if args and isinstance(args[0], int):
            it.need_len(args[0])

    def numbers(name: str, values: Any) -> list[Any] | None:
        """Weights and counts, collected first (metered, within the collection
        limit) and numbers only: `random` accumulates them in host code, and
        accumulating strings from an endless iterator grew without bound."""
        if values is None:
            return None
        items = it.collect(values)
        if not all(type(x) in (int, float, bool) for x in items):
            raise TypeError(f"{name} must be numbers")
        return items

    def choices(
        population: Any, weights: Any = None, *, cum_weights: Any = None, k: Any = 1
    ) -> Any:
        if isinstance(k, int):
            it.need_len(k, "coll")
        return rng.choices(
            population,
            numbers("weights", weights),
            cum_weights=numbers("cum_weights", cum_weights),
            k=k,
        )

    def sample(population: Any, k: Any, *, counts: Any = None) -> Any:
        if isinstance(k, int):
            it.need_len(k, "coll")
        return rng.sample(population, k, counts=numbers("counts", counts))

    out["choices"] = _fn("random.choices", choices)
    out["sample"] = _fn("random.sample", sample)
    out["getrandbits"] = _fn("random.getrandbits", rng.getrandbits, bits_check)
    out["randbytes"] = _fn("random.randbytes", rng.randbytes, bytes_check)
    return out


def _textwrap(it: Compiler) -> dict[str, Any]:
    def indent_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        text = _arg(args, kwargs, 0, "text", "")
        prefix = _arg(args, kwargs, 1, "prefix", "")
        if isinstance(text, str) and isinstance(prefix, str):
            it.need_len(len(text) + (text.count("\n") + 1) * len(prefix))

    def wrap_check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        text = _arg(args, kwargs, 0, "text", "")
        if isinstance(text, str) and len(text) > _TEXTWRAP_CAP:
            raise LimitExceeded(f"textwrap inputs are limited to {_TEXTWRAP_CAP} characters")
        extra = sum(
            len(v) for k, v in kwargs.items() if k.endswith("indent") and isinstance(v, str)
        )
        extra += len(kwargs.get("placeholder", "") or "")
        if isinstance(text, str):
            it.need_len(len(text) + (len(text) + 1) * extra)

    return {
        "dedent": _fn("textwrap.dedent", textwrap.dedent),
        "indent": _fn("textwrap.indent", textwrap.indent, indent_check),
        "wrap": _fn("textwrap.wrap", textwrap.wrap, wrap_check),
        "fill": _fn("textwrap.fill", textwrap.fill, wrap_check),
        "shorten": _fn("textwrap.shorten", textwrap.shorten, wrap_check),
    }


def _string(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {
        n: getattr(string, n)
        for n in (
            "ascii_letters",
            "ascii_lowercase",
            "ascii_uppercase",
            "digits",
            "hexdigits",
            "octdigits",
            "punctuation",
            "printable",
            "whitespace",
        )
    }
    out["capwords"] = _fn("string.capwords", string.capwords)

    class Template(string.Template):
        """`string.Template` whose substitutions are sized before they run."""

        def _estimate(self, args: tuple[Any, ...], kws: dict[str, Any]) -> None:
            values = list(kws.values())
            for mapping in args:
                if isinstance(mapping, dict):
                    values.extend(mapping.values())
            longest = max((it.text_size(v) for v in values), default=0)
            text = self.template if isinstance(self.template, str) else ""
            it.need_len(len(text) + text.count(self.delimiter) * longest)

        def substitute(self, *args: Any, **kws: Any) -> str:
            self._estimate(args, kws)
            return super().substitute(*args, **kws)

        def safe_substitute(self, *args: Any, **kws: Any) -> str:
            self._estimate(args, kws)
            return super().safe_substitute(*args, **kws)

    out["Template"] = Template
    return out


def _difflib(it: Compiler) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("SequenceMatcher", "get_close_matches", "unified_diff", "context_diff", "ndiff"):
        out[name] = _fn(f"difflib.{name}", getattr(difflib, name), _diff_cap)
    return out


def _bisect(it: Compiler) -> dict[str, Any]:
    return {
        n: _fn(f"bisect.{n}", getattr(bisect, n))
        for n in ("bisect", "bisect_left", "bisect_right", "insort", "insort_left", "insort_right")
    }


def _heapq(it: Compiler) -> dict[str, Any]:
    return {
        n: _fn(f"heapq.{n}", getattr(heapq, n))
        for n in (
            "heappush",
            "heappop",
            "heapify",
            "heappushpop",
            "heapreplace",
            "nlargest",
            "nsmallest",
            "merge",
        )
    }


def _base64(it: Compiler) -> dict[str, Any]:
    return {
        n: _fn(f"base64.{n}", getattr(base64, n))
        for n in (
            "b64encode",
            "b64decode",
            "urlsafe_b64encode",
            "urlsafe_b64decode",
            "b32encode",
            "b32decode",
            "b16encode",
            "b16decode",
        )
    }


_BUILDERS: dict[str, Callable[[Compiler], dict[str, Any]]] = {
    "json": _json,
    "re": _re,
    "math": _math,
    "datetime": _datetime,
    "collections": _collections,
    "itertools": _itertools,
    "functools": _functools,
    "statistics": _statistics,
    "random": _random,
    "textwrap": _textwrap,
    "string": _string,
    "difflib": _difflib,
    "bisect": _bisect,
    "heapq": _heapq,
    "base64": _base64,
}
ALLOWED_MODULES = tuple(_BUILDERS)
"""The modules code may import: exactly those with a vetted member table above
(one source of truth: a module is allowed by giving it a builder)."""
