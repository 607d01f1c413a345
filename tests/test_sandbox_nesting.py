"""Data nested too deep for C (`sandbox._nesting`): hashing, comparing or printing
a container nested 200,000 deep is `LimitExceeded` in the interpreter, never a
worker killed by a C stack overflow (CPython hashes tuples recursively in C
with no depth check). Run in pooled workers, so a regression is a crashed
worker here, not a crashed test process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memagent.sandbox import IsolatedSession, Limits, Session, WorkerPool
from memagent.sandbox._nesting import MAX_DATA_DEPTH, TupleDepths
from memagent.sandbox.limits import LimitExceeded

DEEP = 200_000
BUILDS = {
    "display": f"t = ()\nfor i in range({DEEP}):\n    t = (t,)\n",
    "zip": f"t = ()\nfor i in range({DEEP}):\n    t = next(zip([t]))\n",
    "tuple()": f"t = ()\nfor i in range({DEEP}):\n    t = tuple([t])\n",
    "items": f"t = ()\nfor i in range({DEEP}):\n    t = next(iter({{1: t}}.items()))\n",
    "enumerate": f"t = ()\nfor i in range({DEEP}):\n    t = next(enumerate([t]))\n",
    "popitem": f"t = ()\nfor i in range({DEEP}):\n    t = {{1: t}}.popitem()\n",
}
USES = [
    "hash(t)",
    "{t: 1}",
    "{t}",
    "d = {}\nd[t] = 1",
    "d = {}\nd[0] = 1\nd[t]",
    "t in {1: 2}",
    "t in {1, 2}",
    "set([t])",
    "frozenset([t])",
    "dict([(t, 1)])",
    "{x: 1 for x in [t]}",
    "{x for x in [t]}",
    "s = set()\ns.discard(t)",
    "d = {}\nd.setdefault(t, 1)",
    "t == t",
    "(t,) == (t,)",
]
LISTS = f"l = []\nm = []\nfor i in range({DEEP}):\n    l = [l]\n    m = [m]\n"
DICTS = f"d = {{}}\nfor i in range({DEEP}):\n    d = {{'a': d}}\n"


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(1)
    yield p
    p.close()


def _run(pool: WorkerPool, code: str) -> str:
    session = IsolatedSession(limits=Limits(timeout_s=120), pool=pool)
    try:
        return session.run(code).error or ""
    finally:
        session.close()


CASES = [("display", use) for use in USES] + [
    (build, use)
    for build in BUILDS
    if build != "display"
    for use in ("hash(t)", "{t: 1}", "set([t])", "{}.get(t)", "s = set()\ns.add(t)")
]


@pytest.mark.parametrize(("build", "use"), CASES)
def test_a_deep_tuple_is_refused_before_c_hashes_or_compares_it(
    pool: WorkerPool, build: str, use: str
) -> None:
    error = _run(pool, BUILDS[build] + use)
    assert error.startswith("LimitExceeded:") and "nested" in error, error


@pytest.mark.parametrize(
    "code",
    [
        LISTS + "l == m",
        LISTS + "l == l",
        LISTS + "repr(l)",
        LISTS + "print(l)",
        LISTS + "f'{l}'",
        DICTS + "d == d",
        DICTS + "str(d)",
    ],
)
def test_deep_lists_and_dicts_are_limit_exceeded_on_compare_and_repr(
    pool: WorkerPool, code: str
) -> None:
    error = _run(pool, code)
    assert error.startswith("LimitExceeded:") and "nested" in error, error


def test_ordinary_nesting_still_works() -> None:
    s = Session()
    r = s.run(
        "t = ()\nfor i in range(900):\n    t = (t,)\n"
        "d = {t: 1, ((1, 2), 3): 2}\ns = {t}\n"
        "[len(d), t in d, t in s, hash(t) == hash(t), d[((1, 2), 3)], (t,) == (t,)]"
    )
    assert r.error is None and r.result == [2, True, True, True, 2, True], r


def test_tuple_depths_are_remembered_and_bounded() -> None:
    depths = TupleDepths()
    t: tuple[object, ...] = ()
    for _ in range(MAX_DATA_DEPTH - 1):
        t = (t,)
        assert depths.depth(t) <= MAX_DATA_DEPTH  # one step per level (memo)
    assert depths.depth(t) == MAX_DATA_DEPTH
    with pytest.raises(LimitExceeded, match="nested more than"):
        depths.depth((t,))
    wide = (*range(10_000), (1, (2, (3,))))
    assert depths.depth(wide) == 4
    fresh = TupleDepths()  # no memo: a deep chain is refused after the limit's levels
    deep: tuple[object, ...] = ()
    for _ in range(5 * MAX_DATA_DEPTH):
        deep = (deep,)
    with pytest.raises(LimitExceeded):
        fresh.depth(deep)
