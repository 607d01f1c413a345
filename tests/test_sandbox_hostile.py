"""The reproductions of issue 16, each a prompt, clear error and a living host."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.sandbox import Limits, Session


def error_of(code: str, **limits: float) -> str:
    r = Session(limits=Limits(**limits)).run(code)  # type: ignore[arg-type]
    assert r.error is not None, r
    assert r.result is None
    return r.error


@pytest.mark.parametrize(
    "code", ["2**20000", "[1, {'a': (2**20000,)}]", "FINAL(2**20000)", "str(2**20000)"]
)
def test_int_to_str_digit_limit_is_a_sandbox_error(code: str) -> None:
    assert "integer string conversion" in error_of(code)


def test_int_to_str_through_the_cli_is_json_not_a_traceback() -> None:
    out = CliRunner().invoke(app, ["sandbox", "run"], input="2**20000\n")
    assert out.exit_code == 1
    body = json.loads(out.stdout)
    assert body["result"] is None
    assert body["error"].startswith("ValueError: Exceeds the limit")


def test_big_int_within_the_digit_limit_still_renders() -> None:
    r = Session().run("2**14000")
    assert r.error is None and r.to_json()["result"] == str(2**14000)


# --------------------------------------------------------------- limits that hold

QUICK = {"timeout_s": 1.0}


@pytest.mark.parametrize(
    "code",
    [
        # C-level iterator nesting: a segfault in the host before issue 16.
        "import functools\nnext(functools.reduce(enumerate, [0]*1000000, iter([1])))",
        "it = iter([1])\nfor _ in range(100000):\n    it = enumerate(it)\nnext(it)",
        "import itertools\nit = iter([1])\nfor _ in range(100000):\n"
        "    it = itertools.chain.from_iterable([it])\nnext(it)",
        "import functools\n"
        "next(functools.reduce(lambda a, b: map(abs, a), range(100000), iter([1])))",
    ],
)
def test_nested_host_iterators_are_bounded(code: str) -> None:
    err = error_of(code, **QUICK)
    assert err.startswith("LimitExceeded"), err


@pytest.mark.parametrize(
    "code",
    [
        "import collections, itertools\ncollections.deque(iterable=itertools.count(), maxlen=0)",
        "import difflib, itertools\n"
        "difflib.get_close_matches('a', possibilities=itertools.repeat('b'))",
        "import itertools\nbytes(itertools.repeat(0))",
        "import itertools\nbytearray(itertools.cycle([1]))",
        "import random, itertools\nrandom.choices([1], weights=itertools.count())",
        "import itertools\nitertools.combinations(iterable=itertools.count(), r=2)",
        "import collections\ncollections.deque(iterable=range(10**12), maxlen=0)",
        "import itertools\nlist(itertools.chain.from_iterable([range(10**12)]))",
        "import statistics\nstatistics.fmean(**{'data': range(10**12)})",
        "import heapq\nheapq.nlargest(2, *[range(10**12)])",
        "import itertools\nstr(bytes(x % 256 for x in range(10**12)))",
        "max([range(10**12)], key=sum)",
        "import itertools\ndict.fromkeys(itertools.count())",
        "import collections, itertools\ncollections.Counter(itertools.repeat('a'))",
    ],
)
def test_host_code_gets_only_metered_iterables(code: str) -> None:
    err = error_of(code, max_operations=200_000, **QUICK)
    assert err.startswith(("LimitExceeded", "SecurityError")), err


@pytest.mark.parametrize(
    "code",
    [
        "import json\njson.dumps([0]*100000, separators=(','*5000, ':'))",
        "import json\njson.dumps({'a': [0]*100000}, indent=60)",
        "import string\nstring.Template('$a'*100000).substitute(a='x'*5000)",
        "import string\nstring.Template('$a'*100000).safe_substitute({'a': 'x'*5000})",
        "str(dict.fromkeys(range(100000), 'x'*5000).values())",
        "repr(dict.fromkeys(range(100000), 'x'*5000).items())",
        "x = ['y'*5000] * 100000\n', '.join(map(str, x))",
        "'{}'.format(['y'*5000] * 100000)",
        "f\"{dict.fromkeys(range(100000), 'x'*5000).values()!r}\"",
        "import json\njson.dumps(['\\x00' * 1000] * 5000)",
    ],
)
def test_amplifying_host_results_are_estimated_before_they_run(code: str) -> None:
    err = error_of(code, **QUICK)
    assert err.startswith("LimitExceeded"), err


@pytest.mark.parametrize(
    "code",
    [
        "kept = []\nfor i in range(100000):\n    kept.append('x' * 65000)",
        "kept = []\nfor i in range(100000):\n    kept.append(str(i) * 20000)",
        "import json\ntext = json.dumps([[0] * 1000] * 300)\n"
        "kept = [json.loads(text) for _ in range(300)]",
        "kept = []\nfor i in range(100000):\n    kept.append([i] * 10000)",
    ],
)
def test_every_allocation_counts_toward_the_memory_budget(code: str) -> None:
    err = error_of(code, max_total_alloc=200_000_000, max_operations=10**8, timeout_s=20)
    assert "memory budget" in err, err
