"""Each limit ends the run with a clear error, before the work is done."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from memagent.core import InvalidInput
from memagent.sandbox import Limits, Session


def run(code: str, **limits: float) -> str:
    r = Session(limits=Limits(**limits)).run(code)  # type: ignore[arg-type]
    assert r.error is not None, r
    return r.error


def test_operation_limit() -> None:
    err = run("while True:\n    x = 1", max_operations=10_000)
    assert err == "LimitExceeded: operation limit of 10000 reached (line 2)"


def test_wall_time_limit_checked_by_interpreter() -> None:
    started = time.monotonic()
    err = run("while True:\n    pass", timeout_s=0.3, max_operations=10**9)
    assert "time limit of 0.3s" in err
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "code",
    [
        "'a' * 10**10",
        "b'x' * 10**10",
        "[0] * 10**9",
        "(1,) * 10**9",
        "10 ** 10 ** 8",
        "1 << 10**8",
        "(2**60000) * (2**60000)",
        "s = 'x' * 6 * 10**6\ns + s",
        "'x'.zfill(10**9)",
        "'{:>1000000000}'.format(1)",
        "f'{1:.1000000000f}'",
        "'%1000000000d' % 1",
        "bytes(10**10)",
        "('ab' * 1000).replace('', 'x' * 100000)",
        "import random\nrandom.choices([1], k=10**9)",
        "import math\nmath.comb(10**6, 5 * 10**5)",
        "import itertools\nlist(itertools.product([1, 2], repeat=10**9))",
        "import textwrap\ntextwrap.indent('a\\n' * 1000, 'p' * 100000)",
        "x = ['y' * 10**6] * 100\nprint(x)",
        "import json\njson.dumps(['y' * 10**6] * 100)",
        "x = [1]\nfor _ in range(40):\n    x.extend(x)",
        "int('9' * 100000)",
        "pow(7, 2**100000, 2**100000 + 1)",
    ],
)
def test_size_limits_refuse_before_allocating(code: str) -> None:
    err = run(code, max_str_len=10_000_000, max_collection_len=2_000_000, max_int_bits=100_000)
    assert err.startswith("LimitExceeded"), err


@pytest.mark.parametrize(
    "code",
    [
        "sum(range(10**12))",
        "sorted(range(10**12))",
        "list(range(10**12))",
        "max(range(10**12))",
        "import collections\ncollections.Counter(range(10**12))",
        "set(range(10**12))",
        "import itertools\nsum(itertools.repeat(1))",
        "import functools, itertools\nfunctools.reduce(max, itertools.count())",
        "dict.fromkeys(range(10**12))",
    ],
)
def test_c_level_loops_are_metered(code: str) -> None:
    err = run(code, max_operations=200_000)
    assert err.startswith("LimitExceeded"), err


def test_recursion_limit() -> None:
    err = run("def f(n):\n    return f(n + 1)\nf(0)", max_recursion=50)
    assert err == "LimitExceeded: recursion depth of 50 reached (line 2)"


def test_recursion_within_limit_works() -> None:
    r = Session(limits=Limits(max_recursion=300)).run(
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\ndepth(250)"
    )
    assert (r.error, r.result) == (None, 250)


def test_output_truncated_with_note() -> None:
    r = Session(limits=Limits(max_output_chars=100)).run(
        "for i in range(1000):\n    print(i)\n'end'"
    )
    assert r.error is None
    assert r.result == "end"
    assert r.output.endswith("[output truncated at 100 characters]")
    assert len(r.output) < 200


def test_limits_are_per_run() -> None:
    s = Session(limits=Limits(max_operations=5_000))
    for _ in range(5):
        r = s.run("t = 0\nfor i in range(300):\n    t += i\nt")
        assert r.error is None


def test_oversized_source_is_refused() -> None:
    with pytest.raises(InvalidInput):
        Session(limits=Limits(max_source_bytes=100)).run("x = 1\n" * 100)


def test_non_text_source_is_refused() -> None:
    with pytest.raises(InvalidInput):
        Session().run(b"x = 1")  # type: ignore[arg-type]


def test_deeply_nested_source_is_an_error_not_a_crash() -> None:
    r = Session().run("x = " + "[" * 5000 + "]" * 5000)
    assert r.error is not None


@pytest.mark.parametrize("bad", [{"max_operations": 0}, {"timeout_s": -1}, {"nope": 1}])
def test_invalid_limits_are_rejected(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        Limits(**bad)  # type: ignore[arg-type]


def test_cumulative_memory_budget() -> None:
    err = run("keep = []\nfor i in range(1000):\n    keep.append([0] * 1_000_000)")
    assert "memory budget" in err


def test_print_of_many_big_strings_is_bounded() -> None:
    r = Session(limits=Limits(max_output_chars=1000)).run(
        "big = 'x' * 5_000_000\nprint(*[big] * 1000)\n'ok'"
    )
    assert r.error is None and r.result == "ok"
    assert len(r.output) < 2000


@pytest.mark.parametrize(
    "code", ["import re\nre.compile('x' * 30_000)", "import re\nre.search('x' * 30_000, 'x')"]
)
def test_regex_pattern_size_is_limited(code: str) -> None:
    assert "limited to 20000 characters" in run(code)


@pytest.mark.parametrize(
    "code",
    [
        "import statistics\nstatistics.mean([1.5] * 300_000)",
        "import textwrap\ntextwrap.wrap('a ' * 600_000)",
        "import difflib\ndifflib.SequenceMatcher(None, 'a' * 15_000, 'b' * 15_000)",
    ],
)
def test_slow_pure_python_library_inputs_are_capped(code: str) -> None:
    assert "limited to" in run(code)


@pytest.mark.parametrize(
    "code", ["x = 'y' * 5_000_000\n[x] * 100", "FINAL(['y' * 5_000_000] * 100)"]
)
def test_result_too_large_to_render_is_refused(code: str) -> None:
    r = Session().run(code)
    assert r.result is None
    assert r.error is not None and r.error.startswith("LimitExceeded: text of more than")
